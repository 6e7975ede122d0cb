import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBinIsBuilt, colloquy, populate, start, tempDir } from '../cli/cli-harness.js';

const dir = tempDir();
const db = dir.file('bot.db');

beforeAll(async () => {
  assertBinIsBuilt();
  await populate(db);
});
afterAll(() => dir.remove());

describe('colloquy studio', () => {
  it('prints its address on 127.0.0.1 with a token, serves with it, refuses without, and stops on SIGTERM', async () => {
    const child = start(['studio', '--db', db, '--port', '0']);
    try {
      let out = '';
      child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
      while (!out.includes('\n')) await once(child.stdout, 'data');
      const url = /colloquy studio: (http:\/\/127\.0\.0\.1:\d+\/\?token=[\w-]{43})\n/.exec(
        out,
      )?.[1];
      expect(url).toBeDefined();
      const base = url!.replace(/\?token=.*/, '');
      expect((await fetch(base)).status).toBe(401);
      const first = await fetch(url!, { redirect: 'manual' });
      expect(first.status).toBe(303);
      const cookie = (first.headers.get('set-cookie') ?? '').split(';')[0]!;
      const page = await fetch(base, { headers: { cookie } });
      expect(page.status).toBe(200);
      expect(await page.text()).toContain('<h1>Conversations</h1>');
    } finally {
      child.kill('SIGTERM');
    }
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(0);
  });

  it('refuses a port that is not a number, and a missing database', async () => {
    expect((await colloquy(['studio', '--db', db, '--port', 'x'])).code).toBe(2);
    const missing = await colloquy(['studio', '--db', dir.file('nope.db')]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('no database at');
  });
});
