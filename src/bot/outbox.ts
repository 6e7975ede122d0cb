import { attachment, kindOfMimeType } from '../attachments.js';
import type { MessageAttachment } from '../attachments.js';
import type { Channel, OutboundFile, OutboundMessage, ReplyPlace } from '../channel.js';
import { ColloquyError, deliveryAfterFailure } from '../errors.js';
import type { ReplyDelivery } from '../runs.js';
import type { AppendResult, StoreOperation } from '../store.js';
import type { NewMessage } from '../types.js';
import { isoTimestamp, samePlace } from '../types.js';
import { actionsOf, outboundFor } from './turn.js';

/** Commits one operation; rejects with a `StoreError` when it was not committed. */
export type Write = (op: StoreOperation) => Promise<unknown>;

/** One reply to send through the outbox: answering `inbound`, or a post (`outbound` says where). */
export type OutgoingReply = OutgoingTurn &
  ({ inbound: NewMessage } | { outbound: OutboundMessage });

/** What every message sent through the outbox has. */
export interface OutgoingTurn {
  channel: Channel;
  /** The reply turn, with its colloquy id; `metadata.messageId` is filled in once sent. */
  turn: NewMessage;
  place?: ReplyPlace;
  /**
   * Called as the confirmation that ends a send (`'sent'`) is handed to `write`, in the same
   * tick: a write the caller makes then (its run answered) commits with it.
   */
  onSent?: () => void;
  /** Posted after the text; recorded, as the platform answered, in the turn's `attachments`. */
  files?: readonly OutboundFile[];
}

/**
 * The reply turn for `content` answering `inbound`, before it is sent: its colloquy id is
 * `id` (the platform's ids come with the confirmation), placed where `channel` replies
 * (`Channel.replyPlace`).
 *
 * @example
 * ```ts
 * const turn = replyTurn({ id: `${runId}:reply`, inbound, channel, content, from });
 * ```
 */
export function replyTurn(options: {
  id: string;
  inbound: NewMessage;
  channel: Pick<Channel, 'type' | 'replyPlace'>;
  content: string;
  from: NewMessage['participant'];
  extra?: Record<string, unknown>;
  /** The agent's `traceId` and `sources` for the reply. */
  provenance?: Pick<NewMessage, 'traceId' | 'sources'>;
}): NewMessage {
  const { id, inbound, channel, content, from, extra, provenance = {} } = options;
  const place = channel.replyPlace?.(inbound);
  const { messageId } = inbound.metadata;
  const threadId = place === undefined ? inbound.metadata.threadId : place.threadId;
  const { threadId: _, ...where } = samePlace(inbound);
  return {
    id,
    conversationId: place?.conversationId ?? inbound.conversationId,
    participant: from,
    content,
    timestamp: isoTimestamp(),
    scope: place?.scope ?? inbound.scope,
    metadata: {
      ...extra,
      ...where,
      ...(threadId === undefined ? {} : { threadId }),
      channelType: channel.type,
      ...(messageId === undefined ? {} : { replyToMessageId: messageId }),
      replyToParticipantId: inbound.participant.id,
    },
    ...(provenance.traceId === undefined ? {} : { traceId: provenance.traceId }),
    ...(provenance.sources?.length ? { sources: provenance.sources } : {}),
  };
}

/**
 * Sends a reply through the outbox: the reply turn is committed (`delivery = 'sending'`)
 * before the platform is called, every part of a split reply but the last is confirmed with
 * its platform id before the next is posted, and the whole is confirmed (`'sent'`) once the
 * platform answered. If the record cannot be committed nothing is sent (the `StoreError` is
 * thrown). A refused reply is marked `'failed'`; when no answer came (the network failed) it
 * is `'unconfirmed'`, as it may have reached the platform; the parts that did go out are kept,
 * marked `partial`. Resolves once the platform answered, with the turn as sent (platform ids
 * in its metadata) and `confirmed`, the commit of its confirmation: the caller need not wait
 * for it before going on (the confirmation is already queued behind the record, so every
 * later write commits after it), and it rejects with a `StoreError` when not committed.
 *
 * @example
 * ```ts
 * const { sent, confirmed } = await sendThroughOutbox(write, { channel, inbound, turn });
 * ```
 */
export async function sendThroughOutbox(
  write: Write,
  reply: OutgoingReply,
): Promise<{ sent: NewMessage; confirmed: Promise<unknown> }> {
  const { channel, turn, place } = reply;
  const files = 'outbound' in reply ? reply.outbound.files : reply.files;
  // The record names the files it is about to send; the platform's ids come with `sent`.
  const sending = filesSending(files);
  try {
    const message = sending === undefined ? turn : { ...turn, attachments: sending };
    const recorded = await write({ kind: 'reply', message });
    // A post recorded `failed` by an earlier attempt is sent again; a reply's run is not.
    const retried = 'outbound' in reply && deliveryOf(recorded) === 'failed';
    if (!retried && recordedByAnother(recorded, turn)) throw new RecordedElsewhere(turn);
  } catch (error) {
    if (error instanceof RecordedElsewhere) throw error;
    // Not sent. A record held for retry is committed later: mark it failed behind it.
    void write({
      kind: 'confirm',
      confirmation: {
        id: turn.id,
        conversationId: turn.conversationId,
        messageIds: [],
        delivery: 'failed',
      },
    }).catch(() => undefined);
    throw error;
  }
  const confirm = (
    messageIds: readonly string[],
    delivery: ReplyDelivery,
    partial = false,
    timestamp?: string,
    attachments?: MessageAttachment[],
  ) => write(confirmation(turn, messageIds, delivery, { partial, timestamp, attachments }));
  const outbound: OutboundMessage =
    'outbound' in reply
      ? reply.outbound
      : {
          ...outboundFor(reply.inbound, turn.content, place),
          replyId: turn.id,
          ...actionsOf(turn),
          ...(reply.files !== undefined && { files: reply.files }),
        };
  let messageIds: readonly string[];
  let timestamp: string | undefined;
  let posted: MessageAttachment[] | undefined;
  // The parts of a split reply posted so far: what went out if a later part fails.
  let parts: readonly string[] = [];
  try {
    ({
      messageIds,
      timestamp,
      files: posted,
    } = await channel.send(outbound, {
      partPosted: async (ids) => {
        parts = ids;
        await confirm(ids, 'sending');
      },
    }));
  } catch (error) {
    // The record keeps the files it was sending: whether they went out is not known.
    const delivery = parts.length > 0 ? 'sent' : deliveryAfterFailure(error);
    await confirm(parts, delivery, parts.length > 0).catch(() => undefined); // left 'sending'
    throw error;
  }
  // The files as the platform answered replace the ones recorded (one it refused is left out).
  const answered = sending === undefined ? posted : (posted ?? []);
  const confirmed = confirm(messageIds, 'sent', false, timestamp, answered);
  reply.onSent?.();
  return { sent: asSent(withFiles(turn, posted), messageIds, timestamp), confirmed };
}

/**
 * A reply's record is another attempt's: the same run answered the same turn elsewhere (an
 * instance whose lease ran out while it worked, and the one that took the conversation over),
 * and recorded this reply first. That attempt sends it; this one sends nothing.
 */
export class RecordedElsewhere extends ColloquyError {
  override name = 'RecordedElsewhere';

  constructor(turn: NewMessage) {
    super(`reply ${turn.id} was recorded by another attempt at its run: not sent again`, {
      conversationId: turn.conversationId,
      messageId: turn.id,
    });
  }
}

/**
 * Whether the store already had the reply turn, written by another attempt (its time, which
 * each attempt takes as it records the reply, differs) rather than by this one's own write
 * committed before a retry.
 */
export function recordedByAnother(recorded: unknown, turn: NewMessage): boolean {
  const result = recorded as Partial<AppendResult> | undefined;
  if (result?.inserted !== false || result.message === undefined) return false;
  return Date.parse(result.message.timestamp) !== Date.parse(turn.timestamp);
}

/** The delivery of the turn the store already had, if the write found one. */
function deliveryOf(recorded: unknown): string | undefined {
  const result = recorded as Partial<AppendResult> | undefined;
  return result?.inserted === false ? result.message?.delivery : undefined;
}

/**
 * The reply turn as it went out: the platform's ids and time on the recorded turn (`partial`
 * when only some parts went out).
 *
 * @example
 * ```ts
 * asSent(turn, ['8', '9']).metadata; // { …, messageId: '8', partMessageIds: ['9'] }
 * ```
 */
export function asSent(
  turn: NewMessage,
  messageIds: readonly string[],
  timestamp?: string,
  partial = false,
): NewMessage {
  const [first, ...rest] = messageIds;
  return {
    ...turn,
    ...(timestamp !== undefined && { timestamp }),
    metadata: {
      ...turn.metadata,
      ...(first === undefined ? {} : { messageId: first }),
      ...(rest.length === 0 ? {} : { partMessageIds: rest }),
      ...(partial && { partial: true }),
    },
  };
}

/**
 * The write that confirms how far `turn`, recorded `sending`, went: its platform ids so far,
 * and the text shown when it differs from the recorded one (a streamed reply). The
 * confirmation that ends a send (`sent`) carries the turn as it went out.
 *
 * @example
 * ```ts
 * await write(confirmation(turn, ['8'], 'sending', { content: 'The order ships' }));
 * ```
 */
export function confirmation(
  turn: NewMessage,
  messageIds: readonly string[],
  delivery: ReplyDelivery,
  options: {
    partial?: boolean;
    timestamp?: string | undefined;
    content?: string;
    /** The files that went out with it, as the platform answered (`[]`: none did). */
    attachments?: readonly MessageAttachment[] | undefined;
  } = {},
): StoreOperation {
  const { partial = false, timestamp, content, attachments } = options;
  const final = withFiles(content === undefined ? turn : { ...turn, content }, attachments);
  return {
    kind: 'confirm',
    confirmation: {
      id: turn.id,
      conversationId: turn.conversationId,
      messageIds,
      delivery,
      ...(content !== undefined && { content }),
      ...(partial && { metadata: { partial: true } }),
      ...(timestamp !== undefined && { timestamp }),
      ...(attachments !== undefined && { attachments }),
      ...(delivery === 'sent' && { turn: asSent(final, messageIds, timestamp, partial) }),
    },
  };
}

/** `turn` with the files that went out with it (`[]`: without any; `undefined`: as it is). */
function withFiles(turn: NewMessage, files: readonly MessageAttachment[] | undefined): NewMessage {
  if (files === undefined) return turn;
  if (files.length > 0) return { ...turn, attachments: [...files] };
  const { attachments: _, ...without } = turn;
  return without;
}

/**
 * The files a reply is about to send, as its record names them before the first upload: kind,
 * name, MIME type and size (of bytes given whole; a stream's is not known yet). The platform's
 * file ids and URLs come with the confirmation that ends the send.
 *
 * @example
 * ```ts
 * filesSending([{ name: 'a.pdf', data: bytes, mimeType: 'application/pdf' }]);
 * // [{ kind: 'file', name: 'a.pdf', mimeType: 'application/pdf', size: bytes.byteLength }]
 * ```
 */
export function filesSending(
  files: readonly OutboundFile[] | undefined,
): MessageAttachment[] | undefined {
  if (!files?.length) return undefined;
  return files.map((file) => {
    const mimeType = file.mimeType ?? 'application/octet-stream';
    const size = file.data instanceof Uint8Array ? file.data.byteLength : undefined;
    const fields = { kind: kindOfMimeType(mimeType), name: file.name, mimeType, size };
    return attachment({ ...fields, platformFileId: undefined, url: undefined });
  });
}
