import type { Agent } from '../agent.js';
import type { Action, ActionSelect, OutboundMessage, ReplyPlace, SentMessage } from '../channel.js';
import { isoTimestamp, samePlace } from '../types.js';
import type { ChannelType, NewMessage, Participant, StoredMessage } from '../types.js';

/**
 * Pure helpers for one turn: mention resolution by agent name, the outbound message that
 * answers an inbound one, the stored turn for what was sent, and the loop-guard count.
 */

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * True when `text` mentions `@name` as a whole word, case-insensitively.
 *
 * @example
 * ```ts
 * mentionsName('thanks @Support-Agent!', 'support-agent'); // true
 * mentionsName('mail me@support-agent.io', 'support-agent'); // false
 * ```
 */
export function mentionsName(text: string, name: string): boolean {
  if (name === '') return false;
  return new RegExp(`(^|[^\\w@])@${escapeRegExp(name)}(?![\\w-])`, 'iu').test(text);
}

/**
 * Adds to `metadata.mentions` the id of every agent whose name (or id) appears as `@name` in
 * the text. Returns the same object when nothing was added.
 *
 * @example
 * ```ts
 * withAgentMentions(turn, [supportAgent]).metadata.mentions; // [..., 'support-agent']
 * ```
 */
export function withAgentMentions(message: NewMessage, agents: readonly Agent[]): NewMessage {
  const found = agents
    .filter((agent) => !(message.metadata.mentions ?? []).includes(agent.id))
    .filter((agent) => agent.id !== message.participant.id)
    .filter((agent) => [agent.name, agent.id].some((name) => mentionsName(message.content, name)))
    .map((agent) => agent.id);
  if (found.length === 0) return message;
  return {
    ...message,
    metadata: { ...message.metadata, mentions: [...(message.metadata.mentions ?? []), ...found] },
  };
}

/**
 * `reply` handing the turn it answers (`answered`) on by @mention: `metadata.handoffTurns`
 * names what the agent it hands to is shown with it — the turns of earlier hand-offs in the
 * chain, `answered`, and the rows the handing agent recorded answering it (`recorded`).
 *
 * @example
 * ```ts
 * withHandoff(reply, question, ['q1:tool:0:c1:call', 'q1:tool:0:c1:result']).metadata.handoffTurns;
 * // ['q1', 'q1:tool:0:c1:call', 'q1:tool:0:c1:result']
 * ```
 */
export function withHandoff(
  reply: NewMessage,
  answered: NewMessage,
  recorded: readonly string[],
): NewMessage {
  const earlier = answered.metadata.handoffTurns ?? [];
  const handoffTurns = [...new Set([...earlier, answered.id, ...recorded])];
  return { ...reply, metadata: { ...reply.metadata, handoffTurns } };
}

/**
 * Where a reply to `inbound` goes: same conversation, channel and thread, as a reply to it,
 * unless the channel names another `place` (`Channel.replyPlace`).
 *
 * @example
 * ```ts
 * await channel.send(outboundFor(inbound, 'On its way!', channel.replyPlace?.(inbound)));
 * ```
 */
export function outboundFor(
  inbound: NewMessage,
  content: string,
  place?: ReplyPlace,
): OutboundMessage {
  const { channelId, messageId } = inbound.metadata;
  const threadId = place === undefined ? inbound.metadata.threadId : place.threadId;
  return {
    conversationId: place?.conversationId ?? inbound.conversationId,
    scope: place?.scope ?? inbound.scope,
    channelId,
    ...(threadId === undefined ? {} : { threadId }),
    ...(messageId === undefined ? {} : { replyToMessageId: messageId }),
    content,
  };
}

/**
 * The buttons and select a reply turn carries (`metadata.actions`, `metadata.select`: an
 * agent's `AgentResult.metadata` sets them), for the message that shows it.
 *
 * @example
 * ```ts
 * const outbound = { ...outboundFor(inbound, reply.content), ...actionsOf(reply) };
 * ```
 */
export function actionsOf(turn: NewMessage): Pick<OutboundMessage, 'actions' | 'select'> {
  const { actions, select } = turn.metadata;
  return {
    ...(Array.isArray(actions) && actions.length > 0 && { actions: actions as Action[] }),
    ...(typeof select === 'object' && select !== null && { select: select as ActionSelect }),
  };
}

/**
 * The turn to store for a reply the channel posted: participant `from`, the first platform id
 * as `metadata.messageId`, the rest as `partMessageIds`.
 *
 * @example
 * ```ts
 * const sent = await channel.send(outboundFor(inbound, text));
 * await store.append(sentTurn({ inbound, channelType: channel.type, content: text, from, sent }));
 * ```
 */
export function sentTurn(options: {
  inbound: NewMessage;
  channelType: ChannelType;
  content: string;
  from: Participant;
  sent: SentMessage;
  extra?: Record<string, unknown>;
  /** The agent's `traceId` and `sources` for the reply (`AgentResult`). */
  provenance?: Pick<NewMessage, 'traceId' | 'sources'>;
  /** Where the reply went, when the channel put it elsewhere (`Channel.replyPlace`). */
  place?: ReplyPlace;
}): NewMessage {
  const { inbound, channelType, content, from, sent, extra, place, provenance = {} } = options;
  const [first, ...rest] = sent.messageIds;
  const { channelId, messageId } = inbound.metadata;
  const local =
    first ?? `local-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;
  return {
    id: sent.id ?? `${channelType}:${channelId}:${local}`,
    conversationId: place?.conversationId ?? inbound.conversationId,
    participant: from,
    content,
    timestamp: sent.timestamp ?? isoTimestamp(),
    scope: place?.scope ?? inbound.scope,
    metadata: {
      ...extra,
      ...samePlace(inbound, place),
      channelType,
      ...(first === undefined ? {} : { messageId: first }),
      ...(rest.length === 0 ? {} : { partMessageIds: rest }),
      ...(messageId === undefined ? {} : { replyToMessageId: messageId }),
      replyToParticipantId: inbound.participant.id,
    },
    ...(provenance.traceId === undefined ? {} : { traceId: provenance.traceId }),
    ...(provenance.sources?.length ? { sources: provenance.sources } : {}),
  };
}

/**
 * How many agent turns in a row end the conversation (tool rows and summaries do not count).
 *
 * @example
 * ```ts
 * trailingAgentTurns(await store.get(conversationId, { limit: 20 })); // 3
 * ```
 */
export function trailingAgentTurns(turns: readonly StoredMessage[]): number {
  return trailingAgentRun(turns).count;
}

/**
 * The run of agent turns that ends the conversation: its length, and whether a turn that is
 * not an agent's was reached (`ended`) — when not, older rows may hold more of the run.
 *
 * @example
 * ```ts
 * const { count, ended } = trailingAgentRun(await store.get(conversationId, { limit: 20 }));
 * ```
 */
export function trailingAgentRun(turns: readonly StoredMessage[]): {
  count: number;
  ended: boolean;
} {
  let count = 0;
  for (let i = turns.length - 1; i >= 0; i--) {
    const turn = turns[i]!;
    if (turn.metadata['toolRole'] !== undefined || turn.metadata.isSummary === true) continue;
    if (turn.participant.kind !== 'agent') return { count, ended: true };
    count++;
  }
  return { count, ended: false };
}
