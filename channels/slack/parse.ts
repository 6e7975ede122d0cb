/**
 * Slack Events API payloads → colloquy turns. Pure functions: no network, no clock, no state.
 * The channel resolves display names first and passes them in.
 *
 * @example
 * ```ts
 * import { parseSlackEvent } from 'colloquy/slack';
 * const parsed = parseSlackEvent(body, { self: { userId: 'U0BOT', botId: 'B0BOT' }, teamId: 'T0001' });
 * if (parsed.kind === 'message') await handlers.message(parsed.message);
 * ```
 */
import { MalformedEventError } from '../../src/errors.js';
import type { PostPlace } from '../../src/posts.js';
import type {
  ConversationScope,
  MessageDeletion,
  MessageEdit,
  NewMessage,
  Participant,
} from '../../src/types.js';
import { slackAttachments } from './attachments.js';

/** Our own ids on Slack, from `auth.test`. */
export interface SlackSelf {
  /** The bot user id (`U…`): what `<@U…>` mentions of the bot contain. */
  userId: string;
  /** The bot id (`B…`): what our own posts carry as `bot_id`. */
  botId?: string;
}

export interface SlackParseContext {
  self: SlackSelf;
  /**
   * The bot user ids (`U…`) of the bot's other Slack apps: their messages and edits are the
   * bot's own too (an app hears what the others post in its channels).
   */
  siblings?: readonly string[];
  /** Workspace id used when the envelope carries none (from `auth.test`). */
  teamId?: string;
  /** Display names by Slack user id (from `users.info`); ids without a name fall back to the id. */
  names?: ReadonlyMap<string, string>;
  /** Channel name by channel id, stored as `metadata.channelName`. */
  channelName?: string;
}

/** What one Events API delivery means for colloquy. */
export type ParsedSlackEvent =
  | { kind: 'message'; message: NewMessage }
  | { kind: 'edit'; edit: MessageEdit }
  | { kind: 'delete'; deletion: MessageDeletion }
  | { kind: 'ignored'; reason: string };

/** The fields of a Slack `message` / `app_mention` event that colloquy reads. */
export interface SlackMessageEvent {
  type: 'message' | 'app_mention';
  subtype?: string;
  channel: string;
  channel_type?: 'channel' | 'group' | 'im' | 'mpim' | 'app_home';
  user?: string;
  bot_id?: string;
  username?: string;
  bot_profile?: { name?: string };
  user_profile?: { display_name?: string; real_name?: string };
  text?: string;
  ts: string;
  thread_ts?: string;
  parent_user_id?: string;
  team?: string;
  event_ts?: string;
  edited?: { user?: string; ts?: string };
  message?: Omit<SlackMessageEvent, 'channel'> & { channel?: string };
  previous_message?: Omit<SlackMessageEvent, 'channel'> & { channel?: string };
  deleted_ts?: string;
}

/** Subtypes that are ordinary turns written by someone. Others (joins, topic changes…) are skipped. */
const TURN_SUBTYPES = new Set([
  undefined,
  'bot_message',
  'thread_broadcast',
  'file_share',
  'me_message',
]);

/** Slackbot's user id: its notices are the workspace talking, not a person. */
const SLACKBOT = 'USLACKBOT';

const MENTION = /<@([UW][A-Z0-9]+)(?:\|[^>]*)?>/g;

/**
 * `slack:<team>:<channel>[:<thread_ts>]` — the documented conversation id.
 *
 * @example
 * ```ts
 * slackConversationId('T1', 'C1', '1700000000.000100'); // 'slack:T1:C1:1700000000.000100'
 * ```
 */
export function slackConversationId(teamId: string, channelId: string, threadTs?: string): string {
  return threadTs === undefined
    ? `slack:${teamId}:${channelId}`
    : `slack:${teamId}:${channelId}:${threadTs}`;
}

/** `slack:<team>:<channel>:<ts>` — the colloquy id of one Slack message. */
export function slackMessageId(teamId: string, channelId: string, ts: string): string {
  return `slack:${teamId}:${channelId}:${ts}`;
}

/** `slack:<user or bot id>` — the participant id of a Slack user. */
export function slackParticipantId(userId: string): string {
  return `slack:${userId}`;
}

/** A Slack `ts` (`"1700000000.123456"`, seconds) as an ISO 8601 UTC timestamp (ms precision). */
export function slackTsToIso(ts: string): string {
  const seconds = Number(ts);
  if (!Number.isFinite(seconds)) throw new MalformedEventError(`Not a Slack ts: ${ts}`);
  return new Date(Math.floor(seconds * 1000)).toISOString();
}

/** User ids mentioned with `<@U123>` or `<@U123|name>`, in order, without repeats. */
export function slackMentionedUserIds(text: string): string[] {
  const ids = [...text.matchAll(MENTION)].map((match) => match[1] as string);
  return [...new Set(ids)];
}

/**
 * Slack's markup as readable text: `<@U1>` → `@Alice`, `<#C1|general>` → `#general`,
 * `<!here>` → `@here`, `<https://x|label>` → `label (https://x)`, entities decoded.
 *
 * @example
 * ```ts
 * slackTextToPlain('<@U1> &amp; <#C1|general>', new Map([['U1', 'Alice']])); // '@Alice & #general'
 * ```
 */
export function slackTextToPlain(
  text: string,
  names: ReadonlyMap<string, string> = new Map(),
): string {
  return text
    .replace(/<([^<>]+)>/g, (whole, inner: string) => {
      const [target = '', label] = inner.split('|', 2);
      if (target.startsWith('@'))
        return `@${label ?? names.get(target.slice(1)) ?? target.slice(1)}`;
      if (target.startsWith('#')) return `#${label ?? target.slice(1)}`;
      if (target.startsWith('!')) {
        const special = target.slice(1).split('^')[0] ?? '';
        return label ?? (['here', 'channel', 'everyone'].includes(special) ? `@${special}` : whole);
      }
      if (/^(https?|mailto):/.test(target)) {
        if (label === undefined || label === target) return target;
        return `${label} (${target})`;
      }
      return whole;
    })
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&');
}

/** Slack user ids whose display names a parse of this event would use (author and mentions). */
export function slackUserIdsToResolve(event: unknown): string[] {
  if (!isRecord(event)) return [];
  const inner =
    event.subtype === 'message_changed' && isRecord(event.message) ? event.message : event;
  const ids: string[] = [];
  if (typeof inner.user === 'string' && inner.bot_id === undefined && inner.user !== SLACKBOT) {
    ids.push(inner.user);
  }
  if (typeof inner.text === 'string') ids.push(...slackMentionedUserIds(inner.text));
  return [...new Set(ids)];
}

/**
 * Parses one Events API envelope (`{ type: 'event_callback', team_id, event_id, event }`) or a
 * bare `message` / `app_mention` event.
 *
 * - our own messages (`user` = our bot user id or a sibling app's, or `bot_id` = ours), and the
 *   `message_changed` of their `chat.update`s → ignored (a deletion of one is recorded: people
 *   delete);
 * - other bots (`bot_id`, `subtype: 'bot_message'`) → participant kind `agent`;
 * - Slackbot (`USLACKBOT`: "You have been removed from #…") → participant kind `system`;
 * - `thread_ts` ≠ `ts` → in the thread's conversation, replying to the thread's parent;
 * - `channel_type: 'im'` → scope `dm`, in a thread of the DM too (Slack's assistant threads);
 *   other threads → scope `thread`;
 * - `message_changed` → edit, `message_deleted` → delete.
 *
 * Throws `MalformedEventError` when required fields are missing or of the wrong type.
 */
export function parseSlackEvent(body: unknown, ctx: SlackParseContext): ParsedSlackEvent {
  const envelope = isRecord(body) && isRecord(body.event) ? body : { event: body };
  const event = envelope.event;
  const teamId =
    str(envelope.team_id) ?? ctx.teamId ?? (isRecord(event) ? str(event.team) : undefined);
  if (!isRecord(event) || typeof event.type !== 'string') {
    throw malformed('Slack event without a type', envelope);
  }
  if (event.type !== 'message' && event.type !== 'app_mention') {
    return { kind: 'ignored', reason: `event type ${event.type}` };
  }
  const channel = str(event.channel);
  if (channel === undefined) throw malformed('Slack message event without a channel', envelope);
  if (teamId === undefined) throw malformed('Slack event without a team id', envelope);

  if (event.subtype === 'message_changed') return parseEdit(event, channel, ctx, envelope);
  if (event.subtype === 'message_deleted') {
    const deletedTs =
      str(event.deleted_ts) ??
      (isRecord(event.previous_message) ? str(event.previous_message.ts) : undefined);
    if (deletedTs === undefined) throw malformed('message_deleted without deleted_ts', envelope);
    const at = str(event.event_ts) ?? str(event.ts) ?? deletedTs;
    return {
      kind: 'delete',
      deletion: {
        channelType: 'slack',
        channelId: channel,
        messageId: deletedTs,
        deletedAt: slackTsToIso(at),
      },
    };
  }
  if (!TURN_SUBTYPES.has(str(event.subtype))) {
    return { kind: 'ignored', reason: `message subtype ${String(event.subtype)}` };
  }
  return parseTurn(event, channel, teamId, ctx, envelope);
}

function parseTurn(
  event: Record<string, unknown>,
  channel: string,
  teamId: string,
  ctx: SlackParseContext,
  envelope: Record<string, unknown>,
): ParsedSlackEvent {
  const ts = str(event.ts);
  const text = event.text ?? '';
  const user = str(event.user);
  const botId = str(event.bot_id);
  if (ts === undefined || !Number.isFinite(Number(ts)))
    throw malformed('Slack message without a valid ts', envelope);
  if (typeof text !== 'string') throw malformed('Slack message text is not a string', envelope);
  if (user === undefined && botId === undefined)
    throw malformed('Slack message without user or bot_id', envelope);
  if (isOurs(user, botId, ctx)) return { kind: 'ignored', reason: 'our own message' };

  const names = ctx.names ?? new Map<string, string>();
  const participant = author(event, user, botId, names);
  const threadTs = str(event.thread_ts);
  const inThread = threadTs !== undefined && threadTs !== ts;
  const scope: ConversationScope = isDm(event, channel) ? 'dm' : inThread ? 'thread' : 'channel';
  const parentUser = str(event.parent_user_id);
  const eventId = str(envelope.event_id);

  const content = slackTextToPlain(text, names);
  const attachments = slackAttachments(event);
  const message: NewMessage = {
    id: slackMessageId(teamId, channel, ts),
    conversationId: slackConversationId(teamId, channel, inThread ? threadTs : undefined),
    participant,
    content,
    timestamp: slackTsToIso(ts),
    scope,
    metadata: {
      channelType: 'slack',
      channelId: channel,
      ...(ctx.channelName !== undefined && { channelName: ctx.channelName }),
      ...(inThread && {
        threadId: threadTs,
        replyToMessageId: threadTs,
        // The thread's first message lives in the channel's (or DM's) conversation.
        threadParent: {
          conversationId: slackConversationId(teamId, channel),
          id: slackMessageId(teamId, channel, threadTs),
        },
      }),
      ...(inThread &&
        parentUser !== undefined && { replyToParticipantId: slackParticipantId(parentUser) }),
      messageId: ts,
      mentions: slackMentionedUserIds(text).map(slackParticipantId),
      teamId,
      ...(eventId !== undefined && { slackEventId: eventId }),
      ...(content !== text && { slackText: text }),
    },
    ...(attachments.length > 0 && { attachments }),
  };
  return { kind: 'message', message };
}

function parseEdit(
  event: Record<string, unknown>,
  channel: string,
  ctx: SlackParseContext,
  envelope: Record<string, unknown>,
): ParsedSlackEvent {
  const edited = event.message;
  if (!isRecord(edited) || str(edited.ts) === undefined || typeof edited.text !== 'string') {
    throw malformed('message_changed without message.ts and message.text', envelope);
  }
  // The bot's own `chat.update` (a reply growing, settled or stopped): the store has the reply
  // as the agent wrote it, not as Slack renders it.
  if (isOurs(str(edited.user), str(edited.bot_id), ctx)) {
    return { kind: 'ignored', reason: 'our own edit' };
  }
  const previous = isRecord(event.previous_message) ? event.previous_message : undefined;
  if (previous !== undefined && previous.text === edited.text) {
    return {
      kind: 'ignored',
      reason: 'message_changed without a text change (unfurl, reply count)',
    };
  }
  const editedTs =
    (isRecord(edited.edited) ? str(edited.edited.ts) : undefined) ??
    str(event.event_ts) ??
    str(event.ts);
  return {
    kind: 'edit',
    edit: {
      channelType: 'slack',
      channelId: channel,
      messageId: edited.ts as string,
      content: slackTextToPlain(edited.text, ctx.names),
      editedAt: slackTsToIso(editedTs ?? (edited.ts as string)),
    },
  };
}

function author(
  event: Record<string, unknown>,
  user: string | undefined,
  botId: string | undefined,
  names: ReadonlyMap<string, string>,
): Participant {
  const profile = isRecord(event.user_profile) ? event.user_profile : {};
  const botProfile = isRecord(event.bot_profile) ? event.bot_profile : {};
  const isBot = botId !== undefined || event.subtype === 'bot_message';
  const id = (user ?? botId) as string;
  if (id === SLACKBOT)
    return { kind: 'system', id: slackParticipantId(id), displayName: 'Slackbot' };
  const displayName =
    (isBot ? (str(event.username) ?? str(botProfile.name)) : undefined) ??
    names.get(id) ??
    nonEmpty(profile.display_name) ??
    nonEmpty(profile.real_name) ??
    id;
  return { kind: isBot ? 'agent' : 'user', id: slackParticipantId(id), displayName };
}

/** Whether a message's author (`user`, `bot_id`) is this bot, through this app or a sibling. */
function isOurs(user: string | undefined, botId: string | undefined, ctx: SlackParseContext) {
  return (
    (user !== undefined && (user === ctx.self.userId || ctx.siblings?.includes(user) === true)) ||
    (botId !== undefined && botId === ctx.self.botId)
  );
}

function isDm(event: Record<string, unknown>, channel: string): boolean {
  return event.channel_type === undefined ? channel.startsWith('D') : event.channel_type === 'im';
}

function malformed(reason: string, envelope: Record<string, unknown>): MalformedEventError {
  const eventId = str(envelope.event_id);
  return new MalformedEventError(`${reason}${eventId === undefined ? '' : ` (event ${eventId})`}`, {
    cause: envelope,
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function nonEmpty(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 ? value : undefined;
}

/** What Bolt's Socket Mode client emits as `slack_event`. */
export interface SocketModeEvent {
  type: string;
  body: Record<string, unknown>;
  ack(response?: unknown): Promise<void>;
  retry_num?: number;
  retry_reason?: string;
}

/**
 * Where a post into a Slack conversation goes, read from its id (`slackConversationId`'s
 * scheme): a channel id starting with `D` is a DM, one with a thread `ts` a thread; undefined
 * for any other id.
 *
 * @example
 * ```ts
 * slackPostPlace('slack:T1:C1:1700000000.000100'); // { scope: 'thread', channelId: 'C1', threadId: '1700000000.000100', … }
 * ```
 */
export function slackPostPlace(conversationId: string): PostPlace | undefined {
  const match = /^slack:[A-Z0-9]+:([A-Z0-9]+)(?::(\d+\.\d+))?$/.exec(conversationId);
  const [, channelId, threadId] = match ?? [];
  if (channelId === undefined) return undefined;
  const dm = channelId.startsWith('D');
  if (threadId === undefined) return { conversationId, scope: dm ? 'dm' : 'channel', channelId };
  return { conversationId, scope: dm ? 'dm' : 'thread', channelId, threadId };
}
