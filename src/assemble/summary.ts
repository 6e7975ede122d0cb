import { StoreError } from '../errors.js';
import type { ColloquyError } from '../errors.js';
import type { ConversationStore } from '../store.js';
import { samePlace } from '../types.js';
import type { NewMessage, StoredMessage } from '../types.js';

/**
 * What a summarizer is asked to fold into one rolling summary.
 *
 * @example
 * ```ts
 * const input: SummarizeInput = { agentId: 'support', agentName: 'Support', conversationId, turns };
 * ```
 */
export interface SummarizeInput {
  agentId: string;
  agentName: string;
  conversationId: string;
  /** The agent's previous summary of this conversation, to extend rather than replace. */
  previousSummary?: string;
  /** The turns to fold in, oldest first (they may include the agent's tool-call rows). */
  turns: StoredMessage[];
}

/**
 * Writes rolling summaries for prompt assembly. `SummarizerAgent` (from `colloquy`'s agents)
 * implements it with a language model; any object with this method will do.
 *
 * @example
 * ```ts
 * import type { Summarizer } from 'colloquy';
 * const lengths: Summarizer = {
 *   summarize: async ({ previousSummary, turns }) =>
 *     `${previousSummary ?? ''} ${turns.length} more turns.`.trim(),
 * };
 * ```
 */
export interface Summarizer {
  summarize(input: SummarizeInput): Promise<string>;
}

/**
 * Participant id of the rows rolling summaries are stored as (kind `system`).
 *
 * @example
 * ```sql
 * SELECT content FROM messages WHERE participant_id = 'colloquy:summarizer';
 * ```
 */
export const SUMMARIZER_PARTICIPANT_ID = 'colloquy:summarizer';

/**
 * How a summary is introduced to the model: the system message is this prefix + the summary.
 *
 * @example
 * ```ts
 * import { SUMMARY_PREFIX } from './summary.js';
 * const isSummary = text.startsWith(SUMMARY_PREFIX);
 * ```
 */
export const SUMMARY_PREFIX = 'Summary of earlier conversation: ';

/**
 * The deterministic id of the summary row an agent stores for a conversation once it has
 * summarised through turn `throughSequence`. Two assemblies racing to write the same summary
 * store it once.
 *
 * @example
 * ```ts
 * import { summaryRowId } from './summary.js';
 * summaryRowId('support', 'slack:T1:C1', 420); // 'summary:support:slack:T1:C1:420'
 * ```
 */
export function summaryRowId(agentId: string, conversationId: string, throughSequence: number) {
  return `summary:${agentId}:${conversationId}:${throughSequence}`;
}

/** The row a new summary is stored as, placed in the conversation of its last covered turn. */
export function summaryRow(
  agentId: string,
  content: string,
  last: StoredMessage,
  timestamp: string,
): NewMessage {
  const throughSequence = last.sequence as number;
  return {
    id: summaryRowId(agentId, last.conversationId, throughSequence),
    conversationId: last.conversationId,
    participant: { kind: 'system', id: SUMMARIZER_PARTICIPANT_ID, displayName: 'Summarizer' },
    content,
    timestamp,
    scope: last.scope,
    metadata: {
      ...samePlace(last),
      isSummary: true,
      summaryForAgentId: agentId,
      summaryThroughSequence: throughSequence,
    },
  };
}

/**
 * Stores an agent's new summary (see {@link summaryRow}). When the store refuses it, the
 * failure is reported and the unstored row is returned, for the prompt being built only.
 */
export async function storeSummary(
  to: {
    store: ConversationStore;
    agentId: string;
    conversationId: string;
    report(error: ColloquyError): void;
  },
  content: string,
  last: StoredMessage,
  timestamp: string,
): Promise<StoredMessage> {
  const row = summaryRow(to.agentId, content, last, timestamp);
  try {
    return (await to.store.append(row)).message;
  } catch (cause) {
    to.report(
      new StoreError('Could not store the rolling summary; it is used for this prompt only', {
        cause,
        conversationId: to.conversationId,
        messageId: row.id,
      }),
    );
    return row as StoredMessage;
  }
}

/** The sequence a stored summary covers through; `-Infinity` when there is none. */
export function coveredThrough(summary: StoredMessage | undefined): number {
  const through = summary?.metadata.summaryThroughSequence;
  return typeof through === 'number' ? through : Number.NEGATIVE_INFINITY;
}
