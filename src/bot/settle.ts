import type { MessageAttachment } from '../attachments.js';
import type { Channel, OutboundMessage, SentMessage, UnsettledReply } from '../channel.js';
import { ColloquyError, StoreError, mayPass, messageOf } from '../errors.js';
import type { Logger } from '../logger.js';
import type { AgentRun } from '../runs.js';
import type { ConversationStore } from '../store.js';
import { channelOf } from '../channel/place.js';
import type { StoredMessage } from '../types.js';
import { confirmation } from './outbox.js';
import type { Write } from './outbox.js';

/**
 * What the bot does with a reply a crash left unconfirmed on a channel that cannot settle it
 * (one without `Channel.settle`, such as Telegram): `'leave'` it unconfirmed, never sent
 * again (at most once), or `'resend'` it (at least once: a person may get it twice).
 */
export type UnconfirmedReplies = 'leave' | 'resend';

/** How the bot settles a channel's unconfirmed replies: chosen once, at start. */
export type Settle = (reply: UnsettledReply) => Promise<SentMessage | undefined>;

/**
 * The way `channel`'s unconfirmed replies are settled: exactly, by the channel (`settle`), or
 * by sending them again (`'resend'`), or not at all (`undefined`: they stay unconfirmed).
 *
 * @example
 * ```ts
 * const settle = settlerFor(telegram, 'resend'); // sends the parts not confirmed again
 * ```
 */
export function settlerFor(channel: Channel, unconfirmed: UnconfirmedReplies): Settle | undefined {
  if (channel.settle !== undefined) return (reply) => channel.settle!(reply);
  if (unconfirmed === 'leave') return undefined;
  return (reply) => channel.send(reply.message, { skipParts: reply.confirmed.length });
}

/**
 * What settling needs, with each channel's way of settling chosen once (`settlerFor`); a
 * channel that cannot settle says so in the log, once.
 */
export function settling(
  channels: readonly Channel[],
  unconfirmed: UnconfirmedReplies = 'leave',
  deps: Omit<SettleDeps, 'settlerOf'>,
): SettleDeps {
  const { logger } = deps;
  const settlers = new Map<Channel, Settle | undefined>();
  for (const channel of channels) {
    settlers.set(channel, settlerFor(channel, unconfirmed));
    if (channel.settle !== undefined) continue;
    const fallback = unconfirmed === 'leave' ? 'left unconfirmed' : 'sent again';
    logger.debug(`${channel.type}: a reply a crash leaves unconfirmed is ${fallback}`);
  }
  return {
    ...deps,
    settlerOf: (type, conversationId, via) => {
      const channel =
        type === undefined ? undefined : channelOf(channels, type, conversationId, via);
      return channel === undefined ? undefined : settlers.get(channel);
    },
  };
}

/** The message a recorded reply turn went out as (where it went, its text, its id as key). */
export function outboundOf(reply: StoredMessage): OutboundMessage {
  const { channelId, threadId, replyToMessageId } = reply.metadata;
  return {
    conversationId: reply.conversationId,
    scope: reply.scope,
    channelId: channelId ?? '',
    ...(threadId !== undefined && { threadId }),
    ...(replyToMessageId !== undefined && { replyToMessageId }),
    content: reply.content,
    replyId: reply.id,
  };
}

/** What settling needs from the bot. */
export interface SettleDeps {
  store: ConversationStore;
  write: Write;
  report(error: ColloquyError): void;
  /** Says which files a settled reply went out without. */
  logger: Logger;
  /**
   * How replies in `conversationId` on its channel of `type` (the one whose bot identity is
   * `via`, the reply's `metadata.via`, where there is one) are settled, if they are.
   */
  settlerOf(type: string | undefined, conversationId: string, via?: string): Settle | undefined;
}

/**
 * How an unfinished run whose reply was recorded ends: `again` leaves it to be settled again
 * once the passing store failure it names passes (the caller reports it), `undefined` leaves
 * it for a restart.
 */
export type Settled =
  { status: 'answered' | 'unconfirmed'; error?: string } | { again: StoreError } | undefined;

const NEVER_CONFIRMED = 'the reply was recorded but the platform never confirmed it';

/**
 * Settles the reply of `run`, recorded before a crash: a reply confirmed `sent` answers the
 * run; one left `sending` is settled on its channel (found by its key, or posted when the
 * platform lacks it) and confirmed `sent` with every part's platform id and only the files the
 * platform reports (see `filesSettled`), or, where the channel
 * cannot settle it (or the platform cannot tell), marked `unconfirmed`. A reply the store fails
 * to read for a passing reason leaves the run as it is, to be settled again (`again`); a
 * settled reply whose confirmation capture gave up on leaves it for a restart.
 *
 * @example
 * ```ts
 * const settled = await settleReply(deps, run); // { status: 'answered' }
 * ```
 */
export async function settleReply(deps: SettleDeps, run: AgentRun): Promise<Settled> {
  const { reply } = run;
  if (reply?.delivery === 'sent') return { status: 'answered' };
  const id = run.replyId!;
  const unconfirmed = { status: 'unconfirmed' as const, error: NEVER_CONFIRMED };
  // `unconfirmed` too: a send the network cut off, its run not ended before the crash.
  const open = reply?.delivery === 'sending' || reply?.delivery === 'unconfirmed';
  if (reply === undefined || !open) return unconfirmed;
  const where = { conversationId: reply.conversationId, messageId: id };
  let turn: StoredMessage | undefined;
  try {
    turn = await deps.store.getMessage(reply.conversationId, id);
  } catch (cause) {
    const error = new StoreError(`could not read reply ${id} to settle it`, { cause, ...where });
    if (mayPass(cause)) return { again: error };
    deps.report(error);
  }
  const settle = deps.settlerOf(
    turn?.metadata.channelType,
    reply.conversationId,
    turn?.metadata.via,
  );
  let sent: SentMessage | undefined;
  if (turn !== undefined && settle !== undefined) {
    try {
      const message = outboundOf(turn);
      sent = await settle({ message, confirmed: reply.messageIds, recordedAt: turn.timestamp });
    } catch (cause) {
      deps.report(
        cause instanceof ColloquyError
          ? cause
          : new ColloquyError(`could not settle reply ${id}: ${messageOf(cause)}`, {
              cause,
              ...where,
            }),
      );
    }
  }
  try {
    if (turn === undefined || sent === undefined) {
      const { conversationId, messageIds } = reply;
      await deps.write({
        kind: 'confirm',
        confirmation: { id, conversationId, messageIds, delivery: 'unconfirmed' },
      });
      return unconfirmed;
    }
    const messageIds = [...reply.messageIds, ...sent.messageIds];
    const timestamp = reply.messageIds.length === 0 ? sent.timestamp : undefined;
    const attachments = filesSettled(deps.logger, turn, sent);
    await deps.write(confirmation(turn, messageIds, 'sent', { timestamp, attachments }));
    return { status: 'answered' };
  } catch (cause) {
    deps.report(
      new StoreError(`could not record how reply ${id} was settled`, { cause, ...where }),
    );
    return undefined;
  }
}

/**
 * The files a settled reply is recorded with: those the platform reports (`SentMessage.files`),
 * none when it reports none. The bytes are not kept, so a reply posted again goes without its
 * files, and a reply found posted cannot show them (they are messages of their own, with no
 * key): the record never claims a file the person may not have. Says once which files it leaves
 * out; a reply recorded without files is confirmed as it is (`undefined`).
 *
 * @example
 * ```ts
 * filesSettled(logger, turn, { messageIds: ['m1'] }); // [] (and a line naming turn's files)
 * ```
 */
export function filesSettled(
  logger: Logger,
  turn: StoredMessage,
  sent: SentMessage,
): MessageAttachment[] | undefined {
  const recorded = turn.attachments ?? [];
  if (recorded.length === 0) return sent.files;
  const files = sent.files ?? [];
  if (files.length < recorded.length) {
    const names = recorded.map((file) => file.name ?? file.kind).join(', ');
    logger.warn(
      `reply ${turn.id} settled without its ${recorded.length} file(s) (${names}): ` +
        'their bytes are not kept to send again; recorded with the files the platform reports',
    );
  }
  return files;
}
