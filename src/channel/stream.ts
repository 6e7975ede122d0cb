/**
 * How a channel shows a reply being written: the typing indicator, and a reply streamed as it
 * is written (`Channel.stream`).
 */
import type { OutboundMessage, SentMessage } from '../channel.js';

/**
 * A platform's sign that the bot is at work on a reply: Telegram's "typing…", Discord's typing
 * indicator, Slack's thread status. The runtime shows it as soon as an agent starts on a turn,
 * again every `repeatMs` while the agent works (platforms let it fade), and takes it down when
 * the reply's first words are shown or the run ends, fails or the bot stops.
 *
 * @example
 * ```ts
 * const typing: TypingIndicator = {
 *   repeatMs: 4500,
 *   show: (place) => api.sendChatAction(Number(place.channelId), 'typing').then(() => undefined),
 * };
 * ```
 */
export interface TypingIndicator {
  /** How often to show it again while the agent works (a little less than it lasts). */
  readonly repeatMs: number;
  /** Shows it once where the reply will go (`place.content` is empty). */
  show(place: OutboundMessage): Promise<void>;
  /** Takes it down, where the platform keeps it until told (a status, a reaction). */
  clear?(place: OutboundMessage): Promise<void>;
}

/** What a channel streaming a reply says each time what is shown changed. */
export interface StreamProgress {
  /** The platform ids of the parts shown so far, in order (the last one may still grow). */
  messageIds: readonly string[];
  /** The reply's text as far as it is shown, every part. */
  shown: string;
}

/**
 * A reply shown as it is written (see `Channel.stream`): `update` with the answer so far, then
 * `end` with the whole of it.
 *
 * @example
 * ```ts
 * const reply = channel.stream!(outboundFor(turn, ''), { progress: (p) => record(p) });
 * reply.update('The order');
 * reply.update('The order ships tomorrow');
 * const sent = await reply.end('The order ships tomorrow.');
 * ```
 */
export interface ReplyStream {
  /**
   * The answer so far (usually longer than the last). Shown as soon as the platform allows:
   * edits are paced to its rate limits, and the latest text wins. Never throws: a failure
   * stops the showing and is thrown by `end`.
   */
  update(text: string): void;
  /**
   * Shows `text` as the whole reply (split into parts where it is longer than one message) and
   * resolves with every part's ids once the platform has it all; throws like `send`.
   */
  end(text: string): Promise<SentMessage>;
}

/** How the runtime follows a streamed reply. */
export interface StreamOptions {
  /**
   * Called before each platform call that shows more of the reply (a post, an edit, a draft,
   * an append), with the whole text that call leaves shown and the ids of the parts posted so
   * far; the call waits for it. The runtime records the text first, so the record never holds
   * less than the platform shows. A rejection stops the showing (`end` throws it).
   */
  showing?(progress: StreamProgress): Promise<void>;
  /**
   * Called (not awaited) each time what is shown changed, with the ids of the parts posted so
   * far: the runtime records a new part's id.
   */
  progress?(progress: StreamProgress): void;
  /**
   * Called when the person stopped the reply being written (Telegram's stop button on a
   * draft): the runtime stops the run and ends the reply with what was shown.
   */
  stopped?(): void;
  /**
   * The participant id of the person the reply answers (`slack:U123`): Slack streams to a
   * person by id outside a DM.
   */
  recipientId?: string;
}
