import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SqliteConversationStore, SqliteStudioSource } from 'colloquy/sqlite';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createStudioApp, startStudio } from '../../../db/studio/server.js';
import { createStudioDb, turn } from '../../fixtures/studio-db.js';

const dir = mkdtempSync(join(tmpdir(), 'colloquy-studio-'));
const general = 'slack:T0ACME:C0GENERAL';
const enc = encodeURIComponent;

afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The app on a real file, and a request helper that carries the token as a cookie. */
async function studioOn(name: string, options: { runs?: boolean; write?: boolean } = {}) {
  const path = join(dir, name);
  const ids = await createStudioDb(path, options);
  const source = SqliteStudioSource.open(path, { write: options.write === true });
  const { app, token, csrf } = createStudioApp({ source, token: `token-${name}` });
  const cookie = `colloquy_studio=${token}`;
  const get = (url: string, init: RequestInit = {}) =>
    app.request(url, { ...init, headers: { cookie, ...(init.headers as object) } });
  const text = async (url: string) => {
    const response = await get(url);
    expect(response.status, url).toBe(200);
    return response.text();
  };
  return { path, ids, source, app, token, csrf, get, text };
}

describe('studio access', () => {
  let s: Awaited<ReturnType<typeof studioOn>>;
  beforeAll(async () => {
    s = await studioOn('access.db');
  });
  afterAll(() => s.source.close());

  it('refuses every request without the token: pages, assets, events and the API', async () => {
    for (const url of ['/', '/assets/studio.js', '/events?c=x', '/api/conversations', '/runs']) {
      const response = await s.app.request(url);
      expect(response.status, url).toBe(401);
      expect(await response.text()).not.toContain('general');
    }
    const wrong = await s.app.request('/', { headers: { cookie: 'colloquy_studio=nope' } });
    expect(wrong.status).toBe(401);
  });

  it('trades the token in the address for an HttpOnly SameSite=Strict cookie and drops it from the URL', async () => {
    const response = await s.app.request(`/c/${enc(general)}?token=${s.token}`);
    expect(response.status).toBe(303);
    expect(response.headers.get('location')).toBe(`/c/${enc(general)}`);
    const cookie = response.headers.get('set-cookie') ?? '';
    expect(cookie).toContain(`colloquy_studio=${s.token}`);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
  });

  it('sends a strict Content-Security-Policy with every answer, refusals included', async () => {
    for (const response of [await s.get('/'), await s.app.request('/')]) {
      const csp = response.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toContain('unsafe-inline');
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    }
  });

  it('serves its script and stylesheet itself, and no page has an inline script or a CDN', async () => {
    const js = await s.get('/assets/studio.js');
    expect(js.headers.get('content-type')).toContain('text/javascript');
    expect(await js.text()).toContain('EventSource');
    for (const url of ['/', `/c/${enc(general)}`, '/runs', '/overview', '/people']) {
      const html = await s.text(url);
      expect(html).toContain('<script src="/assets/studio.js" defer></script>');
      expect(html.match(/<script/g)).toHaveLength(1);
      expect(html).not.toMatch(/https?:\/\//);
      expect(html).not.toMatch(/ style=/);
    }
  });

  it('refuses a Host header it was not reached by when serving on loopback', async () => {
    const studio = await startStudio({ source: s.source, port: 0, token: 't' });
    try {
      const ok = await fetch(`http://127.0.0.1:${studio.port}/`, {
        headers: { cookie: 'colloquy_studio=t' },
      });
      expect(ok.status).toBe(200);
      expect(studio.url).toBe(`http://127.0.0.1:${studio.port}/?token=t`);
      const { request } = await import('node:http');
      const status = await new Promise<number | undefined>((resolve, reject) => {
        const req = request(
          {
            host: '127.0.0.1',
            port: studio.port,
            path: '/',
            headers: { host: 'evil.example:80', cookie: 'colloquy_studio=t' },
          },
          (res) => resolve(res.statusCode),
        );
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(421);
    } finally {
      await studio.close();
    }
  });
});

describe('studio pages', () => {
  let s: Awaited<ReturnType<typeof studioOn>>;
  beforeAll(async () => {
    s = await studioOn('pages.db', { runs: true });
  });
  afterAll(() => s.source.close());

  it('lists conversations newest activity first, with platform, name, count and last activity', async () => {
    const html = await s.text('/');
    const order = [
      general,
      'telegram:5551002',
      'discord:900000000000000001:910000000000000001',
    ].map((id) => html.indexOf(`href="/c/${enc(id)}"`));
    expect(order.every((at) => at > 0)).toBe(true);
    expect([...order].sort((a, b) => a - b)).toEqual(order);
    expect(html).toContain('#general');
    expect(html).toContain('2026-03-16 11:11:00');
  });

  it('names DMs by the person, and lists who wrote in each conversation and its newest turn', async () => {
    const html = await s.text('/');
    const row = (id: string) => html.split('<tr>').find((r) => r.includes(`href="/c/${enc(id)}"`))!;
    const dave = row('telegram:5551002');
    expect(dave).toContain('>DM with Dave</a>');
    expect(dave).toContain(
      `<a href="/people/${enc('telegram:5551002')}" title="telegram:5551002">Dave</a>, <a href="/people/billing-agent" title="billing-agent">Billing</a> <span class="dim">(agent)</span>, <a href="/people/support-agent" title="support-agent">Support</a> <span class="dim">(agent)</span>`,
    );
    expect(dave).toContain(
      '<td class="last"><strong>Support</strong>: Your refund for order 1042 was sent this morning.</td>',
    );
    expect(row('console:local-dev')).toContain('>DM with you</a>');
    expect(row('slack:T0ACME:D0ALICE')).toContain('>Refund for invoice 88</a>'); // its title
    const channel = row(general);
    expect(channel).toContain('>#general</a>');
    expect(channel).toContain(
      '<strong>&lt;b onmouseover=alert(3)&gt;Mallory&lt;/b&gt;</strong>: &lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;',
    );
    const dm = await s.text(`/c/${enc('telegram:5551002')}`);
    expect(dm).toContain('<h1>DM with Dave</h1>');
  });

  it('filters the list by platform and by participant', async () => {
    const telegram = await s.text('/?platform=telegram');
    expect(telegram).toContain(enc('telegram:5551002'));
    expect(telegram).not.toContain(enc(general));
    const carol = await s.text(`/?participant=${enc('discord:80351110224678912')}`);
    expect(carol).toContain(enc('discord:900000000000000001:910000000000000001'));
    expect(carol).not.toContain(`href="/c/${enc(general)}"`);
  });

  it('searches every conversation, marks the words and links each hit to its place', async () => {
    const html = await s.text('/?q=REFUND');
    expect(html).toContain('<mark>refund</mark>');
    expect(html).toContain('<span class="where">telegram · DM with Dave</span>');
    expect(html).toContain(`/c/${enc('slack:T0ACME:D0ALICE')}?at=`);
    expect(html).toMatch(/\?at=(\d+)#m\1/);
    expect(await s.text('/?q=zebra')).toContain('nothing found');
  });

  it('shows a transcript with the speakers’ kinds, an edit with its earlier text, a tombstone, a summary and a reply link', async () => {
    const html = await s.text(`/c/${enc(general)}`);
    expect(html).toContain('The invoice for March is attached');
    expect(html).toContain('1 earlier version');
    expect(html).toContain('The invoce for March is attached');
    expect(html).toContain('message deleted');
    expect(html).toContain('class="turn kind-person deleted"');
    expect(html).toContain('rolling summary');
    expect(html).toContain('summary kept by support-agent');
    expect(html).toContain('this bot');
    expect(html).toContain('↩ reply to Alice Martin');
    expect(html).toContain(`href="/c/${enc('slack:T0ACME:C0GENERAL:1773226800.000000')}"`); // thread
  });

  it('folds a tool call under the next turn of the agent that made it', async () => {
    const html = await s.text(`/c/${enc('telegram:5551002')}`);
    const turns = html.split('<li class="turn ');
    const holder = turns.find((item) => item.includes('1 tool step: lookup_order'));
    expect(holder).toMatch(/^kind-this-bot"/);
    expect(holder).toContain('title="support-agent"');
    expect(holder).toContain('{&quot;order&quot;:1042');
    expect(html).not.toContain('tool-only');
    expect(html).toContain('delegated to billing-agent');
    expect(html).toContain('answer to the task from support-agent');
  });

  it('marks commands and presses with who answered them, and shows the buttons a reply carried', async () => {
    const html = await s.text(`/c/${enc('telegram:5551002')}`);
    expect(html).toContain('<span class="badge">command /refund → billing-agent</span>');
    expect(html).toContain('<span class="badge">pressed approve → billing-agent</span>');
    expect(html).toContain('buttons: Approve · Deny');
  });

  it('keeps the model’s reasoning on the reply, folded and escaped', async () => {
    const html = await s.text(`/c/${enc('slack:T0ACME:D0ALICE')}`);
    expect(html).toContain("<summary>the model's reasoning</summary>");
    expect(html).toContain('a short answer. &lt;script&gt;alert(4)&lt;/script&gt;');
  });

  it('lists the files a turn carried under it by kind, name, type and size, fetching none', async () => {
    const html = await s.text(`/c/${enc(general)}`);
    const invoice = html.split('<li class="turn ').find((t) => t.includes('invoice-march.pdf'))!;
    expect(invoice).toContain('The invoice for March is attached');
    expect(invoice).toContain('<span class="badge">file</span> invoice-march.pdf');
    expect(invoice).toContain('application/pdf');
    expect(invoice).toContain('240 KB');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt; <span class="dim">&lt;/script&gt;');
    expect(html).toContain('1.5 KB');
    expect(html).not.toContain('tracker.example');
    expect(html).not.toContain('files.slack.com');
  });

  it('keeps hostile names and text as text everywhere', async () => {
    for (const url of [
      '/',
      `/c/${enc(general)}`,
      '/?q=onerror',
      '/people',
      `/people/${enc('slack:U0MAL')}`,
    ]) {
      const html = await s.text(url);
      expect(html, url).not.toContain('<img src=x');
      expect(html, url).not.toContain('<b onmouseover');
      expect(html, url).not.toContain('</script><script>alert');
    }
    const transcript = await s.text(`/c/${enc(general)}`);
    expect(transcript).toContain('&lt;img src=x onerror=alert(1)&gt;');
    expect(transcript).toContain('&lt;/script&gt;&lt;script&gt;alert(2)&lt;/script&gt;');
    expect(transcript).toContain('&lt;b onmouseover=alert(3)&gt;Mallory&lt;/b&gt;');
  });

  it('pages a long conversation by cursor and opens the page around a search hit', async () => {
    const page = await s.source.turns(general, { limit: 5 });
    expect(page.turns).toHaveLength(5);
    expect(page.earlier).toBeDefined();
    const html = await s.text(`/c/${enc(general)}?before=${enc(page.earlier ?? '')}`);
    expect(html).toContain('newest turns →');
    expect(html).not.toContain('data-live');
    const around = await s.source.turns(general, { limit: 4, around: page.turns[0]!.seq });
    expect(around.turns.map((t) => t.seq)).toContain(page.turns[0]!.seq);
  });

  it('lists agent runs with status, model, tokens and latency, and the turns that got no answer', async () => {
    const html = await s.text('/runs');
    expect(html).toContain('gpt-4o-mini');
    expect(html).toContain('answered');
    expect(html).toContain('model timed out after 30 s');
    const missed = html.slice(html.indexOf('id="unanswered"'));
    expect(missed).toContain('can you reset my password?');
    expect(missed).not.toContain('summarize the release notes');
    expect(await s.text('/runs?status=failed')).not.toContain('300 / 40');
  });

  it('shows a recorded prompt as recorded, and rebuilds one from the store when none was recorded', async () => {
    const runs = (await s.source.runs({ limit: 100 })) ?? [];
    const withPrompt = runs.find((r) => r.messageId.endsWith('1772442300.000000'));
    const recorded = await s.text(`/runs/${enc(withPrompt!.id)}`);
    expect(recorded).toContain('<span class="badge">recorded</span>');
    expect(recorded).toContain('You are Acme support.');
    expect(recorded).toContain('[tool call release_date] {&quot;version&quot;:&quot;2.3&quot;}');
    const all = await Promise.all(runs.map((r) => s.source.run(r.id)));
    const over = all.find((r) => (r?.prompt as { truncated?: boolean })?.truncated === true);
    const rebuiltOver = await s.text(`/runs/${enc(over!.id)}`);
    expect(rebuiltOver).toContain('<span class="badge">rebuilt</span>');
    expect(rebuiltOver).toContain(
      'the recorded prompt (70000 bytes) was over the bot&#39;s size cap',
    );
    const refund = runs.find((r) => r.conversationId === 'slack:T0ACME:D0ALICE');
    const rebuilt = await s.text(`/runs/${enc(refund!.id)}`);
    expect(rebuilt).toContain('<span class="badge">rebuilt</span>');
    expect(rebuilt).toContain('Alice Martin: Can I get a refund for invoice 88?');
    expect(rebuilt).not.toContain('Thanks!'); // stored after the run's turn
    expect(rebuilt).toMatch(/\d+ tokens<\/strong> of a 3000-token budget/);
  });

  it('shows a run whose recorded prompt went with a forgotten person, without their words', async () => {
    // given the run that recorded Alice's question, on a file of its own
    const own = await studioOn('forgotten-prompt.db', { runs: true });
    const runs = (await own.source.runs({ limit: 100 })) ?? [];
    const asked = runs.find((r) => r.messageId.endsWith('1772442300.000000'))!;
    const store = new SqliteConversationStore({ path: own.path });
    const question = await store.getMessage(asked.conversationId, asked.messageId);

    // when she is forgotten
    await store.forgetParticipant(question!.participant.id);
    await store.close();

    // then the run's page still answers, rebuilt from what remains, with none of her words
    const page = await own.text(`/runs/${enc(asked.id)}`);
    own.source.close();
    expect(page).toContain('<span class="badge">rebuilt</span>');
    expect(page).toContain('the inbound turn is no longer stored');
    expect(page).not.toContain('when does the 2.3 release ship');
  });

  it('draws the overview charts as inline SVG', async () => {
    const html = await s.text('/overview');
    expect(html.match(/<svg /g)).toHaveLength(3);
    expect(html).toContain('<title>2026-03-16 · slack:');
    expect(html).toContain('Tokens per day');
    const titles = [...html.matchAll(/<text class="axis-title"[^>]*>([^<]*)<\/text>/g)].map(
      (m) => m[1],
    );
    expect(titles).toEqual(['day (UTC)', 'turns', 'agent', 'runs', 'day (UTC)', 'tokens']);
    expect(html).toMatch(/<text class="tick y-tick"[^>]*>0<\/text>/);
    expect(html).toMatch(/<text class="tick x-tick"[^>]*>2026-03-16<\/text>/);
    expect(html).toContain(
      'aria-label="Turns per day, by platform (30 days to the newest turn): turns per day (UTC)"',
    );
  });

  it('answers 404 for an unknown conversation, run or person', async () => {
    for (const url of ['/c/nope', '/runs/nope', '/people/nope', '/nowhere']) {
      expect((await s.get(url)).status, url).toBe(404);
    }
  });
});

describe('studio conversation titles', () => {
  it('names a conversation by the title an app gave it, escaped', async () => {
    const s = await studioOn('titles.db');
    try {
      const db = new Database(s.path);
      db.prepare('update conversations set title = ? where id = ?').run(
        '<i>Shipping</i> questions',
        'telegram:-1001234567890:42',
      );
      db.close();
      const html = await s.text('/');
      expect(html).toContain('&lt;i&gt;Shipping&lt;/i&gt; questions');
      expect(await s.text(`/c/${enc('telegram:-1001234567890:42')}`)).toContain(
        '<h1>&lt;i&gt;Shipping&lt;/i&gt; questions</h1>',
      );
    } finally {
      await s.source.close();
    }
  });
});

describe('studio on a file without agent runs', () => {
  it('says no agent runs are recorded, and still finds mentions that got no reply', async () => {
    const s = await studioOn('plain.db');
    try {
      const runs = await s.text('/runs');
      expect(runs).toContain('no agent runs recorded in this database');
      expect(runs).toContain('can you reset my password?');
      expect(await s.text('/overview')).toContain('no agent runs recorded in this database');
    } finally {
      await s.source.close();
    }
  });
});

describe('studio live turns', () => {
  it('streams a turn another connection commits, and an edit of a turn on screen, rendered and escaped', async () => {
    const s = await studioOn('live.db');
    const studio = await startStudio({ source: s.source, port: 0, token: 'live', pollMs: 50 });
    const writer = new SqliteConversationStore({
      path: s.path,
    });
    try {
      const after = await s.source.liveCursor();
      const response = await fetch(
        `http://127.0.0.1:${studio.port}/events?c=${enc(general)}&after=${after}`,
        { headers: { cookie: 'colloquy_studio=live' } },
      );
      expect(response.headers.get('content-type')).toContain('text/event-stream');
      const reader = response.body!.getReader();
      await writer.append(
        turn(
          'slack:T0ACME:D0ALICE',
          'slack:U0ALICE',
          'Alice',
          'elsewhere',
          '2026-03-16T12:00:00.000Z',
          '1773662400.000000',
        ),
      );
      await writer.append(
        turn(
          general,
          'slack:U0BOB',
          'Bob Chen',
          'live <i>now</i>',
          '2026-03-16T12:01:00.000Z',
          '1773662460.000000',
        ),
      );
      const decoder = new TextDecoder();
      let text = '';
      const readUntil = async (event: string) => {
        while (!text.includes(`event: ${event}\n`)) {
          const { value, done } = await reader.read();
          if (done) throw new Error(`stream ended before ${event}`);
          text += decoder.decode(value, { stream: true });
        }
        const at = text.indexOf(`event: ${event}\n`);
        const data = /data: (.*)/.exec(text.slice(at))![1]!;
        return JSON.parse(data) as { seq: number; html: string };
      };
      const fresh = await readUntil('turn');
      expect(fresh.html).toContain('live &lt;i&gt;now&lt;/i&gt;');
      expect(text).not.toContain('elsewhere');

      // When a turn on the screen is edited, its new rendering follows
      await writer.recordEdit({
        channelType: 'slack',
        channelId: 'C0GENERAL',
        messageId: String(Date.parse('2026-03-16T10:00:00Z') / 1000) + '.000000',
        content: 'Lunch at one <u>instead</u>?',
        editedAt: '2026-03-16T12:02:00.000Z',
      });
      const changed = await readUntil('change');
      expect(changed.html).toContain('Lunch at one &lt;u&gt;instead&lt;/u&gt;?');
      expect(changed.html).toContain('Lunch at noon?'); // the earlier text, under the turn
      await reader.cancel();
    } finally {
      await writer.close();
      await studio.close();
      await s.source.close();
    }
  });
});

describe('studio forget', () => {
  it('offers no form and refuses the POST when started without --write', async () => {
    const s = await studioOn('readonly.db');
    try {
      const html = await s.text(`/people/${enc('slack:U0MAL')}`);
      expect(html).not.toContain('<form class="danger"');
      const response = await s.get(`/people/${enc('slack:U0MAL')}/forget`, {
        method: 'POST',
        body: new URLSearchParams({ csrf: s.csrf, confirm: 'slack:U0MAL' }),
      });
      expect(response.status).toBe(403);
      expect(await s.source.participant('slack:U0MAL')).toBeDefined();
    } finally {
      await s.source.close();
    }
  });

  it('names what will be deleted, refuses a POST without the form token or from elsewhere, then forgets', async () => {
    const s = await studioOn('write.db', { write: true });
    const url = `/people/${enc('slack:U0ALICE')}/forget`;
    try {
      const page = await s.text(`/people/${enc('slack:U0ALICE')}`);
      expect(page).toContain('This deletes <strong>');
      expect(page).toMatch(/\d+ turns by Alice Martin \(slack:U0ALICE\) in \d+ conversations/);
      expect(page).toContain('1 earlier version');
      const post = (body: Record<string, string>, headers: Record<string, string> = {}) =>
        s.get(url, { method: 'POST', body: new URLSearchParams(body), headers });
      expect((await post({ confirm: 'slack:U0ALICE' })).status).toBe(403);
      expect(
        (await post({ csrf: s.csrf, confirm: 'slack:U0ALICE' }, { origin: 'http://evil.example' }))
          .status,
      ).toBe(403);
      expect((await post({ csrf: s.csrf })).status).toBe(400);
      // her turns, read in the conversations she wrote in: three, one of them edited once
      expect(await s.source.participant('slack:U0ALICE')).toMatchObject({
        conversations: 3,
        revisions: 1,
        summaries: 1,
      });
      const done = await post(
        { csrf: s.csrf, confirm: 'slack:U0ALICE' },
        { origin: 'http://localhost' },
      );
      expect(done.status).toBe(200);
      expect(await done.text()).toMatch(/Deleted \d+ turns by slack:U0ALICE/);
      expect(await s.source.participant('slack:U0ALICE')).toBeUndefined();
      expect(await s.text('/?q=invoice')).not.toContain('Alice Martin');
    } finally {
      await s.source.close();
    }
  });
});
