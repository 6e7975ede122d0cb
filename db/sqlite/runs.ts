import type Database from 'better-sqlite3';
import { normalizeTimestamp } from '../../src/timestamp.js';
import type { AgentRun, ReplyConfirmation, RunQuery } from '../../src/runs.js';
import { ALL_STATUSES, type RunRow, SELECT_RUNS, toRun } from '../runs.js';

/** A conversation's runs in some states (a JSON list), oldest first: what the drain reads. */
export const RUNS_IN_CONVERSATION = `${SELECT_RUNS}
  WHERE r.conversation_id = ? AND r.status IN (SELECT value FROM json_each(?))
  ORDER BY r.created_at, r.id`;

/**
 * The SQL of agent work: `agent_runs` rows, reply delivery on `messages`, and the small
 * `colloquy_state` table. Called inside the store's batch transaction (one savepoint per op).
 *
 * @example
 * ```ts
 * const runs = new RunStatements(db);
 * runs.upsert(run);
 * runs.find({ statuses: ['pending', 'running'] });
 * ```
 */
export class RunStatements {
  readonly #upsert: Database.Statement;
  readonly #create: Database.Statement;
  readonly #confirm: Database.Statement;
  readonly #retime: Database.Statement;
  readonly #setState: Database.Statement;
  readonly #deleteState: Database.Statement;
  readonly #getState: Database.Statement;
  readonly #byMessage: Database.Statement;
  readonly #byConversation: Database.Statement;
  readonly #byStatus: Database.Statement;

  constructor(db: Database.Database) {
    this.#upsert = db.prepare(`INSERT INTO agent_runs (id, message_id, conversation_id, agent_id,
        status, created_at, started_at, finished_at, model, input_tokens, output_tokens,
        reply_id, error, attempts, prompt)
      VALUES (@id, @message_id, @conversation_id, @agent_id, @status, @created_at, @started_at,
        @finished_at, @model, @input_tokens, @output_tokens, @reply_id, @error, @attempts, @prompt)
      ON CONFLICT (id) DO UPDATE SET status = excluded.status,
        started_at = coalesce(excluded.started_at, started_at),
        finished_at = excluded.finished_at,
        model = coalesce(excluded.model, model),
        input_tokens = coalesce(excluded.input_tokens, input_tokens),
        output_tokens = coalesce(excluded.output_tokens, output_tokens),
        reply_id = coalesce(excluded.reply_id, reply_id),
        error = excluded.error,
        attempts = max(excluded.attempts, attempts),
        prompt = coalesce(excluded.prompt, prompt)
      WHERE status IN ('pending', 'running') OR excluded.status NOT IN ('pending', 'running')`);
    // No run is created for an interaction refused (see `takesRuns`).
    this.#create = db.prepare(`INSERT OR IGNORE INTO agent_runs (id, message_id,
        conversation_id, agent_id, status, created_at, started_at, finished_at, model,
        input_tokens, output_tokens, reply_id, error, attempts, prompt)
      SELECT @id, @message_id, @conversation_id, @agent_id, @status, @created_at, @started_at,
        @finished_at, @model, @input_tokens, @output_tokens, @reply_id, @error, @attempts, @prompt
      WHERE NOT EXISTS (SELECT 1 FROM messages WHERE id = @message_id
        AND json_extract(metadata, '$.interaction.refused') IS NOT NULL)`);
    this.#retime = db.prepare(`UPDATE message_mentions SET timestamp = @timestamp
      WHERE message_seq = (SELECT seq FROM messages WHERE id = @id)`);
    this.#confirm = db.prepare(`UPDATE messages SET delivery = @delivery,
        content = coalesce(@content, content),
        trace_id = coalesce(@trace_id, trace_id),
        sources = coalesce(@sources, sources),
        attachments = CASE WHEN @files THEN @attachments ELSE attachments END,
        timestamp = coalesce(@timestamp, timestamp),
        platform_message_id = coalesce(@first, platform_message_id),
        metadata = CASE WHEN @extra IS NULL THEN metadata
          ELSE json_patch(metadata, @extra) END
      WHERE id = @id AND conversation_id = @conversation_id`);
    this.#setState = db.prepare(`INSERT INTO colloquy_state (key, value, updated_at)
      VALUES (?, ?, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
      ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`);
    this.#deleteState = db.prepare('DELETE FROM colloquy_state WHERE key = ?');
    this.#getState = db.prepare('SELECT value FROM colloquy_state WHERE key = ?').pluck();
    this.#byMessage = db.prepare(
      `${SELECT_RUNS} WHERE r.message_id = ? ORDER BY r.created_at, r.id`,
    );
    this.#byConversation = db.prepare(RUNS_IN_CONVERSATION);
    this.#byStatus = db.prepare(`${SELECT_RUNS}
      WHERE r.status IN (SELECT value FROM json_each(?)) ORDER BY r.created_at, r.id`);
  }

  /**
   * Writes a run whole; a later write never loses what an earlier one set (started_at…), and a
   * finished run stays finished (a write of it unfinished that lands late changes nothing).
   * `create`: only when the run has no row yet.
   */
  upsert(run: AgentRun, create = false): void {
    (create ? this.#create : this.#upsert).run({
      id: run.id,
      message_id: run.messageId,
      conversation_id: run.conversationId,
      agent_id: run.agentId,
      status: run.status,
      created_at: run.createdAt,
      started_at: run.startedAt ?? null,
      finished_at: run.finishedAt ?? null,
      model: run.model ?? null,
      input_tokens: run.inputTokens ?? null,
      output_tokens: run.outputTokens ?? null,
      reply_id: run.replyId ?? null,
      error: run.error ?? null,
      attempts: run.attempts,
      prompt: run.prompt ?? null,
    });
  }

  /** Records what the platform said about a reply; false when there is no such turn. */
  confirm(confirmation: ReplyConfirmation): boolean {
    const [first, ...rest] = confirmation.messageIds;
    const extra = {
      ...confirmation.metadata,
      ...(rest.length > 0 && { partMessageIds: rest }),
    };
    const timestamp =
      confirmation.timestamp === undefined ? null : normalizeTimestamp(confirmation.timestamp);
    const changed =
      this.#confirm.run({
        id: confirmation.id,
        conversation_id: confirmation.conversationId,
        delivery: confirmation.delivery,
        first: first ?? null,
        content: confirmation.content ?? null,
        trace_id: confirmation.traceId ?? null,
        sources: confirmation.sources?.length ? JSON.stringify(confirmation.sources) : null,
        files: confirmation.attachments === undefined ? 0 : 1,
        attachments: confirmation.attachments?.length
          ? JSON.stringify(confirmation.attachments)
          : null,
        timestamp,
        extra: Object.keys(extra).length === 0 ? null : JSON.stringify(extra),
      }).changes > 0;
    if (changed && timestamp !== null) this.#retime.run({ id: confirmation.id, timestamp });
    return changed;
  }

  setState(key: string, value: string | null): void {
    if (value === null) this.#deleteState.run(key);
    else this.#setState.run(key, value);
  }

  getState(key: string): string | undefined {
    return (this.#getState.get(key) as string | undefined) ?? undefined;
  }

  find(query: RunQuery): AgentRun[] {
    const statuses = query.statuses ?? ALL_STATUSES;
    let rows: RunRow[];
    if (query.messageId !== undefined) {
      rows = (this.#byMessage.all(query.messageId) as RunRow[]).filter(
        (row) =>
          statuses.includes(row.status) &&
          (query.conversationId === undefined || row.conversation_id === query.conversationId),
      );
    } else if (query.conversationId !== undefined) {
      rows = this.#byConversation.all(query.conversationId, JSON.stringify(statuses)) as RunRow[];
    } else {
      rows = this.#byStatus.all(JSON.stringify(statuses)) as RunRow[];
    }
    return rows.map(toRun);
  }
}
