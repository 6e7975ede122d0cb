import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MalformedEventError } from 'colloquy';
import {
  formatOutbound,
  parseMessageCreate,
  parseMessageDelete,
  parseMessageDeleteBulk,
  parseMessageUpdate,
  type DiscordParseContext,
} from 'colloquy/discord';

const fixture = (name: string): unknown =>
  (
    JSON.parse(
      readFileSync(new URL(`../../fixtures/discord/${name}.json`, import.meta.url), 'utf8'),
    ) as {
      d: unknown;
    }
  ).d;

const BOT = '1100000000000000001';
const general: DiscordParseContext = { botUserId: BOT, channel: { type: 0, name: 'general' } };

describe('parsing Discord messages', () => {
  it('reads a MESSAGE_DELETE_BULK as one deletion per id', () => {
    const now = () => new Date('2026-11-23T10:00:00.000Z');
    expect(parseMessageDeleteBulk(fixture('message-delete-bulk'), { ...general, now })).toEqual(
      ['334385199974967042', '334385199974967043'].map((messageId) => ({
        channelType: 'discord',
        channelId: '290926798999357250',
        messageId,
        deletedAt: '2026-11-23T10:00:00.000Z',
      })),
    );
  });

  it('records the sticker of a sticker-only message', () => {
    const turn = parseMessageCreate(fixture('message-create-sticker'), general);
    expect(turn).toMatchObject({
      content: '',
      attachments: [{ kind: 'sticker', name: 'Wave', platformFileId: '749054660769218631' }],
    });
  });

  it('reads a guild message: ids, author by nickname, mentions, scope and metadata', () => {
    const turn = parseMessageCreate(fixture('message-create-guild'), general);
    expect(turn).toEqual({
      id: 'discord:290926798999357250:334385199974967042',
      conversationId: 'discord:81384788765712384:290926798999357250',
      participant: { kind: 'user', id: 'discord:53908099506183680', displayName: 'Mase' },
      content:
        '<@!1100000000000000001> Supa Hot <@80351110224678912> <@&41771983423143936> @everyone',
      timestamp: '2017-07-11T17:27:07.299Z',
      scope: 'channel',
      metadata: {
        channelType: 'discord',
        channelId: '290926798999357250',
        channelName: 'general',
        guildId: '81384788765712384',
        messageId: '334385199974967042',
        mentions: ['discord:1100000000000000001', 'discord:80351110224678912'],
      },
    });
  });

  it('reads a reply: the message replied to and its author', () => {
    const turn = parseMessageCreate(fixture('message-create-reply'), general);
    expect(turn).toMatchObject({
      participant: { kind: 'user', id: 'discord:80351110224678912', displayName: 'Nelly' },
      metadata: {
        replyToMessageId: '1202560000000000001',
        replyToParticipantId: `discord:${BOT}`,
        mentions: [`discord:${BOT}`],
      },
    });
  });

  it('puts a message without a guild in a DM conversation, keeping attachments', () => {
    const turn = parseMessageCreate(fixture('message-create-dm'), { botUserId: BOT });
    expect(turn).toMatchObject({
      id: 'discord:1202570000000000001:1202580000000000001',
      conversationId: 'discord:dm:1202570000000000001',
      scope: 'dm',
      participant: { displayName: 'nelly' },
      metadata: { channelId: '1202570000000000001' },
      attachments: [
        {
          kind: 'image',
          name: 'receipt.png',
          mimeType: 'image/png',
          size: 1024,
          platformFileId: '1202580000000000002',
          url: 'https://cdn.discordapp.com/attachments/1202570000000000001/1202580000000000002/receipt.png',
        },
      ],
    });
  });

  it('puts a thread message under its parent channel', () => {
    const turn = parseMessageCreate(fixture('message-create-thread'), {
      botUserId: BOT,
      channel: { type: 11, name: 'deploys', parentId: '290926798999357250', parentName: 'general' },
    });
    expect(turn).toMatchObject({
      id: 'discord:1202600000000000001:1202600000000000002',
      conversationId: 'discord:81384788765712384:290926798999357250:1202600000000000001',
      scope: 'thread',
      metadata: {
        channelId: '290926798999357250',
        channelName: 'general',
        threadId: '1202600000000000001',
        threadName: 'deploys',
      },
    });
  });

  it('records another bot as an agent and ignores our own messages', () => {
    expect(parseMessageCreate(fixture('message-create-other-bot'), general)).toMatchObject({
      participant: { kind: 'agent', id: 'discord:1202000000000000009', displayName: 'ci-bot' },
    });
    const ours = parseMessageCreate(fixture('message-create-other-bot'), {
      ...general,
      botUserId: '1202000000000000009',
    });
    expect(ours).toEqual({ ignored: 'our own message' });
  });

  it("ignores a message and an edit by another of the bot's own Discord bots", () => {
    const sibling = { ...general, siblings: ['1202000000000000009'] };
    expect(parseMessageCreate(fixture('message-create-other-bot'), sibling)).toEqual({
      ignored: 'our own message',
    });
    const update = fixture('message-update') as Record<string, unknown>;
    const edit = {
      ...update,
      author: { username: 'ci-bot', id: '1202000000000000009', bot: true },
    };
    expect(parseMessageUpdate(edit, sibling)).toBeUndefined();
    expect(parseMessageUpdate(edit, general)).toMatchObject({ content: 'Supa Hot (edited)' });
  });

  it('ignores system messages such as a member joining', () => {
    const join = { ...(fixture('message-create-guild') as object), type: 7 };
    expect(parseMessageCreate(join, general)).toEqual({ ignored: 'message type 7' });
  });

  it('reads an edit and a deletion', () => {
    expect(parseMessageUpdate(fixture('message-update'), general)).toEqual({
      channelType: 'discord',
      channelId: '290926798999357250',
      messageId: '334385199974967042',
      content: 'Supa Hot (edited)',
      editedAt: '2017-07-11T17:29:31.112Z',
    });
    const now = () => new Date('2024-02-01T12:00:00.000Z');
    expect(parseMessageDelete(fixture('message-delete'), { ...general, now })).toEqual({
      channelType: 'discord',
      channelId: '290926798999357250',
      messageId: '334385199974967042',
      deletedAt: '2024-02-01T12:00:00.000Z',
    });
  });

  it('treats an update without an edit timestamp (an embed unfurling) as no edit', () => {
    const unfurl = { ...(fixture('message-update') as object), edited_timestamp: null };
    expect(parseMessageUpdate(unfurl, general)).toBeUndefined();
  });

  it("treats an update of the bot's own message (its reply growing) as no edit", () => {
    const update = fixture('message-update') as Record<string, unknown>;
    const own = { ...update, author: { username: 'colloquy', id: BOT, bot: true } };
    expect(parseMessageUpdate(own, general)).toBeUndefined();
  });

  it('rejects payloads without an author or with a bad id as malformed', () => {
    const { author: _author, ...noAuthor } = fixture('message-create-guild') as Record<
      string,
      unknown
    >;
    expect(() => parseMessageCreate(noAuthor, general)).toThrow(MalformedEventError);
    expect(() => parseMessageCreate({ ...noAuthor, id: 'x' }, general)).toThrow(
      MalformedEventError,
    );
    expect(() => parseMessageCreate(null, general)).toThrow(MalformedEventError);
  });
});

describe('formatting Discord replies', () => {
  const out = {
    conversationId: 'discord:81384788765712384:290926798999357250:1202600000000000001',
    scope: 'thread' as const,
    channelId: '290926798999357250',
    threadId: '1202600000000000001',
    replyToMessageId: '1202600000000000002',
  };

  it('posts into the thread, replying with the first part only', () => {
    const { channelId, bodies } = formatOutbound({ ...out, content: 'word '.repeat(900) });
    expect(channelId).toBe('1202600000000000001');
    expect(bodies.map((body) => body.content.length <= 2000)).toEqual([true, true, true]);
    expect(bodies[0]?.message_reference?.message_id).toBe('1202600000000000002');
    expect(bodies[1]?.message_reference).toBeUndefined();
    expect(bodies[0]?.allowed_mentions).toEqual({ parse: ['users'], replied_user: true });
  });

  it('posts nothing for a blank reply', () => {
    expect(formatOutbound({ ...out, content: '  \n' }).bodies).toEqual([]);
  });
});
