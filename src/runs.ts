import type { MessageAttachment } from './attachments.js';
import type { MessageSource, NewMessage } from './types.js';

/**
 * Where a piece of agent work stands. `pending`: the turn is committed and the agent is to
 * answer it; `running`: the agent is at work; `answered`: done (its reply confirmed by the
 * platform, or nothing to say); `failed`: the agent or the platform failed (see `error`);
 * `expired`: found unfinished after a restart, too old to answer; `unconfirmed`: its reply was
 * recorded but the platform never confirmed it (a crash between the two) and the restart could
 * not settle it (`Channel.settle`, `BotOptions.unconfirmedReplies`).
 */
export type RunStatus = 'pending' | 'running' | 'answered' | 'failed' | 'expired' | 'unconfirmed';

/**
 * One agent's work on one turn: a row of `agent_runs` (docs/sql.md).
 *
 * @example
 * ```ts
 * const run: AgentRun = {
 *   id: 'telegram:42:7:support-agent', messageId: 'telegram:42:7', conversationId: 'telegram:42',
 *   agentId: 'support-agent', status: 'pending', createdAt: '2026-11-23T21:00:00.000Z', attempts: 0,
 * };
 * ```
 */
export interface AgentRun {
  /** `<inbound turn id>:<agent id>`; a re-run after an edit adds `:edit:<n>`. */
  id: string;
  /** The colloquy id of the turn being answered. */
  messageId: string;
  conversationId: string;
  agentId: string;
  status: RunStatus;
  /** ISO 8601 UTC. */
  createdAt: string;
  startedAt?: string;
  finishedAt?: string;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  /** The colloquy id of the reply turn, once it is recorded (before it is sent). */
  replyId?: string;
  error?: string;
  /** How many times the agent was started on it. */
  attempts: number;
  /** The assembled prompt as JSON, when the bot records prompts (`recordPrompts`). */
  prompt?: string;
  /** Read with the run (never written): how far its reply turn went. */
  reply?: { conversationId: string; delivery?: ReplyDelivery; messageIds: string[] };
}

/** Which runs `ConversationStore.getRuns` answers. */
export interface RunQuery {
  /** Runs answering this turn. */
  messageId?: string;
  /** Runs in this conversation. */
  conversationId?: string;
  /** Runs in one of these states. */
  statuses?: readonly RunStatus[];
}

/**
 * How far a reply went: `sending` (recorded before the platform call), `sent` (the platform
 * gave its ids), `unconfirmed` (never confirmed: a crash came between, and it could not be settled). NULL
 * for turns the bot did not send. A confirmation `failed` with no ids (the platform refused
 * it, nothing went out) removes the record: nothing was said.
 */
export type ReplyDelivery = 'sending' | 'sent' | 'unconfirmed' | 'failed';

/**
 * What the platform said about a reply recorded as `sending`: the ids of the parts posted so
 * far (the first is the reply's `platform_message_id`, the rest `metadata.partMessageIds`).
 *
 * @example
 * ```ts
 * const confirmation: ReplyConfirmation = {
 *   id: 'telegram:42:7:support-agent:reply', conversationId: 'telegram:42',
 *   messageIds: ['8'], delivery: 'sent',
 * };
 * ```
 */
export interface ReplyConfirmation {
  /** The reply turn's colloquy id. */
  id: string;
  conversationId: string;
  messageIds: readonly string[];
  delivery: ReplyDelivery;
  /** When the platform says the first part was posted (ISO 8601 UTC). */
  timestamp?: string;
  /**
   * The reply's text when it differs from what was recorded: a streamed reply is recorded with
   * its first words and confirmed with what was shown so far, then with its final text.
   */
  content?: string;
  /** A streamed agent reply's `traceId`, known once its answer is whole. */
  traceId?: string;
  /** A streamed agent reply's `sources`, known once its answer is whole. */
  sources?: readonly MessageSource[];
  /**
   * The reply's files (its `attachments`), replacing those recorded: the ones it is about to
   * send (`sending`), then the ones that went out as the platform answered (`[]`: none did).
   */
  attachments?: readonly MessageAttachment[];
  /** Kept on the turn's metadata (`partial: true` for a split reply that failed part way). */
  metadata?: Record<string, unknown>;
  /**
   * The reply turn as it went out (platform ids and time), on the confirmation that ends a
   * send: a store that keeps no outbox (one without `commit`) appends it then.
   */
  turn?: NewMessage;
}

/**
 * The run id of `agentId` answering `turn`: `<turn id>:<agent id>`, plus `:edit:<n>` when the
 * turn is answered again after its n-th edit.
 *
 * @example
 * ```ts
 * runId(turn, 'support-agent'); // 'telegram:42:7:support-agent'
 * ```
 */
export function runId(turn: Pick<NewMessage, 'id' | 'metadata'>, agentId: string): string {
  const edit = turn.metadata.rerunForEdit;
  return `${turn.id}:${agentId}${edit === undefined ? '' : `:edit:${edit}`}`;
}

/**
 * The writes agent work adds to the store's batch path (`ConversationStore.commit`), beside a
 * turn's append, edit and delete: a run row upserted whole; a reply turn recorded before it is
 * sent (`delivery = 'sending'`); a reply confirmed with its platform ids; a small value the
 * runtime keeps (a gateway session), `null` to remove it.
 */
export type FlowOperation =
  /** `create`: only when there is no row for this run yet (a redelivered turn keeps its runs). */
  | { kind: 'run'; run: AgentRun; create?: boolean }
  | { kind: 'reply'; message: NewMessage }
  | { kind: 'confirm'; confirmation: ReplyConfirmation }
  | { kind: 'state'; key: string; value: string | null };

/** True while a run can still be worked on. */
export function isUnfinished(run: Pick<AgentRun, 'status'>): boolean {
  return run.status === 'pending' || run.status === 'running';
}

/**
 * The model and token counts an agent reports in its result's metadata, as run fields.
 *
 * @example
 * ```ts
 * usageOf({ model: 'gpt-4o-mini', usage: { inputTokens: 120, outputTokens: 8 } });
 * // { model: 'gpt-4o-mini', inputTokens: 120, outputTokens: 8 }
 * ```
 */
export function usageOf(metadata: Record<string, unknown> | undefined): Partial<AgentRun> {
  if (metadata === undefined) return {};
  const usage = (metadata.usage ?? {}) as { inputTokens?: unknown; outputTokens?: unknown };
  const inputTokens = tokenCount(usage.inputTokens);
  const outputTokens = tokenCount(usage.outputTokens);
  return {
    ...(typeof metadata.model === 'string' && { model: metadata.model }),
    ...(inputTokens !== undefined && { inputTokens }),
    ...(outputTokens !== undefined && { outputTokens }),
  };
}

/** The largest token count a run keeps: the stores' 32-bit integer columns. */
const MOST_TOKENS = 2 ** 31 - 1;

/**
 * A token count as a run keeps it: a whole number from 0 to 2^31 − 1 (a fraction rounded), or
 * undefined for anything else (a negative, NaN, a count past the stores' integer columns), so
 * that a model's odd usage figure never makes a store refuse the run's row.
 *
 * @example
 * ```ts
 * tokenCount(12.6); // 13
 * tokenCount(3e9); // undefined
 * ```
 */
export function tokenCount(value: unknown): number | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  const count = Math.round(value);
  return count >= 0 && count <= MOST_TOKENS ? count : undefined;
}

/**
 * `value` as JSON, or a note of its size when that is more than `maxBytes` (a run's prompt).
 *
 * @example
 * ```ts
 * cappedJson({ messages }, 10); // '{"truncated":true,"bytes":1234}'
 * ```
 */
export function cappedJson(value: unknown, maxBytes: number): string {
  const json = JSON.stringify(value) ?? 'null';
  const bytes = Buffer.byteLength(json);
  return bytes <= maxBytes ? json : JSON.stringify({ truncated: true, bytes });
}
