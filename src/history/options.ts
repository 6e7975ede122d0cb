import type { CapturedChange } from '../store.js';
import type { ColloquyError } from '../errors.js';
import type { Tokenizer } from '../tokenizer.js';
import type { HistoryEntry, HistoryPlace } from './entries.js';

/**
 * How a `History` reads and watches its conversation. Every field is optional.
 *
 * @example
 * ```ts
 * const history = new History(store, 'telegram:42', { pollIntervalMs: 250 });
 * ```
 */
export interface HistoryOptions {
  /** Most turns read (default 10,000). */
  limit?: number;
  /**
   * While someone subscribes, how often the store is asked whether the conversation changed
   * (another process writing the same database): one `getConversation` look-up each time,
   * the turns read again only when its count or last time moved. Default 1000 ms; 0: never.
   */
  pollIntervalMs?: number;
  /** Counts `totalTokens` (default `defaultTokenizer`, as prompt assembly). */
  tokenizer?: Tokenizer;
  /** Where `restore` stores turns when the conversation has none to copy it from. */
  place?: HistoryPlace;
  /** Live changes from the capture of a `Bot` (`bot.history` sets it). */
  changes?: (listener: (change: CapturedChange) => void) => () => void;
  /** True while an agent answers in the conversation: `reset` and `restore` refuse then. */
  busy?: () => boolean;
  /**
   * Whose rolling summary `reduce` writes and `view` shows (`summaryForAgentId`; default
   * `history`). Give an agent's id to share the summary its prompts use.
   */
  summaryFor?: string;
}

/**
 * What a `History` serialises to (`toJSON`) and is made from (`History.fromJSON`).
 *
 * @example
 * ```ts
 * const json: HistoryJSON = JSON.parse(JSON.stringify(history));
 * ```
 */
export interface HistoryJSON {
  conversationId: string;
  place?: HistoryPlace;
  entries: HistoryEntry[];
}

/** The events a `History` emits, with what their listeners get. */
export interface HistoryEvents {
  /** A new entry came in (from capture, another process or `restore`). */
  entry: (entry: HistoryEntry) => void;
  /** The conversation was cleared (`reset`, or before `restore`). */
  clear: () => void;
  /** A plugin threw: the error (a `ColloquyError` naming the plugin, with `cause`). */
  pluginError: (error: ColloquyError) => void;
}
