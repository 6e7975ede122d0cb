/**
 * `npx colloquy try <platform>`: the example bot of a platform against its loopback fake, and
 * this terminal as a person writing to it, so mentions, threads and groups can be seen before
 * creating a real bot. No account, no key (the offline model answers unless COLLOQUY_MODEL
 * names another).
 *
 *   node dist/examples/try.js telegram
 */
import { userInfo } from 'node:os';
import { exitWith } from './launch.js';
import { trySession, type FakePlatform } from './try-session.js';

const platforms: Record<string, (person: string) => Promise<FakePlatform>> = {
  telegram: async (person) => (await import('./try-telegram.js')).fakeTelegram(person),
  slack: async (person) => (await import('./try-slack.js')).fakeSlack(person),
  discord: async (person) => (await import('./try-discord.js')).fakeDiscord(person),
};

const platform = process.argv[2]?.trim().toLowerCase() ?? '';
const start = platforms[platform];
if (start === undefined) {
  exitWith(
    `colloquy: no fake platform "${platform}" to try; one of: ${Object.keys(platforms).join(', ')}`,
  );
}
const person = personName();
await trySession(await start(person), {
  person,
  db: process.env.COLLOQUY_DB?.trim() || 'colloquy-try.db',
});

/** COLLOQUY_USER_NAME, else the login name. */
function personName(): string {
  const name = process.env.COLLOQUY_USER_NAME?.trim();
  if (name) return name;
  try {
    return userInfo().username || 'you';
  } catch {
    return 'you';
  }
}
