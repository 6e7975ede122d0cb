import { isUnfinished } from '../runs.js';
import type { AgentRun, RunQuery } from '../runs.js';
import type { StoredMessage } from '../types.js';

/** Run fields a later write of the same run keeps when it leaves them out. */
const KEPT_RUN_FIELDS = [
  'startedAt',
  'model',
  'inputTokens',
  'outputTokens',
  'replyId',
  'prompt',
] as const;

/** The in-memory store's agent runs and runtime state. */
export class MemoryRuns {
  readonly #runs = new Map<string, AgentRun>();
  readonly #state = new Map<string, string>();

  /**
   * Records `run`, keeping the fields it leaves out; with `create`, only when it is new. A
   * finished run stays finished: a write of it unfinished that lands late changes nothing.
   */
  write(run: AgentRun, create?: boolean): void {
    const before = this.#runs.get(run.id);
    if (create === true && before !== undefined) return;
    if (before !== undefined && !isUnfinished(before) && isUnfinished(run)) return;
    const merged = { ...run };
    for (const key of KEPT_RUN_FIELDS) {
      if (merged[key] === undefined && before?.[key] !== undefined) {
        Object.assign(merged, { [key]: before[key] });
      }
    }
    merged.attempts = Math.max(run.attempts, before?.attempts ?? 0);
    this.#runs.set(run.id, merged);
  }

  /** The runs `query` asks for, oldest first, each with its reply as `replyOf` finds it. */
  find(query: RunQuery, replyOf: (id: string) => StoredMessage | undefined): AgentRun[] {
    return [...this.#runs.values()]
      .filter((run) => query.messageId === undefined || run.messageId === query.messageId)
      .filter(
        (run) => query.conversationId === undefined || run.conversationId === query.conversationId,
      )
      .filter((run) => query.statuses === undefined || query.statuses.includes(run.status))
      .sort((a, b) => (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0))
      .map((run) => {
        const reply = run.replyId === undefined ? undefined : replyOf(run.replyId);
        if (reply === undefined) return { ...run };
        const { messageId, partMessageIds } = reply.metadata;
        const messageIds = messageId === undefined ? [] : [messageId, ...(partMessageIds ?? [])];
        return {
          ...run,
          reply: {
            conversationId: reply.conversationId,
            messageIds,
            ...(reply.delivery !== undefined && { delivery: reply.delivery }),
          },
        };
      });
  }

  /** Clears the recorded prompts of the runs in `conversationIds`. */
  forgetPrompts(conversationIds: ReadonlySet<string>): void {
    for (const run of this.#runs.values()) {
      if (conversationIds.has(run.conversationId)) delete run.prompt;
    }
  }

  /** Deletes the runs of a conversation. */
  deleteConversation(conversationId: string): void {
    for (const [id, run] of this.#runs) {
      if (run.conversationId === conversationId) this.#runs.delete(id);
    }
  }

  state(key: string): string | undefined {
    return this.#state.get(key);
  }

  /** Sets `key`, or removes it with `null`. */
  setState(key: string, value: string | null): void {
    if (value === null) this.#state.delete(key);
    else this.#state.set(key, value);
  }
}
