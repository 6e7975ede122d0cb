import { readFileSync } from 'node:fs';
import type { Update } from 'grammy/types';
import { describe, expect, it } from 'vitest';
import { parseUpdate, resolveMentions } from 'colloquy/telegram';
import type { ParsedUpdate, TelegramSelf } from 'colloquy/telegram';

const self: TelegramSelf = { id: 123456789, username: 'colloquy_test_bot' };

function fixture(name: string): Update {
  const url = new URL(`../../fixtures/telegram/${name}.json`, import.meta.url);
  return JSON.parse(readFileSync(url, 'utf8')) as Update;
}

function parsedMessage(name: string) {
  const parsed: ParsedUpdate = parseUpdate(fixture(name), self);
  if (parsed.kind !== 'message') throw new Error(`expected a message, got ${parsed.kind}`);
  return parsed.message;
}

describe('parsing Telegram updates', () => {
  it('reads a group mention after emoji with UTF-16 offsets', () => {
    const message = parsedMessage('group-mention');
    expect(message).toMatchObject({
      id: 'telegram:-1001234567890:1201',
      conversationId: 'telegram:-1001234567890',
      participant: { kind: 'user', id: 'telegram:1001', displayName: 'Ada Lovelace' },
      content: '🎉🎉 hey @Colloquy_Test_Bot, can you ask 👩‍💻 @alice_smith?',
      timestamp: '2025-11-21T10:10:00.000Z',
      scope: 'channel',
      metadata: {
        channelType: 'telegram',
        channelId: '-1001234567890',
        channelName: 'Orders Team',
        messageId: '1201',
        mentions: ['telegram:123456789', 'telegram:@alice_smith'],
      },
    });
    expect(message.metadata.replyToMessageId).toBeUndefined();
  });

  it('reads a private chat as a DM named after the person', () => {
    const message = parsedMessage('private-message');
    expect(message).toMatchObject({
      conversationId: 'telegram:1002',
      scope: 'dm',
      participant: { kind: 'user', id: 'telegram:1002', displayName: 'Grace' },
      metadata: { channelId: '1002', channelName: 'Grace', mentions: [] },
    });
  });

  it('reads a forum topic as a thread and ignores the implicit reply to the topic start', () => {
    const message = parsedMessage('forum-topic');
    expect(message).toMatchObject({
      conversationId: 'telegram:-1009876543210:300',
      scope: 'thread',
      metadata: { threadId: '300', mentions: ['telegram:123456789'] },
    });
    expect(message.metadata.replyToMessageId).toBeUndefined();
  });

  it('links a reply to the bot and resolves a text mention', () => {
    const message = parsedMessage('reply-to-bot');
    expect(message.metadata).toMatchObject({
      replyToMessageId: '1202',
      replyToParticipantId: 'telegram:123456789',
      mentions: ['telegram:1001'],
    });
  });

  it('marks another bot as an agent', () => {
    expect(parsedMessage('other-bot').participant).toEqual({
      kind: 'agent',
      id: 'telegram:777000111',
      displayName: 'Shipping Bot',
    });
  });

  it('reads a channel post with a photo caption, authored by the channel', () => {
    const message = parsedMessage('channel-post-photo');
    expect(message).toMatchObject({
      content: 'New arrivals! Ask /help@colloquy_test_bot',
      scope: 'channel',
      participant: { kind: 'user', id: 'telegram:-1005555555555', displayName: 'Shop News' },
      metadata: { mentions: ['telegram:123456789'] },
    });
  });

  it('turns an edited message into an edit of the stored turn', () => {
    expect(parseUpdate(fixture('edited-message'), self)).toEqual({
      kind: 'edit',
      edit: {
        channelType: 'telegram',
        channelId: '-1001234567890',
        messageId: '1201',
        content: '@colloquy_test_bot can you check order 4712?',
        editedAt: '2025-11-21T10:10:30.000Z',
      },
    });
  });

  it('ignores our own messages, and edits of them should Telegram send any', () => {
    expect(parseUpdate(fixture('own-message'), self).kind).toBe('ignored');
    const { edited_message: edited, ...update } = fixture('edited-message');
    const ours = { ...edited!, from: { id: self.id, is_bot: true, first_name: 'colloquy' } };
    expect(parseUpdate({ ...update, edited_message: ours }, self)).toEqual({
      kind: 'ignored',
      reason: 'our own edit',
    });
  });

  it('reports a message without a chat as malformed', () => {
    expect(parseUpdate(fixture('malformed-no-chat'), self)).toEqual({
      kind: 'malformed',
      reason: 'message without chat.id',
    });
  });

  it('reports an update without an update_id as malformed and ignores unknown update types', () => {
    expect(parseUpdate({} as Update, self).kind).toBe('malformed');
    const poll = { update_id: 9, poll_answer: { poll_id: '1', option_ids: [0] } } as Update;
    expect(parseUpdate(poll, self)).toEqual({
      kind: 'ignored',
      reason: 'update type poll_answer is not recorded',
    });
  });

  it('ignores entities whose offset and length run past the text', () => {
    const message = parsedMessage('entities-past-text');
    expect(message.content).toBe('@colloquy_test_bot ask @l');
    expect(message.metadata.mentions).toEqual(['telegram:123456789']);
  });

  it('matches our username case-insensitively and deduplicates mentions', () => {
    const text = '@COLLOQUY_TEST_BOT and again @colloquy_test_bot';
    const entities = [
      { type: 'mention' as const, offset: 0, length: 18 },
      { type: 'mention' as const, offset: 29, length: 18 },
    ];
    expect(resolveMentions(text, entities, self)).toEqual(['telegram:123456789']);
  });
});
