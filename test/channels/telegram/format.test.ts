import type { Chat, User } from 'grammy/types';
import { afterEach, describe, expect, it } from 'vitest';
import { Bot, InMemoryConversationStore, silentLogger } from 'colloquy';
import { formatTelegram, telegramPlainText, TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';
import { parseTelegramHtml } from '../../../channels/telegram/fake-html.js';
import { answerText } from '../../fixtures/answers.js';
import { scriptedAgent } from '../../src/bot/bot.fixtures.js';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada' };
const dm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };

describe('formatTelegram', () => {
  it('writes emphasis, nested emphasis, code, links and headings as Telegram HTML', () => {
    expect(
      formatTelegram(
        '## Plan\n**bold _and italic_** and ***both*** ~~old~~ `a<b` [docs](https://x.io/?a=1&b="2")',
      ),
    ).toEqual([
      '<b>Plan</b>\n<b>bold <i>and italic</i></b> and <b><i>both</i></b> <s>old</s> ' +
        '<code>a&lt;b</code> <a href="https://x.io/?a=1&amp;b=&quot;2&quot;">docs</a>',
    ]);
  });

  it('keeps a code block with its language and escapes what it holds', () => {
    expect(formatTelegram('```ts\nif (a < b && c > d) {}\n```')).toEqual([
      '<pre><code class="language-ts">if (a &lt; b &amp;&amp; c &gt; d) {}</code></pre>',
    ]);
  });

  it('shows lists with bullets, quotes as one blockquote and leaves snake_case alone', () => {
    expect(formatTelegram('- one\n  - two\n1. first\n> a\n> b\n\nmy_var_name * 2')).toEqual([
      '• one\n  • two\n1. first\n<blockquote>a\nb</blockquote>\n\nmy_var_name * 2',
    ]);
  });

  it('shows a table as aligned text in a pre block', () => {
    const [part] = formatTelegram(answerText('plans-table'));
    expect(part).toContain(
      '<pre>Plan          | Price / month                          | Seats | SSO\n' +
        '--------------+----------------------------------------+-------+----\n' +
        'Free          | $0                                     | 1     | ❌\n' +
        'Team          | $12                                    | 10    | ✅\n' +
        'Enterprise 🏢 | contact us (https://example.com/sales) | ∞     | ✅</pre>',
    );
  });

  it('gives HTML that Telegram reads back as the text the answer means', () => {
    const [part = ''] = formatTelegram(answerText('password-reset'));
    const { text, entities } = parseTelegramHtml(part);
    expect(text).toContain('Click Reset password\n');
    expect(entities).toContainEqual({
      type: 'text_link',
      offset: text.indexOf('Reset password'),
      length: 'Reset password'.length,
      url: 'https://example.com/reset?a=1&b=2',
    });
    expect(text).toContain('Note: this signs you out');
    expect(telegramPlainText(part)).toBe(text);
  });

  it('closes and reopens bold and a code block cut between messages, so Telegram reads every part', () => {
    const bold = `**${'The parcel left the depot this morning. '.repeat(6).trim()}**`;
    const code = `\`\`\`ts\n${'const order = 4711;\n'.repeat(8)}\`\`\``;
    const parts = formatTelegram(`${bold}\n\n${code}`, 120);
    expect(parts.length).toBeGreaterThan(3);
    const read = parts.map((part) => parseTelegramHtml(part));
    for (const { text, entities } of read) {
      expect(text.length).toBeLessThanOrEqual(120);
      expect(entities.map((entity) => entity.type)).toEqual([
        expect.stringMatching(/^(bold|pre)$/),
      ]);
    }
    expect(read.map(({ text }) => text).join('')).toContain('const order = 4711;');
  });

  it('leaves an unfinished emphasis of a streamed prefix as written', () => {
    expect(formatTelegram('Here is **the ans')).toEqual(['Here is **the ans']);
  });
});

describe('the fake Telegram reading parse_mode HTML', () => {
  let telegram: FakeTelegram;
  afterEach(async () => telegram.close());

  const send = async (text: string) => {
    const response = await fetch(`${telegram.apiRoot}/bot${telegram.token}/sendMessage`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: 1001, text, parse_mode: 'HTML' }),
    });
    return (await response.json()) as { ok: boolean; description?: string };
  };

  it.each([
    ['<b>unclosed', 'Can\'t find end tag corresponding to start tag "b"'],
    ['<b><i>crossed</b></i>', 'Unmatched end tag at byte offset 13, expected "</i>", found "</b>"'],
    ['a <br> b', 'Unsupported start tag "br" at byte offset 2'],
    ['a < b', 'Unsupported start tag "" at byte offset 2'],
    ['fish & chips', 'Unsupported entity at byte offset 5'],
  ])('refuses %j as Telegram does', async (text, reason) => {
    telegram = await FakeTelegram.start();
    expect(await send(text)).toEqual({
      ok: false,
      error_code: 400,
      description: `Bad Request: can't parse entities: ${reason}`,
    });
  });
});

describe('Telegram replies', () => {
  let telegram: FakeTelegram;
  let bot: Bot | undefined;
  afterEach(async () => {
    await bot?.stop();
    await telegram.close();
  });

  async function start(answer: string) {
    telegram = await FakeTelegram.start();
    const store = new InMemoryConversationStore();
    const channel = new TelegramChannel({
      token: telegram.token,
      client: { apiRoot: telegram.apiRoot },
      botInfo: telegram.botInfo,
      pollingTimeoutSeconds: 1,
      retry: { baseDelayMs: 5 },
    });
    bot = new Bot({
      channels: [channel],
      agents: [scriptedAgent('support', () => answer)],
      store,
      logger: silentLogger,
    });
    await bot.start();
    return store;
  }

  it('are sent formatted, and recorded as the model wrote them', async () => {
    // Given an agent that answers in Markdown
    const answer = answerText('password-reset');
    const store = await start(answer);

    // When a person asks
    telegram.sendUserMessage({ chat: dm, from: ada, text: 'how do I reset my password?' });
    const [sent] = await telegram.waitForSent(1);

    // Then Telegram shows it formatted, and the record keeps the Markdown
    expect(sent?.payload.parse_mode).toBe('HTML');
    expect(sent?.text).toContain('1. Open Settings → Security');
    expect(sent?.message.entities?.map((e) => e.type)).toEqual(
      expect.arrayContaining(['bold', 'italic', 'text_link', 'code', 'blockquote']),
    );
    await bot?.stop();
    const turns = await store.get('telegram:1001');
    expect(turns.at(-1)?.content).toBe(answer);
  });

  it('are sent again as plain text when Telegram refuses the markup', async () => {
    // Given Telegram refusing the next text's markup
    await start('**Done** — see [the docs](https://example.com)');
    telegram.failNext('sendMessage', {
      error_code: 400,
      description: 'Bad Request: can\'t parse entities: Unsupported start tag "b" at byte offset 0',
    });

    // When a person asks
    telegram.sendUserMessage({ chat: dm, from: ada, text: 'done?' });
    const [sent] = await telegram.waitForSent(1);

    // Then the reply arrives once, as the text it shows
    expect(sent?.payload.parse_mode).toBeUndefined();
    expect(sent?.text).toBe('Done — see the docs');
    expect(telegram.sent).toHaveLength(1);
  });
});
