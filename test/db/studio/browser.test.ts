import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteConversationStore, SqliteStudioSource } from 'colloquy/sqlite';
import { chromium } from 'playwright-core';
import type { BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStudio } from '../../../db/studio/server.js';
import type { RunningStudio } from '../../../db/studio/server.js';
import { createStudioDb, HOSTILE, turn } from '../../fixtures/studio-db.js';

/**
 * The studio in a real browser: Debian's Chromium (`apt-get install chromium`; `.ci/run`
 * installs it), driven by playwright-core, never a downloaded browser. Without it the suite
 * is skipped on a workstation and fails under CI=true. `STUDIO_SCREENSHOT=<file.png>` also
 * saves the transcript screen (docs/studio.png).
 */
const CHROMIUM = '/usr/bin/chromium';
const present = existsSync(CHROMIUM);
if (!present && process.env.CI === 'true') {
  throw new Error(`${CHROMIUM} is missing: install it with apt-get install -y chromium`);
}

const general = 'slack:T0ACME:C0GENERAL';

const skipReason = `${CHROMIUM} is missing (apt-get install -y chromium; .ci/run installs it)`;

describe('studio in Chromium', { skip: !present, meta: { skipReason } }, () => {
  let dir: string;
  let path: string;
  let source: SqliteStudioSource;
  let studio: RunningStudio;
  let context: BrowserContext;
  let page: Page;
  const dialogs: string[] = [];
  const cspViolations: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-studio-browser-'));
    path = join(dir, 'studio.db');
    await createStudioDb(path, { runs: true });
    source = SqliteStudioSource.open(path);
    studio = await startStudio({ source, port: 0, pollMs: 100 });
    context = await chromium.launchPersistentContext(join(dir, 'profile'), {
      executablePath: CHROMIUM,
      headless: true,
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-background-networking',
        '--disable-component-update',
        '--no-first-run',
        '--disable-sync',
      ],
      viewport: { width: 1000, height: 1000 },
    });
    page = context.pages()[0] ?? (await context.newPage());
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('console', (message) => {
      if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
    });
  }, 60_000);

  afterAll(async () => {
    await context?.close();
    await studio?.close();
    await source?.close();
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it('opens with the printed address and keeps the token out of the location', async () => {
    await page.goto(studio.url);
    expect(page.url()).toBe(studio.url.replace(/\?token=.*/, ''));
    await expect.poll(() => page.locator('h1').textContent()).toBe('Conversations');
  });

  it('lists each conversation with its people and newest turn, a DM named by the person, as text', async () => {
    const row = (name: string) =>
      page.locator('table.list tr', { has: page.getByRole('link', { name, exact: true }) });
    const dm = row('DM with Dave');
    expect(await dm.locator('.people').innerText()).toBe('Dave, Billing (agent), Support (agent)');
    expect(await dm.locator('td.last').innerText()).toBe(
      'Support: Your refund for order 1042 was sent this morning.',
    );
    const channel = row('#general');
    expect(await channel.locator('td.last').innerText()).toBe(`${HOSTILE.name}: ${HOSTILE.script}`);
    expect(await channel.locator('.people').innerText()).toContain('Alice Martin');
    expect(await page.locator('main script, main b').count()).toBe(0);
  });

  it('finds a conversation by search and opens the transcript at the hit', async () => {
    await page.getByLabel('search').fill('invoice march');
    await page.getByRole('button', { name: 'Show' }).click();
    const hit = page.locator('a.hit', { hasText: 'is attached' });
    await expect.poll(() => hit.locator('mark').first().textContent()).toBe('invoice');
    await hit.click();
    await expect.poll(() => page.locator('h1').textContent()).toBe('#general');
    await expect
      .poll(() => page.locator('.turn:target > .text').textContent())
      .toBe('The invoice for March is attached');
  });

  it('shows the edit with its earlier text and the deleted turn as a tombstone', async () => {
    const edited = page.locator('.turn', { hasText: 'The invoice for March is attached' });
    await edited.locator('details.revisions summary').click();
    expect(await edited.locator('details.revisions').innerText()).toContain(
      'The invoce for March is attached',
    );
    const deleted = page.locator('.turn.deleted');
    expect(await deleted.locator('.tombstone').innerText()).toContain('message deleted');
    expect(await deleted.locator('details.was').getAttribute('open')).toBeNull();
  });

  it('keeps hostile content as text', async () => {
    await page.goto(studio.url.replace(/\?token=.*/, `c/${encodeURIComponent(general)}`));
    await expect.poll(() => page.locator('.text', { hasText: HOSTILE.img }).count()).toBe(1);
    expect(await page.locator('.text', { hasText: HOSTILE.script }).count()).toBe(1);
    expect(await page.locator('.speaker', { hasText: HOSTILE.name }).first().isVisible()).toBe(
      true,
    );
    expect(await page.locator('main img, main script, main b').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('shows a turn a bot commits to the same file, and an edit, without a reload, as text', async () => {
    await expect
      .poll(() => page.locator('#live-status').getAttribute('class'))
      .toContain('connected');
    const marker = await page.evaluate(() => {
      (globalThis as unknown as { notReloaded: boolean }).notReloaded = true;
      return true;
    });
    const writer = new SqliteConversationStore({
      path,
    });
    try {
      await writer.append(
        turn(
          general,
          'slack:U0BOB',
          'Bob Chen',
          `live ${HOSTILE.img} arrived`,
          '2026-03-16T12:30:00.000Z',
          '1773664200.000000',
        ),
      );
    } finally {
      await writer.close();
    }
    const fresh = page.locator('#turns .turn', { hasText: `live ${HOSTILE.img} arrived` });
    await expect.poll(() => fresh.count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator('#live-status').textContent()).toBe('live: 1 new turn');

    // An edit of a turn on screen replaces it in place
    const editor = new SqliteConversationStore({
      path,
    });
    try {
      await editor.recordEdit({
        channelType: 'slack',
        channelId: 'C0GENERAL',
        messageId: `${Date.parse('2026-03-16T10:00:00Z') / 1000}.000000`,
        content: 'Lunch at one instead?',
        editedAt: '2026-03-16T12:31:00.000Z',
      });
    } finally {
      await editor.close();
    }
    const edited = page.locator('#turns .turn', { hasText: 'Lunch at one instead?' });
    await expect
      .poll(() => edited.locator('.mark').textContent(), { timeout: 10_000 })
      .toBe('edited');
    expect(
      await page.evaluate(() => (globalThis as unknown as { notReloaded?: boolean }).notReloaded),
    ).toBe(marker);
    expect(await page.locator('main img').count()).toBe(0);
    expect(dialogs).toEqual([]);
    if (process.env.STUDIO_SCREENSHOT) {
      const edited = page.locator('.turn', { hasText: 'The invoice for March is attached' });
      await edited.locator('details.revisions summary').click();
      await edited.evaluate((element) => element.scrollIntoView({ block: 'start' }));
      await page.screenshot({ path: process.env.STUDIO_SCREENSHOT });
    }
  });

  it('draws the overview charts with titled axes and numbered ticks, inside the chart', async () => {
    await page.goto(studio.url.replace(/\?token=.*/, 'overview'));
    const chart = page.locator('figure.chart').first();
    expect(await chart.locator('text.axis-title').allTextContents()).toEqual([
      'day (UTC)',
      'turns',
    ]);
    const yTicks = await chart.locator('text.y-tick').allTextContents();
    expect(yTicks[0]).toBe('0');
    expect(yTicks.map(Number)).toEqual([...yTicks.map(Number)].sort((a, b) => a - b));
    expect(await chart.locator('text.x-tick').last().textContent()).toBe('2026-03-16');
    const box = (await chart.locator('svg').boundingBox())!;
    for (const label of await chart.locator('svg text').all()) {
      const at = (await label.boundingBox())!;
      expect(at.x).toBeGreaterThanOrEqual(box.x - 1);
      expect(at.x + at.width).toBeLessThanOrEqual(box.x + box.width + 1);
      expect(at.y + at.height).toBeLessThanOrEqual(box.y + box.height + 1);
    }
  });

  it('runs every page without a Content-Security-Policy violation', async () => {
    for (const where of ['', 'runs', 'overview', 'people']) {
      await page.goto(studio.url.replace(/\?token=.*/, where));
      await page.locator('h1').waitFor();
    }
    expect(cspViolations).toEqual([]);
  });
});
