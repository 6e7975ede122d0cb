/**
 * The terminal half of `npx colloquy try <platform>`: starts the platform's example bot
 * against its fake, shows what the bot posts, and sends what is typed as a person's message
 * in the place the person is in (a DM, a group or channel, a thread). Each platform supplies
 * a `FakePlatform`; this file knows no platform. What the bot and its process print is chat
 * text written by strangers: it is shown with its control characters escaped (`visible`).
 */
import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { visible } from '../db/cli/visible.js';

/** A place the person can write in, entered with its command. */
export interface TryPlace {
  /** What the person types to go there: `/dm`, `/group`… */
  command: string;
  /** How a line the bot posts there is tagged: `dm`, `#general`… */
  tag: string;
  /** Printed on arrival: `now in the group "colloquy try"`. */
  entered: string;
  /** One line for `/help`: when the bot answers there. */
  help: string;
}

/** One fake platform with its example bot, as the session drives it. */
export interface FakePlatform {
  /** How the person mentions the bot: `@colloquy_try_bot`. */
  bot: string;
  /** The example the bot runs (in dist/examples) and the settings pointing it at the fake. */
  example: string;
  env: Record<string, string>;
  /** The line the example prints once it listens. */
  ready: RegExp;
  /** One line on where the fake is, printed at start. */
  about: string;
  /** The places besides the DM with the bot (tagged `dm`, where the person starts). */
  places: TryPlace[];
  /**
   * The person writes `text` in the place tagged `tag`, as a reply to (in the thread of) the
   * bot's last message there when `reply` is set. Returns a line to show instead of sending.
   */
  write(tag: string, text: string, reply: boolean): string | undefined;
  /** Every post and edit of the bot so far, one line each, tagged with its place. */
  shown(): string[];
  /** Resolves once `shown()` holds more than `count` lines. */
  more(count: number): Promise<unknown>;
  close(): Promise<void>;
}

/** `text` cut to 40 characters, to quote the message a reply answers. */
export function short(text: string): string {
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** `text` with the `<@id>` mentions of `id` (Slack's and Discord's syntax) shown as `@name`. */
export function named(text: string, id: string, name: string): string {
  return text.replaceAll(`<@${id}>`, `@${name}`);
}

/**
 * Runs the session until the person quits (/quit, Ctrl-D, Ctrl-C) or the bot stops; exits the
 * process with the bot's exit code once the bot has finished the answers it was writing.
 */
export async function trySession(
  platform: FakePlatform,
  { person, db }: { person: string; db: string },
): Promise<never> {
  const { bot: name } = platform;
  const places: TryPlace[] = [
    {
      command: '/dm',
      tag: 'dm',
      entered: `now in a DM with ${name}`,
      help: `write to ${name} directly (it answers everything)`,
    },
    ...platform.places,
  ];
  const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true;
  let place = places[0] as TryPlace;
  // What the person types, read once the bot listens.
  const rl = createInterface({ input: process.stdin, output: process.stdout, terminal }).pause();
  let talking = false;
  let closing = false;

  /** A line of its own above what is being typed. */
  const say = (line: string): void => {
    if (!terminal || !talking) return void process.stdout.write(`${line}\n`);
    process.stdout.write(`\r\x1b[K${line}\n`);
    rl.prompt(true);
  };

  const here = dirname(fileURLToPath(import.meta.url));
  const child = spawn(process.execPath, [join(here, platform.example)], {
    env: { ...process.env, ...platform.env, COLLOQUY_DB: db },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let listening!: () => void;
  const ready = new Promise<void>((resolve) => (listening = resolve));
  for (const stream of [child.stdout, child.stderr]) {
    createInterface({ input: stream }).on('line', (line) => {
      say(`  bot process │ ${visible(line)}`);
      if (platform.ready.test(line)) listening();
    });
  }
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));

  const stop = async (): Promise<never> => {
    closing = true;
    child.kill('SIGTERM');
    // The bot finishes the answers it was writing; they are shown as they come.
    const code = await exited;
    await platform.close();
    showNew();
    console.error(`the conversations are in ${db}: npx colloquy --db ${db} conversations`);
    // The fakes' waits end with the process: nothing else is left to do.
    process.exit(code ?? 0);
  };
  void exited.then((code) => {
    if (closing) return;
    say(`the bot stopped (exit code ${code}); see its lines above`);
    void stop();
  });

  let shown = 0;
  const showNew = () => {
    const lines = platform.shown();
    for (const line of lines.slice(shown)) say(visible(line));
    shown = lines.length;
  };

  const help = [
    ...places.map((where) => `${where.command.padEnd(16)} ${where.help}`),
    `/reply <text>    reply to ${name}'s last message here (in its thread)`,
    `/help            this list;  /quit or Ctrl-D ends it`,
  ];

  const onLine = (line: string): void => {
    const text = line.trim();
    const [command = '', ...rest] = text.split(/\s+/);
    const target = places.find((where) => where.command === command);
    if (command === '/quit' || command === '/exit') return void rl.close();
    if (command === '/help') help.forEach(say);
    else if (target !== undefined) {
      place = target;
      rl.setPrompt(`${place.tag}> `);
      say(place.entered);
    } else if (command === '/reply') {
      const problem =
        rest.length === 0
          ? '/reply needs the text to send'
          : platform.write(place.tag, rest.join(' '), true);
      if (problem !== undefined) say(problem);
    } else if (text.startsWith('/')) say(`unknown command ${command}; /help lists them`);
    else if (text !== '') {
      const problem = platform.write(place.tag, text, false);
      if (problem !== undefined) say(problem);
    }
    if (terminal) rl.prompt();
  };

  console.error(`colloquy: ${platform.about}, the example bot as ${name}, capturing into ${db}`);
  await Promise.race([ready, exited]);
  if (closing) return new Promise<never>(() => {});
  say(`${name} is listening. You are ${person}, in a DM with it. Type a message.`);
  help.forEach(say);
  void (async () => {
    while (!closing) {
      await platform.more(shown);
      showNew();
    }
  })();
  talking = true;
  rl.setPrompt(`${place.tag}> `);
  rl.on('line', onLine);
  rl.on('SIGINT', () => rl.close());
  rl.on('close', () => void stop());
  rl.resume();
  if (terminal) rl.prompt();
  return new Promise<never>(() => {});
}
