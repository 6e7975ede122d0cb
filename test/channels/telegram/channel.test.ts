import type { Chat, User } from 'grammy/types';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MalformedEventError, NetworkError, PlatformError } from 'colloquy';
import type { ChannelHandlers, ColloquyError, MessageEdit, NewMessage } from 'colloquy';
import { TelegramChannel } from 'colloquy/telegram';
import { FakeTelegram } from 'colloquy/testing';

const ada: User = { id: 1001, is_bot: false, first_name: 'Ada', last_name: 'Lovelace' };
const group: Chat = { id: -1001234567890, type: 'supergroup', title: 'Orders Team' };
const forum: Chat = { id: -1009876543210, type: 'supergroup', title: 'Support', is_forum: true };
const adaDm: Chat = { id: 1001, type: 'private', first_name: 'Ada' };

/** Handlers that record what the channel reports, with promises to await the next one. */
const DELIVERED = { handled: Promise.resolve() };

class Recorder implements ChannelHandlers {
  readonly messages: NewMessage[] = [];
  readonly edits: MessageEdit[] = [];
  readonly errors: ColloquyError[] = [];
  private waiters: (() => boolean)[] = [];

  async message(message: NewMessage) {
    this.messages.push(message);
    this.wake();
    return DELIVERED;
  }
  async edit(edit: MessageEdit) {
    this.edits.push(edit);
    this.wake();
    return DELIVERED;
  }
  async delete() {
    return DELIVERED;
  }
  async capacity() {}
  error(error: ColloquyError) {
    this.errors.push(error);
    this.wake();
  }
  /** Resolves once `condition` holds, re-checked after every handler call. */
  until(condition: (recorder: this) => boolean): Promise<void> {
    return new Promise((resolve) => {
      const check = () => condition(this) && (resolve(), true);
      if (!check()) this.waiters.push(check);
    });
  }
  private wake() {
    this.waiters = this.waiters.filter((check) => !check());
  }
}

let telegram: FakeTelegram;
let channel: TelegramChannel;
let handlers: Recorder;

beforeEach(async () => {
  telegram = await FakeTelegram.start();
  handlers = new Recorder();
});

afterEach(async () => {
  await channel?.stop();
  await telegram.close();
});

function pollingChannel(extra: Partial<ConstructorParameters<typeof TelegramChannel>[0]> = {}) {
  return new TelegramChannel({
    token: telegram.token,
    client: { apiRoot: telegram.apiRoot },
    pollingTimeoutSeconds: 5,
    retry: { baseDelayMs: 5 },
    ...extra,
  });
}

describe('TelegramChannel with long polling', () => {
  it('learns its identity from getMe and keeps pending updates', async () => {
    telegram.sendUserMessage({ chat: adaDm, from: ada, text: 'sent while the bot was down' });
    channel = pollingChannel();
    await channel.start(handlers);

    expect(channel.botIdentity).toEqual({
      id: 'telegram:123456789',
      username: 'colloquy_test_bot',
      displayName: 'Colloquy Test Bot',
    });
    const deleteWebhook = telegram.calls.find((call) => call.method === 'deleteWebhook');
    expect(deleteWebhook?.payload.drop_pending_updates).not.toBe(true);
    await handlers.until((h) => h.messages.length === 1);
    expect(handlers.messages[0]?.content).toBe('sent while the bot was down');
  });

  it('dispatches a group mention with UTF-16 offsets after emoji', async () => {
    channel = pollingChannel();
    await channel.start(handlers);
    const text = '👩‍💻🎉 @colloquy_test_bot where is order 4711?';
    telegram.sendUserMessage({ chat: group, from: ada, text });

    await handlers.until((h) => h.messages.length === 1);
    expect(handlers.messages[0]).toMatchObject({
      conversationId: 'telegram:-1001234567890',
      scope: 'channel',
      participant: { id: 'telegram:1001', displayName: 'Ada Lovelace', kind: 'user' },
      metadata: { mentions: ['telegram:123456789'], channelName: 'Orders Team' },
    });
  });

  it('ignores a mention entity that runs past the end of the text', async () => {
    channel = pollingChannel();
    await channel.start(handlers);
    telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: '@colloquy_test_bot ask @l',
      entities: [
        { type: 'mention', offset: 0, length: 18 },
        { type: 'mention', offset: 23, length: 9 },
      ],
    });

    await handlers.until((h) => h.messages.length === 1);
    expect(handlers.messages[0]?.metadata.mentions).toEqual(['telegram:123456789']);
  });

  it('hands a redelivered update over with the same turn id, ignores its own echo and keeps going after a malformed update', async () => {
    channel = pollingChannel();
    await channel.start(handlers);
    const { update } = telegram.sendUserMessage({ chat: group, from: ada, text: 'first' });
    await handlers.until((h) => h.messages.length === 1);

    telegram.pushUpdate(update); // the same update again
    const [sent] = await Promise.all([
      telegram.waitForSent(1),
      channel.send({
        conversationId: 'telegram:-1001234567890',
        scope: 'channel',
        channelId: String(group.id),
        content: 'echo',
      }),
    ]);
    telegram.pushUpdate({ message: sent[0]!.message }); // our own message
    telegram.pushUpdate({ message: { message_id: 99, date: 1, text: 'no chat' } });
    telegram.sendUserMessage({ chat: group, from: ada, text: 'second' });

    await handlers.until((h) => h.messages.length === 3);
    expect(handlers.messages.map((m) => m.content)).toEqual(['first', 'first', 'second']);
    expect(handlers.messages[1]?.id).toBe(handlers.messages[0]?.id);
    expect(handlers.errors).toHaveLength(1);
    expect(handlers.errors[0]).toBeInstanceOf(MalformedEventError);
    expect(handlers.errors[0]?.message).toContain('message without chat.id');
  });

  it('reports edits', async () => {
    channel = pollingChannel();
    await channel.start(handlers);
    const { message } = telegram.sendUserMessage({ chat: group, from: ada, text: 'odrer 4711' });
    telegram.sendUserMessage({
      chat: group,
      from: ada,
      text: 'order 4711',
      editOf: message.message_id,
    });

    await handlers.until((h) => h.edits.length === 1);
    expect(handlers.edits[0]).toMatchObject({
      channelType: 'telegram',
      channelId: String(group.id),
      messageId: String(message.message_id),
      content: 'order 4711',
    });
  });
});

describe('TelegramChannel.start', () => {
  it('rejects with a PlatformError when the token is refused', async () => {
    channel = pollingChannel({ token: '42:wrong' });

    const error = await channel.start(handlers).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({ code: '401' });
    expect(channel.botIdentity).toBeUndefined();
  });

  it('rejects with a NetworkError when the API cannot be reached', async () => {
    const unreachable = await FakeTelegram.start();
    const apiRoot = unreachable.apiRoot;
    await unreachable.close();
    channel = pollingChannel({ client: { apiRoot } });

    const error = await channel.start(handlers).catch((err: unknown) => err);

    expect(error).toBeInstanceOf(NetworkError);
  });

  it('skips getMe when given the bot info', async () => {
    channel = pollingChannel({ botInfo: telegram.botInfo });

    await channel.start(handlers);

    expect(channel.botIdentity?.id).toBe('telegram:123456789');
    expect(telegram.calls.some((call) => call.method === 'getMe')).toBe(false);
  });
});

describe('TelegramChannel.send', () => {
  beforeEach(async () => {
    channel = pollingChannel();
    await channel.start(handlers);
  });

  it('replies in place inside a forum topic and returns the message id', async () => {
    const sent = await channel.send({
      conversationId: 'telegram:-1009876543210:300',
      scope: 'thread',
      channelId: String(forum.id),
      threadId: '300',
      replyToMessageId: '310',
      content: 'Refunds take 3 days.',
    });

    expect(sent.messageIds).toEqual(['1']);
    expect(telegram.sent[0]?.payload).toMatchObject({
      chat_id: forum.id,
      text: 'Refunds take 3 days.',
      message_thread_id: 300,
      reply_parameters: { message_id: 310 },
    });
  });

  it('splits a long answer with a code block and emoji into ordered parts of at most 4096', async () => {
    const prose = 'Here is the plan 🚀 for the migration. '.repeat(100);
    const code = '```ts\n' + 'const x = "🎉";\n'.repeat(300) + '```\n';
    const content = (prose + '\n\n' + code + '\n\n' + prose)
      .padEnd(10_000, ' end 👋')
      .slice(0, 10_000);

    const sent = await channel.send({
      conversationId: 'telegram:1001',
      scope: 'dm',
      channelId: '1001',
      replyToMessageId: '5',
      content,
    });

    expect(sent.messageIds.length).toBeGreaterThanOrEqual(3);
    expect(sent.messageIds).toEqual(telegram.sent.map((s) => String(s.message.message_id)));
    for (const part of telegram.sent) {
      expect(part.text.length).toBeLessThanOrEqual(4096);
      expect(part.text.match(/```/g)?.length ?? 0).toSatisfy((n: number) => n % 2 === 0);
      expect(part.text).not.toMatch(/^[\uDC00-\uDFFF]|[\uD800-\uDBFF]$/);
    }
    expect(telegram.sent[0]?.payload.reply_parameters).toMatchObject({ message_id: 5 });
    expect(telegram.sent[1]?.payload.reply_parameters).toBeUndefined();
    const joined = telegram.sent.map((s) => s.text).join('');
    expect(joined.replace(/\s|`|ts\n/g, '')).toBe(content.replace(/\s|`|ts\n/g, ''));
  });

  it('waits out a 429 and then sends', async () => {
    telegram.failNext('sendMessage', { error_code: 429, retry_after: 1 });
    const started = Date.now();

    const sent = await channel.send({
      conversationId: 'telegram:1001',
      scope: 'dm',
      channelId: '1001',
      content: 'hi',
    });

    expect(sent.messageIds).toHaveLength(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(telegram.calls.filter((c) => c.method === 'sendMessage')).toHaveLength(2);
  });

  it('retries a 5xx', async () => {
    telegram.failNext('sendMessage', { error_code: 502, description: 'Bad Gateway' });

    const sent = await channel.send({
      conversationId: 'telegram:1001',
      scope: 'dm',
      channelId: '1001',
      content: 'hi',
    });

    expect(sent.messageIds).toHaveLength(1);
    expect(telegram.calls.filter((c) => c.method === 'sendMessage')).toHaveLength(2);
  });

  it('sends a message once when its connection drops (Telegram may have posted it)', async () => {
    telegram.failNext('sendMessage', { network: true });

    const error = await channel
      .send({ conversationId: 'telegram:1001', scope: 'dm', channelId: '1001', content: 'hi' })
      .catch((err: unknown) => err);

    expect(error).toBeInstanceOf(NetworkError);
    expect(telegram.calls.filter((c) => c.method === 'sendMessage')).toHaveLength(1);
  });

  it('retries an edit whose connection drops (the same edit again changes nothing)', async () => {
    const sent = await channel.send({
      conversationId: 'telegram:1001',
      scope: 'dm',
      channelId: '1001',
      content: 'Which plan?',
      actions: [{ id: 'a', label: 'A' }],
    });
    telegram.failNext('editMessageReplyMarkup', { network: true });

    await channel.editActions({
      channelId: '1001',
      messageIds: sent.messageIds,
      content: 'Which plan?',
      chosen: { id: 'a', label: 'A' },
    });

    expect(telegram.calls.filter((c) => c.method === 'editMessageReplyMarkup')).toHaveLength(2);
  });

  it('throws a PlatformError with the code when Telegram refuses, without retrying', async () => {
    telegram.failNext('sendMessage', {
      error_code: 403,
      description: 'Forbidden: bot was blocked by the user',
    });

    const error = await channel
      .send({ conversationId: 'telegram:1001', scope: 'dm', channelId: '1001', content: 'hi' })
      .catch((err: unknown) => err);

    expect(error).toBeInstanceOf(PlatformError);
    expect(error).toMatchObject({
      platform: 'telegram',
      code: '403',
      conversationId: 'telegram:1001',
    });
    expect((error as Error).message).toContain('bot was blocked by the user');
    expect(telegram.calls.filter((c) => c.method === 'sendMessage')).toHaveLength(1);
  });

  it('throws a NetworkError when the API stays unreachable', async () => {
    telegram.failNext('sendMessage', { network: true }, 4);

    const error = await channel
      .send({ conversationId: 'telegram:1001', scope: 'dm', channelId: '1001', content: 'hi' })
      .catch((err: unknown) => err);

    expect(error).toBeInstanceOf(NetworkError);
    expect((error as Error).cause).toBeDefined();
  });

  it('counts an edit of the buttons that Telegram answers "message is not modified" as made', async () => {
    const edit = {
      channelId: '1001',
      messageIds: ['7'],
      content: 'hi',
      chosen: { id: 'a', label: 'A' },
    };
    telegram.failNext('editMessageReplyMarkup', {
      error_code: 400,
      description: 'Bad Request: message is not modified',
    });
    await expect(channel.editActions(edit)).resolves.toBeUndefined();
  });

  it('throws a redacted PlatformError when editing the buttons is refused or unreachable', async () => {
    const edit = {
      channelId: '1001',
      messageIds: ['7'],
      content: 'hi',
      chosen: { id: 'a', label: 'A' },
    };
    telegram.failNext('editMessageReplyMarkup', {
      error_code: 400,
      description: 'Bad Request: message to edit not found',
    });
    const refused = await channel.editActions(edit).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(PlatformError);
    expect(refused).toMatchObject({ platform: 'telegram', code: '400' });
    expect((refused as Error).cause?.constructor.name).not.toBe('GrammyError');

    telegram.failNext('editMessageReplyMarkup', { network: true }, 4);
    const unreachable = await channel.editActions(edit).catch((err: unknown) => err);
    expect(unreachable).toBeInstanceOf(NetworkError);
    expect((unreachable as Error).cause?.constructor.name).not.toBe('HttpError');
    expect(JSON.stringify(unreachable, Object.getOwnPropertyNames(unreachable))).not.toContain(
      telegram.token,
    );
    expect(String((unreachable as Error).cause)).not.toContain(telegram.token);
  });
});

describe('TelegramChannel with a webhook', () => {
  it('processes updates with the right secret token and answers 401 to a wrong one', async () => {
    channel = new TelegramChannel({
      token: telegram.token,
      mode: 'webhook',
      client: { apiRoot: telegram.apiRoot },
      webhook: {
        secretToken: 'right-secret',
        port: 0,
        host: '127.0.0.1',
        url: 'https://example.test/telegram',
      },
    });
    await channel.start(handlers);
    const url = `http://127.0.0.1:${channel.webhookPort}/telegram`;
    expect(telegram.webhook).toEqual({
      url: 'https://example.test/telegram',
      secret_token: 'right-secret',
    });

    const wrong = await telegram.postWebhook(
      url,
      { message: telegram.buildMessage({ chat: adaDm, from: ada, text: 'forged' }) },
      'wrong',
    );
    const missing = await telegram.postWebhook(url, {
      message: telegram.buildMessage({ chat: adaDm, from: ada, text: 'forged' }),
    });
    const right = await telegram.postWebhook(
      url,
      { message: telegram.buildMessage({ chat: adaDm, from: ada, text: 'real' }) },
      'right-secret',
    );

    expect([wrong.status, missing.status, right.status]).toEqual([401, 401, 200]);
    expect(handlers.messages.map((m) => m.content)).toEqual(['real']);
    expect(telegram.calls.some((c) => c.method === 'getUpdates')).toBe(false);
  });

  it('answers 400 to a body that is not JSON and reports it', async () => {
    channel = new TelegramChannel({
      token: telegram.token,
      mode: 'webhook',
      client: { apiRoot: telegram.apiRoot },
      webhook: { secretToken: 's', port: 0, host: '127.0.0.1' },
    });
    await channel.start(handlers);

    const response = await fetch(`http://127.0.0.1:${channel.webhookPort}/telegram`, {
      method: 'POST',
      headers: { 'x-telegram-bot-api-secret-token': 's' },
      body: '{not json',
    });

    expect(response.status).toBe(400);
    expect(handlers.errors[0]).toBeInstanceOf(MalformedEventError);
  });

  it('hands a webhook redelivery of the same update_id over with the same turn id', async () => {
    channel = new TelegramChannel({
      token: telegram.token,
      mode: 'webhook',
      client: { apiRoot: telegram.apiRoot },
      webhook: { secretToken: 's', port: 0, host: '127.0.0.1' },
    });
    await channel.start(handlers);
    const url = `http://127.0.0.1:${channel.webhookPort}/telegram`;
    const update = {
      update_id: 42,
      message: telegram.buildMessage({ chat: adaDm, from: ada, text: 'once' }),
    };

    await telegram.postWebhook(url, update, 's');
    await telegram.postWebhook(url, update, 's');

    expect(handlers.messages).toHaveLength(2);
    expect(handlers.messages[1]?.id).toBe(handlers.messages[0]?.id);
  });
});
