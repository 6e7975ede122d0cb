import { SqliteConversationStore } from 'colloquy/sqlite';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { assertBinIsBuilt, colloquy, tempDir } from './cli-harness.js';

// Chat text is written by strangers. A terminal obeys the escape sequences it is sent: a
// message could retitle the window (OSC), clear the screen (CSI 2J), ring the bell, or
// return the cursor and overwrite a line to spoof another speaker. Human-readable output shows
// such characters escaped; --json keeps the text exact.

const HOSTILE =
  'hi\u001b]0;pwned\u0007\u001b[2J\rAlice (user): send the password\u0000' +
  '\u009b31m \u202eevil\u202c \u2066iso\u2069 \u0008\u007f end';
const NAME = 'Mallory\u001b[31m\u0007';
const CONVERSATION = 'telegram:666';

const dir = tempDir();
const db = dir.file('hostile.db');

/** Every byte a terminal could act on: C0 (but the line feed), DEL, C1, bidi controls. */
function rawControls(text: string): string[] {
  return [
    // eslint-disable-next-line no-control-regex -- finding control characters is the test
    ...text.matchAll(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/g),
  ].map((match) => match[0]);
}

beforeAll(async () => {
  assertBinIsBuilt();
  const store = new SqliteConversationStore({ path: db });
  try {
    await store.append({
      id: `${CONVERSATION}:1`,
      conversationId: CONVERSATION,
      participant: { kind: 'user', id: 'telegram:666', displayName: NAME },
      content: HOSTILE,
      timestamp: '2026-11-17T09:00:00.000Z',
      scope: 'channel',
      metadata: {
        channelType: 'telegram',
        channelId: '666',
        channelName: 'Chat\u001b]0;x\u0007',
        messageId: '1',
        mentions: [],
      },
    });
  } finally {
    await store.close();
  }
});
afterAll(() => dir.remove());

describe('the CLI prints chat text without terminal control characters', () => {
  it('colloquy sql (table)', async () => {
    const { code, stdout } = await colloquy([
      'sql',
      '--db',
      db,
      'select speaker, text, char(27) || char(7) as "col\u001b]0;t\u0007" from transcript',
    ]);
    expect(code).toBe(0);
    expect(rawControls(stdout)).toEqual([]);
    expect(stdout).toContain('\\e]0;pwned\\a');
    expect(stdout).toContain('Mallory\\e[31m\\a');
    expect(stdout).toContain('\\u202E');
  });

  it('colloquy tail', async () => {
    const { code, stdout } = await colloquy(['tail', '--db', db]);
    expect(code).toBe(0);
    expect(rawControls(stdout)).toEqual([]);
    expect(stdout.trimEnd().split('\n')).toHaveLength(1);
    expect(stdout).toContain('\\rAlice (user): send the password\\0');
  });

  it('colloquy conversations', async () => {
    const { code, stdout } = await colloquy(['conversations', '--db', db]);
    expect(code).toBe(0);
    expect(rawControls(stdout)).toEqual([]);
    expect(stdout).toContain('Chat\\e]0;x\\a');
  });

  it('keeps --json exact', async () => {
    const sql = await colloquy([
      'sql',
      '--json',
      '--db',
      db,
      'select speaker, text from transcript',
    ]);
    expect(JSON.parse(sql.stdout)).toEqual([{ speaker: NAME, text: HOSTILE }]);
    const listed = await colloquy(['conversations', '--json', '--db', db]);
    expect((JSON.parse(listed.stdout) as { channelName: string }[])[0]?.channelName).toBe(
      'Chat\u001b]0;x\u0007',
    );
  });
});
