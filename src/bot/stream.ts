import type { MessageAttachment } from '../attachments.js';
import type { TurnContext } from '../chain.js';
import type { Channel, OutboundFile, ReplyPlace, ReplyStream, StreamProgress } from '../channel.js';
import { ColloquyError, deliveryAfterFailure, messageOf } from '../errors.js';
import type { AgentRun } from '../runs.js';
import type { NewMessage, Participant } from '../types.js';
import {
  RecordedElsewhere,
  asSent,
  confirmation,
  filesSending,
  recordedByAnother,
  replyTurn,
} from './outbox.js';
import type { Write } from './outbox.js';
import { actionsOf, outboundFor } from './turn.js';

/** What a streamed reply needs from the run it answers. */
export interface LiveReplyOptions {
  /** The reply turn's id, which the final reply keeps. */
  id: string;
  write: Write;
  channel: Channel;
  inbound: NewMessage;
  place?: ReplyPlace;
  /** The reply turn for a text, with `id`. */
  turn(content: string): NewMessage;
  /** The reply is about to be recorded: its run names it (`replyId`). */
  recording(): void;
  /** Its first words are about to be shown: the sign of life can go. */
  showing(): void;
  /** Told when the reply's buttons could not be shown under it, or its files not sent. */
  report?(error: ColloquyError): void;
}

/**
 * An agent's reply shown as the model writes it, through the channel's `stream`, with one
 * outbox row for it however many edits it takes: the row is recorded `sending` (with the first
 * words) before anything is shown, holds the text of each post, edit or draft before the
 * platform is called (one write per change, paced like the changes), gets each part's platform
 * id once it is posted, and is `sent` with the final text and every part's id at the end. A
 * crash in between leaves the row `sending`, with at least what was shown, which recovery marks
 * `unconfirmed` and never shows again.
 *
 * @example
 * ```ts
 * const live = new LiveReply({ write, channel, inbound, turn, recording, showing });
 * live.update('The order');
 * const { sent, confirmed } = await live.finish(finalTurn);
 * ```
 */
export class LiveReply {
  readonly #options: LiveReplyOptions;
  #latest = '';
  #opening: Promise<void> | undefined;
  #stream: ReplyStream | undefined;
  #recorded: NewMessage | undefined;
  #failure: unknown;
  #shown: StreamProgress = { messageIds: [], shown: '' };
  /** What the row holds: the text and the number of part ids last written. */
  #held = { content: '', parts: 0 };
  /** The ids of the parts posted so far, as the channel's `showing` or `progress` last gave them. */
  #ids: readonly string[] = [];
  /** The text recorded before the change being shown: on the platform, whatever that change does. */
  #before = '';
  #done = false;
  readonly #stop = new AbortController();

  constructor(options: LiveReplyOptions) {
    this.#options = options;
  }

  get id(): string {
    return this.#options.id;
  }

  /** Aborted when the person stopped the reply being written: the run stops. */
  get signal(): AbortSignal {
    return this.#stop.signal;
  }

  /** True when the person stopped the reply being written. */
  get stopped(): boolean {
    return this.#stop.signal.aborted;
  }

  /** True once the reply was recorded to be shown: the final reply goes through `finish`. */
  get started(): boolean {
    return this.#opening !== undefined;
  }

  /** The answer so far. The first call with words records the reply and starts showing it. */
  update(text: string): void {
    if (this.#done || this.#failure !== undefined) return;
    this.#latest = text;
    if (this.#stream !== undefined) return this.#stream.update(text);
    if (this.#opening === undefined && text.trim() !== '') this.#opening = this.#open();
  }

  async #open(): Promise<void> {
    const { write, channel, inbound, place } = this.#options;
    const turn = this.#options.turn(this.#latest);
    this.#options.recording();
    try {
      const recorded = await write({ kind: 'reply', message: turn });
      if (recordedByAnother(recorded, turn)) {
        this.#failure = new RecordedElsewhere(turn); // that attempt shows it
        return;
      }
    } catch (error) {
      this.#failure = error;
      void write(confirmation(turn, [], 'failed')).catch(() => undefined);
      return;
    }
    this.#recorded = turn;
    this.#held = { content: turn.content, parts: 0 };
    this.#options.showing();
    this.#stream = channel.stream!(
      { ...outboundFor(inbound, '', place), replyId: turn.id },
      {
        // The text of each change is in the row before the platform shows it.
        showing: async ({ messageIds, shown }) => {
          if (messageIds.length > this.#ids.length) this.#ids = messageIds;
          // Every change before this one was shown: the text recorded last is on the platform.
          this.#before = this.#held.content;
          if (shown === this.#held.content && messageIds.length === this.#held.parts) return;
          this.#held = { content: shown, parts: messageIds.length };
          await write(confirmation(turn, messageIds, 'sending', { content: shown }));
        },
        // A part's id joins the row once the part is posted.
        progress: (progress) => {
          this.#shown = progress;
          if (progress.messageIds.length > this.#ids.length) this.#ids = progress.messageIds;
          if (this.#done || progress.messageIds.length === this.#held.parts) return;
          this.#held = { ...this.#held, parts: progress.messageIds.length };
          const op = confirmation(turn, progress.messageIds, 'sending', {
            content: this.#held.content,
          });
          void write(op).catch(() => undefined); // the final confirmation says it all again
        },
        stopped: () => this.#stop.abort(new Error('stopped by the person')),
        recipientId: inbound.participant.id,
      },
    );
    this.#stream.update(this.#latest);
  }

  /**
   * Shows `whole` (the final turn, after the send hooks) as the whole answer (what was shown,
   * marked `stoppedBy: 'person'`, when the person stopped it) and confirms it `sent` with its
   * text and every part's id; `onSent` is called as that confirmation is
   * handed to `write`. Throws when the record or the platform failed, after recording what
   * was shown.
   */
  async finish(
    whole: NewMessage,
    onSent?: () => void,
    files?: readonly OutboundFile[],
  ): Promise<{ sent: NewMessage; confirmed: Promise<unknown> }> {
    await this.#opening;
    // Stopped by the person: the answer is what they saw.
    const reply = this.stopped
      ? {
          ...whole,
          content: this.#shown.shown || whole.content,
          metadata: { ...whole.metadata, stoppedBy: 'person' },
        }
      : whole;
    const stream = this.#stream;
    if (stream === undefined) throw this.#failure;
    this.#done = true;
    let ended;
    try {
      ended = await stream.end(reply.content);
    } catch (error) {
      // The parts posted so far stay on the platform. A change the platform refused left the
      // text recorded before it; one that got no answer may be shown, and the row keeps it.
      const messageIds = this.#ids;
      const refused = deliveryAfterFailure(error) === 'failed';
      const delivery = messageIds.length > 0 ? 'sent' : deliveryAfterFailure(error);
      const content = refused ? this.#before : this.#held.content;
      const op = confirmation(reply, messageIds, delivery, { partial: true, content });
      await this.#options.write(op).catch(() => undefined);
      throw error;
    }
    const { messageIds, timestamp } = ended;
    await this.#showActions(reply, messageIds);
    const { attachments, parts } = await this.#sendFiles(reply, messageIds, files);
    // The files' own messages are parts of the reply: an edit, deletion or reaction finds it.
    const allIds = [...messageIds, ...parts];
    const op = confirmation(reply, allIds, 'sent', {
      timestamp,
      content: reply.content,
      attachments,
    });
    // The record was made with the first words: the final turn's metadata and provenance join it.
    if (op.kind === 'confirm') {
      op.confirmation.metadata = { ...reply.metadata, ...op.confirmation.metadata };
      if (reply.traceId !== undefined) op.confirmation.traceId = reply.traceId;
      if (reply.sources?.length) op.confirmation.sources = reply.sources;
    }
    const confirmed = this.#options.write(op);
    onSent?.();
    const sent = attachments?.length ? { ...reply, attachments } : reply;
    return { sent: asSent(sent, allIds, timestamp), confirmed };
  }

  /**
   * Posts `files` after the shown text, named in the record before the first upload; answers
   * them as the platform did (`[]`: none went out; the channel reports any it could not post)
   * with the platform ids of the messages that carry them. An upload that throws is reported,
   * and the reply is the text alone.
   */
  async #sendFiles(
    reply: NewMessage,
    messageIds: readonly string[],
    files: readonly OutboundFile[] | undefined,
  ): Promise<{ attachments?: MessageAttachment[]; parts: readonly string[] }> {
    const attachments = filesSending(files);
    if (attachments === undefined) return { parts: [] };
    const { channel, inbound, place, write } = this.#options;
    const content = reply.content;
    await write(confirmation(reply, messageIds, 'sending', { content, attachments }));
    try {
      const sent = await channel.send({
        ...outboundFor(inbound, '', place),
        replyId: reply.id,
        files,
      });
      return { attachments: sent.files ?? [], parts: sent.messageIds };
    } catch (cause) {
      const error = `could not send the files of streamed reply ${reply.id}: ${messageOf(cause)}`;
      const where = { conversationId: reply.conversationId, messageId: reply.id };
      this.#options.report?.(new ColloquyError(error, { cause, ...where }));
      return { attachments: [], parts: [] };
    }
  }

  /** Shows the buttons of `reply`, whole, under its last part (`Channel.editActions`). */
  async #showActions(reply: NewMessage, messageIds: readonly string[]): Promise<void> {
    const { channel, inbound, place } = this.#options;
    const buttons = actionsOf(reply);
    if (Object.keys(buttons).length === 0 || messageIds.length === 0) return;
    const { channelId, threadId } = outboundFor(inbound, '', place);
    const edit = { channelId, ...(threadId !== undefined && { threadId }), ...buttons };
    const error = "could not show a streamed reply's buttons";
    await channel
      .editActions?.({ ...edit, messageIds, content: reply.content })
      .catch((cause: unknown) => this.#options.report?.(new ColloquyError(error, { cause })));
  }

  /**
   * Ends a reply that was started and never finished (the agent failed after its first words,
   * a send hook dropped the reply, or the person stopped it): what was shown stays, and is
   * what the record keeps (`metadata.stoppedBy: 'person'` when the person stopped it).
   */
  async abandon(): Promise<void> {
    if (this.#opening === undefined || this.#done) return;
    await this.#opening;
    const turn = this.#recorded;
    if (turn === undefined) return;
    await this.finish({ ...turn, content: this.#latest }).catch(() => undefined);
  }
}

/**
 * The live reply of `run` on a channel that streams (undefined on one that does not): recorded
 * as `<run id>:reply`, naming it on the run, taking the sign of life down as it shows.
 *
 * @example
 * ```ts
 * const live = liveReplyFor({ ctx, run, from, write, save, showing: () => typing.stop() });
 * ```
 */
export function liveReplyFor(options: {
  ctx: Pick<TurnContext, 'message' | 'channel'>;
  run: AgentRun;
  from: Participant;
  write: Write;
  save(): void;
  showing(): void;
  report?(error: ColloquyError): void;
}): LiveReply | undefined {
  const { ctx, run, from } = options;
  const { message, channel } = ctx;
  if (channel.stream === undefined) return undefined;
  const place = channel.replyPlace?.(message);
  const id = `${run.id}:reply`;
  return new LiveReply({
    id,
    write: options.write,
    channel,
    inbound: message,
    ...(place !== undefined && { place }),
    turn: (content) => replyTurn({ id, inbound: message, channel, content, from }),
    recording: () => {
      run.replyId = id;
      options.save();
    },
    showing: options.showing,
    ...(options.report !== undefined && { report: options.report }),
  });
}
