/**
 * `npx colloquy try telegram`: a fake Telegram (FakeTelegram from colloquy/testing) and the
 * example Telegram bot pointed at it through TELEGRAM_API_ROOT. The person writes in a DM, or
 * in a group where the bot answers when mentioned or replied to.
 */
import { FakeTelegram, type FakeTelegramSent } from 'colloquy/testing';
import { short, type FakePlatform } from './try-session.js';

const BOT = 'colloquy_try_bot';

export async function fakeTelegram(name: string): Promise<FakePlatform> {
  const telegram = await FakeTelegram.start({ bot: { username: BOT, first_name: 'Colloquy' } });
  const person = { id: 1001, is_bot: false, first_name: name };
  const chats = {
    dm: { id: person.id, type: 'private' as const, first_name: name },
    group: { id: -1001234567890, type: 'supergroup' as const, title: 'colloquy try' },
  };
  const tagOf = (chatId: number) => (chatId === chats.group.id ? 'group' : 'dm');
  const describe = (sent: FakeTelegramSent) => {
    const quoted = sent.message.reply_to_message?.text;
    const thread = quoted === undefined ? '' : ` ↳ replying to "${short(quoted)}"`;
    const edited = sent.method === 'editMessageText' ? ' (edited)' : '';
    return `[${tagOf(sent.chatId)}] @${BOT}${edited}${thread}: ${sent.text}`;
  };
  return {
    bot: `@${BOT}`,
    example: 'telegram-bot.js',
    env: {
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_API_ROOT: telegram.apiRoot,
      TELEGRAM_WEBHOOK_URL: '',
    },
    ready: /is polling for updates/,
    about: `a fake Telegram on ${telegram.apiRoot}`,
    places: [
      {
        command: '/group',
        tag: 'group',
        entered: `now in the group "${chats.group.title}"`,
        help: `write in a group (it answers when mentioned: @${BOT} …, or replied to)`,
      },
    ],
    write(tag, text, reply) {
      const chat = tag === 'group' ? chats.group : chats.dm;
      const to = reply ? telegram.sent.findLast((sent) => sent.chatId === chat.id) : undefined;
      if (reply && to === undefined) return `nothing from @${BOT} here to reply to yet`;
      telegram.sendUserMessage({
        chat,
        from: person,
        text,
        ...(to !== undefined && { reply_to_message: to.message }),
      });
      return undefined;
    },
    shown: () => telegram.sent.map(describe),
    // Resolves with what was sent so far when the fake closes, too.
    more: (count) => telegram.waitForSent(count + 1, 2 ** 31 - 1),
    close: () => telegram.close(),
  };
}
