import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MalformedEventError } from 'colloquy';
import {
  formatSlackText,
  markdownToMrkdwn,
  escapeSlackText,
  parseSlackEvent,
  slackTextToPlain,
  type ParsedSlackEvent,
} from 'colloquy/slack';

const fixture = (name: string): Record<string, unknown> =>
  JSON.parse(readFileSync(new URL(`../../fixtures/slack/${name}.json`, import.meta.url), 'utf8'));

const self = { userId: 'U0LAN0Z89', botId: 'B0LAN0Z89' };
const names = new Map([
  ['U061F7AUR', 'Alice'],
  ['U2147483697', 'Bob'],
]);

function message(parsed: ParsedSlackEvent) {
  if (parsed.kind !== 'message') throw new Error(`expected a message, got ${parsed.kind}`);
  return parsed.message;
}

describe('parseSlackEvent', () => {
  it('reads a thread in a DM (an assistant thread) as a DM in its own conversation', () => {
    const turn = message(parseSlackEvent(fixture('message-im-assistant-thread'), { self, names }));
    expect(turn).toMatchObject({
      conversationId: 'slack:T061EG9R6:D024BE91L:1729701200.000100',
      scope: 'dm',
      metadata: { threadId: '1729701200.000100', replyToParticipantId: 'slack:U0LAN0Z89' },
    });
  });

  it('reads Slackbot as a system participant', () => {
    const turn = message(parseSlackEvent(fixture('message-slackbot'), { self, names }));
    expect(turn).toMatchObject({
      participant: { kind: 'system', id: 'slack:USLACKBOT', displayName: 'Slackbot' },
      content: 'You have been removed from #secret-plans by @Bob',
      scope: 'dm',
    });
  });

  it('keys an Enterprise Grid event with the workspace of the envelope, not the organisation', () => {
    const grid = { self: { userId: 'W0LAN0Z89' }, teamId: 'E0ORG1234' }; // auth.test's team
    const turn = message(parseSlackEvent(fixture('message-grid'), grid));
    expect(turn).toMatchObject({
      id: 'slack:T0WORKSPC:C0SHARED1:1729701400.000400',
      conversationId: 'slack:T0WORKSPC:C0SHARED1',
      metadata: { teamId: 'T0WORKSPC', mentions: ['slack:W0LAN0Z89'] },
    });
  });

  it('reads an app_mention as a channel turn that mentions the bot', () => {
    const turn = message(parseSlackEvent(fixture('app_mention'), { self, names }));
    expect(turn).toMatchObject({
      id: 'slack:T061EG9R6:C0LAN2Q65:1515449522.000016',
      conversationId: 'slack:T061EG9R6:C0LAN2Q65',
      participant: { kind: 'user', id: 'slack:U061F7AUR', displayName: 'Alice' },
      content: '@U0LAN0Z89 is it everything a river should be?',
      timestamp: '2018-01-08T22:12:02.000Z',
      scope: 'channel',
      metadata: {
        channelType: 'slack',
        channelId: 'C0LAN2Q65',
        messageId: '1515449522.000016',
        mentions: ['slack:U0LAN0Z89'],
        slackEventId: 'Ev0LAN670R',
      },
    });
  });

  it('turns Slack markup into readable text and mentions into participant ids', () => {
    const turn = message(parseSlackEvent(fixture('message-channel'), { self, names }));
    expect(turn.content).toBe('Hello world, @river & #random: see the docs (https://example.com)');
    expect(turn.metadata.mentions).toEqual(['slack:U0LAN0Z89']);
    expect(turn.participant.displayName).toBe('Bob');
  });

  it('reads an im message as a DM conversation', () => {
    const turn = message(parseSlackEvent(fixture('message-im'), { self }));
    expect(turn.scope).toBe('dm');
    expect(turn.conversationId).toBe('slack:T061EG9R6:D024BE91L');
    expect(turn.participant.displayName).toBe('U2147483697');
  });

  it('reads a thread reply as a thread turn replying to the parent and its author', () => {
    const turn = message(parseSlackEvent(fixture('message-thread-reply'), { self }));
    expect(turn).toMatchObject({
      conversationId: 'slack:T061EG9R6:C123ABC456:1482960137.003543',
      scope: 'thread',
      metadata: {
        threadId: '1482960137.003543',
        replyToMessageId: '1482960137.003543',
        replyToParticipantId: 'slack:U0LAN0Z89',
        messageId: '1483037603.017503',
      },
    });
  });

  it('reads another bot as an agent', () => {
    const turn = message(parseSlackEvent(fixture('bot-message'), { self }));
    expect(turn.participant).toEqual({ kind: 'agent', id: 'slack:BB12033', displayName: 'github' });
  });

  it('ignores our own messages, by user id and by bot id', () => {
    const body = fixture('message-channel');
    const event = body.event as Record<string, unknown>;
    expect(
      parseSlackEvent({ ...body, event: { ...event, user: self.userId } }, { self }).kind,
    ).toBe('ignored');
    expect(
      parseSlackEvent(
        { ...body, event: { ...event, user: undefined, bot_id: self.botId } },
        { self },
      ).kind,
    ).toBe('ignored');
  });

  it('reads message_changed as an edit of the original ts', () => {
    expect(parseSlackEvent(fixture('message-changed'), { self })).toEqual({
      kind: 'edit',
      edit: {
        channelType: 'slack',
        channelId: 'C123ABC456',
        messageId: '1355517523.000005',
        content: 'Hello, world!',
        editedAt: '2013-01-22T18:19:15.000Z',
      },
    });
  });

  it('ignores a message_changed whose text did not change (link unfurls)', () => {
    const body = fixture('message-changed');
    const event = body.event as { message: { text: string }; previous_message: { text: string } };
    event.previous_message.text = event.message.text;
    expect(parseSlackEvent(body, { self }).kind).toBe('ignored');
  });

  it('ignores the message_changed of its own chat.update, and records a deletion of its message', () => {
    const changed = fixture('message-changed');
    const event = changed.event as { message: Record<string, unknown> };
    event.message = { ...event.message, user: self.userId, bot_id: self.botId };
    expect(parseSlackEvent(changed, { self })).toEqual({
      kind: 'ignored',
      reason: 'our own edit',
    });
    const deleted = fixture('message-deleted');
    const gone = deleted.event as { previous_message: Record<string, unknown> };
    gone.previous_message = { ...gone.previous_message, user: self.userId, bot_id: self.botId };
    expect(parseSlackEvent(deleted, { self }).kind).toBe('delete');
  });

  it('reads message_deleted as a deletion of deleted_ts', () => {
    expect(parseSlackEvent(fixture('message-deleted'), { self })).toEqual({
      kind: 'delete',
      deletion: {
        channelType: 'slack',
        channelId: 'C123ABC456',
        messageId: '1358878749.000002',
        deletedAt: '2013-01-22T18:19:15.000Z',
      },
    });
  });

  it('skips housekeeping subtypes such as channel_join', () => {
    expect(parseSlackEvent(fixture('channel-join'), { self }).kind).toBe('ignored');
  });

  it('throws MalformedEventError for a message without a ts or author', () => {
    const body = fixture('message-channel');
    const event = body.event as Record<string, unknown>;
    expect(() =>
      parseSlackEvent({ ...body, event: { ...event, ts: undefined } }, { self }),
    ).toThrow(MalformedEventError);
    expect(() =>
      parseSlackEvent({ ...body, event: { ...event, user: undefined } }, { self }),
    ).toThrow(MalformedEventError);
    expect(() => parseSlackEvent({ ...body, event: { ...event, text: 42 } }, { self })).toThrow(
      MalformedEventError,
    );
  });
});

describe('Slack text', () => {
  it('decodes special mentions', () => {
    expect(slackTextToPlain('<!here> &lt;b&gt; <!subteam^S1|@oncall>')).toBe('@here <b> @oncall');
  });

  it('writes Markdown as mrkdwn and leaves code alone', () => {
    expect(
      markdownToMrkdwn('# Plan\n**bold** and *it* and ~~old~~ [docs](https://x.io)\n`**raw**`'),
    ).toBe('*Plan*\n*bold* and _it_ and ~old~ <https://x.io|docs>\n`**raw**`');
  });

  it('escapes &, < and > but keeps Slack tokens', () => {
    expect(escapeSlackText('a < b && <@U123> <https://x.io|x>')).toBe(
      'a &lt; b &amp;&amp; <@U123> <https://x.io|x>',
    );
  });

  it('splits long text at 4000 characters with code fences balanced', () => {
    const code = '```ts\n' + 'const x = 1;\n'.repeat(500) + '```';
    const parts = formatSlackText('intro\n\n' + code);
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(4000);
      expect(part.match(/```/g)?.length ?? 0).toSatisfy((n: number) => n % 2 === 0);
    }
  });
});
