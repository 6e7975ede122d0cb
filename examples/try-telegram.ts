/**
 * A fake Telegram (FakeTelegram from colloquy/testing), the example Telegram bot pointed at it
 * through TELEGRAM_API_ROOT, and this terminal as a person: in a DM with the bot, or in a group
 * where it answers when mentioned or replied to. Started by `npx colloquy try telegram`.
 */
import { spawn } from 'node:child_process';
import { userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { FakeTelegram, type FakeTelegramSent } from 'colloquy/testing';

const BOT = 'colloquy_try_bot';
const person = { id: 1001, is_bot: false, first_name: personName() };
const chats = {
  dm: { id: person.id, type: 'private' as const, first_name: person.first_name },
  group: { id: -1001234567890, type: 'supergroup' as const, title: 'colloquy try' },
};
type Place = keyof typeof chats;
let place: Place = 'dm';
const db = process.env.COLLOQUY_DB?.trim() || 'colloquy-try.db';

const telegram = await FakeTelegram.start({ bot: { username: BOT, first_name: 'Colloquy' } });
const terminal = process.stdin.isTTY === true && process.stdout.isTTY === true;
/** The person's input, read once the bot listens. */
let rl: Interface | undefined;

/** A line of its own above what is being typed. */
function say(line: string): void {
  if (!terminal || rl === undefined) return void process.stdout.write(`${line}\n`);
  process.stdout.write(`\r\x1b[K${line}\n`);
  rl.prompt(true);
}

const bot = spawn(
  process.execPath,
  [join(dirname(fileURLToPath(import.meta.url)), 'telegram-bot.js')],
  {
    env: {
      ...process.env,
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      TELEGRAM_WEBHOOK_URL: '',
      COLLOQUY_DB: db,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  },
);
for (const stream of [bot.stdout, bot.stderr]) {
  createInterface({ input: stream }).on('line', (line) => say(`  bot process │ ${line}`));
}
const botExited = new Promise<number | null>((resolve) => bot.on('exit', resolve));
void botExited.then((code) => {
  if (!closing) {
    say(`the bot stopped (exit code ${code}); see its lines above`);
    void stop();
  }
});

/** Prints what the bot posts, as it posts it. */
async function showReplies(): Promise<void> {
  let shown = 0;
  for (;;) {
    // Resolves with what was sent so far when the fake closes, too.
    const sent = await telegram.waitForSent(shown + 1, 2 ** 31 - 1);
    for (const message of sent.slice(shown)) say(describe(message));
    shown = sent.length;
    if (closed) return;
  }
}

function describe(sent: FakeTelegramSent): string {
  const where = sent.chatId === chats.group.id ? 'group' : 'dm';
  const quoted = sent.message.reply_to_message?.text;
  const thread = quoted === undefined ? '' : ` ↳ replying to "${short(quoted)}"`;
  const edited = sent.method === 'editMessageText' ? ' (edited)' : '';
  return `[${where}] @${BOT}${edited}${thread}: ${sent.text}`;
}

function short(text: string): string {
  return text.length > 40 ? `${text.slice(0, 39)}…` : text;
}

/** The bot's last message in the chat of `where`, to reply to. */
function lastFromBot(where: Place) {
  const chatId = chats[where].id;
  return telegram.sent.findLast((sent) => sent.chatId === chatId)?.message;
}

const HELP = [
  `/dm              write to @${BOT} directly (it answers everything)`,
  `/group           write in a group (it answers when mentioned: @${BOT} …, or replied to)`,
  `/reply <text>    reply to the bot's last message here (a thread in the group)`,
  `/help            this list;  /quit or Ctrl-D ends it`,
];

let closing = false;
let closed = false;
function onLine(line: string): void {
  const text = line.trim();
  const [command, ...rest] = text.split(/\s+/);
  if (command === '/quit' || command === '/exit') return void rl?.close();
  if (command === '/help') HELP.forEach(say);
  else if (command === '/dm' || command === '/group') {
    place = command === '/dm' ? 'dm' : 'group';
    rl?.setPrompt(`${place}> `);
    say(place === 'dm' ? `now in a DM with @${BOT}` : `now in the group "${chats.group.title}"`);
  } else if (command === '/reply') {
    const to = lastFromBot(place);
    if (to === undefined) say(`nothing from @${BOT} here to reply to yet`);
    else if (rest.length > 0) {
      telegram.sendUserMessage({
        chat: chats[place],
        from: person,
        text: rest.join(' '),
        reply_to_message: to,
      });
    }
  } else if (text.startsWith('/') && !text.startsWith(`/${BOT}`))
    say(`unknown command ${command}; /help lists them`);
  else if (text !== '') telegram.sendUserMessage({ chat: chats[place], from: person, text });
  if (terminal) rl?.prompt();
}

async function stop(): Promise<void> {
  if (closing) return;
  closing = true;
  bot.kill('SIGTERM');
  // The bot finishes the answers it was writing; they are shown as they come.
  const code = await botExited;
  closed = true;
  await telegram.close();
  console.error(`the conversations are in ${db}: npx colloquy --db ${db} conversations`);
  process.exitCode = code ?? 0;
}

console.error(
  `colloquy: a fake Telegram on ${telegram.apiRoot}, the example bot as @${BOT}, capturing into ${db}`,
);
await telegram.waitForCall('getUpdates', 1, 60_000).catch(() => undefined);
if (!closing) {
  say(`@${BOT} is listening. You are ${person.first_name}, in a DM with it. Type a message.`);
  HELP.forEach(say);
  void showReplies();
  const input = createInterface({ input: process.stdin, output: process.stdout, terminal });
  rl = input;
  input.setPrompt(`${place}> `);
  input.on('line', onLine);
  input.on('SIGINT', () => input.close());
  input.on('close', () => void stop());
  if (terminal) input.prompt();
}

function personName(): string {
  const name = process.env.COLLOQUY_USER_NAME?.trim();
  if (name) return name;
  try {
    return userInfo().username || 'you';
  } catch {
    return 'you';
  }
}
