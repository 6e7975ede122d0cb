import type pg from 'pg';
import { type Lease, CONVERSATION_LEASE_PREFIX, newLeaseToken } from '../../src/leases.js';
import {
  type AgentRun,
  type ReplyConfirmation,
  type RunQuery,
  tokenCount,
} from '../../src/runs.js';
import { normalizeTimestamp } from '../../src/timestamp.js';
import { storableJson, withoutNul } from './errors.js';
import { ALL_STATUSES, type RunRow, SELECT_RUNS, toRun } from '../runs.js';
import { CREATE_RUNS, runColumns } from './batch.js';

/** A pool, or one connection inside a transaction. */
export type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

const RUN_COLUMNS = `id, message_id, conversation_id, agent_id, status, created_at, started_at,
  finished_at, model, input_tokens, output_tokens, reply_id, error, attempts, prompt`;
const RUN_VALUES = '$1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15';

/**
 * A later write never loses what an earlier one set (started_at, the reply…), and a finished
 * run stays finished: a write of it unfinished that lands late changes nothing.
 */
const UPSERT_RUN = `INSERT INTO agent_runs AS r (${RUN_COLUMNS}) VALUES (${RUN_VALUES})
  ON CONFLICT (id) DO UPDATE SET status = excluded.status,
    started_at = coalesce(excluded.started_at, r.started_at),
    finished_at = excluded.finished_at,
    model = coalesce(excluded.model, r.model),
    input_tokens = coalesce(excluded.input_tokens, r.input_tokens),
    output_tokens = coalesce(excluded.output_tokens, r.output_tokens),
    reply_id = coalesce(excluded.reply_id, r.reply_id),
    error = excluded.error,
    attempts = greatest(excluded.attempts, r.attempts),
    prompt = coalesce(excluded.prompt, r.prompt)
  WHERE r.status IN ('pending', 'running') OR excluded.status NOT IN ('pending', 'running')`;

/** Writes a run whole (`create`: only when it has no row yet). */
export async function upsertRun(db: Queryable, run: AgentRun, create = false): Promise<void> {
  if (create) return void (await db.query(CREATE_RUNS, runColumns([run])));
  await db.query(
    UPSERT_RUN,
    withoutNul([
      run.id,
      run.messageId,
      run.conversationId,
      run.agentId,
      run.status,
      run.createdAt,
      run.startedAt ?? null,
      run.finishedAt ?? null,
      run.model ?? null,
      tokenCount(run.inputTokens) ?? null,
      tokenCount(run.outputTokens) ?? null,
      run.replyId ?? null,
      run.error ?? null,
      run.attempts,
      run.prompt ?? null,
    ]),
  );
}

/** Records what the platform said about a reply; false when there is no such turn. */
export async function confirmReply(db: Queryable, confirmation: ReplyConfirmation) {
  const [first, ...rest] = confirmation.messageIds;
  const extra = { ...confirmation.metadata, ...(rest.length > 0 && { partMessageIds: rest }) };
  const timestamp =
    confirmation.timestamp === undefined ? null : normalizeTimestamp(confirmation.timestamp);
  const { rowCount } = await db.query(
    `UPDATE messages SET delivery = $3, timestamp = coalesce($4, timestamp),
       platform_message_id = coalesce($5, platform_message_id),
       metadata = CASE WHEN $6::jsonb IS NULL THEN metadata ELSE metadata || $6::jsonb END,
       content = coalesce($7, content), trace_id = coalesce($8, trace_id),
       sources = coalesce($9::jsonb, sources),
       attachments = CASE WHEN $11::boolean THEN $10::jsonb ELSE attachments END
     WHERE id = $1 AND conversation_id = $2`,
    withoutNul([
      confirmation.id,
      confirmation.conversationId,
      confirmation.delivery,
      timestamp,
      first ?? null,
      Object.keys(extra).length === 0 ? null : storableJson(JSON.stringify(extra)),
      confirmation.content ?? null,
      confirmation.traceId ?? null,
      confirmation.sources?.length ? storableJson(JSON.stringify(confirmation.sources)) : null,
      confirmation.attachments?.length
        ? storableJson(JSON.stringify(confirmation.attachments))
        : null,
      confirmation.attachments !== undefined,
    ]),
  );
  const changed = (rowCount ?? 0) > 0;
  if (changed && timestamp !== null) {
    await db.query(
      `UPDATE message_mentions SET timestamp = $2
       WHERE message_seq = (SELECT seq FROM messages WHERE id = $1)`,
      [confirmation.id, timestamp],
    );
  }
  return changed;
}

export async function setState(db: Queryable, key: string, value: string | null): Promise<void> {
  if (value === null) await db.query('DELETE FROM colloquy_state WHERE key = $1', [key]);
  else {
    await db.query(
      `INSERT INTO colloquy_state (key, value, updated_at) VALUES ($1, $2, clock_timestamp())
       ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at`,
      [key, value],
    );
  }
}

export async function getState(db: Queryable, key: string): Promise<string | undefined> {
  const { rows } = await db.query<{ value: string }>(
    'SELECT value FROM colloquy_state WHERE key = $1',
    [key],
  );
  return rows[0]?.value;
}

/** Runs in some states, of one turn ($2) or conversation ($3) when given, oldest first. */
export const FIND_RUNS = `${SELECT_RUNS} WHERE r.status = ANY($1::text[])
    AND ($2::text IS NULL OR r.message_id = $2)
    AND ($3::text IS NULL OR r.conversation_id = $3)
  ORDER BY r.created_at, r.id`;

/** Runs by turn, conversation or status, oldest first, with how far each one's reply went. */
export async function findRuns(db: Queryable, query: RunQuery): Promise<AgentRun[]> {
  const { rows } = await db.query<RunRow>(FIND_RUNS, [
    query.statuses ?? ALL_STATUSES,
    query.messageId ?? null,
    query.conversationId ?? null,
  ]);
  return rows.map(toRun);
}

const UNTIL = `clock_timestamp() + $4::float8 * interval '1 millisecond'`;
const RETURNING = 'RETURNING name, holder, token, expires_at AS "expiresAt"';

/**
 * Takes lease `$1` for `$2` when it is free, or when it has expired (`$5`: or when `$2` holds
 * it, which extends it, keeping its token). A lease someone else holds is neither locked nor
 * written: the update's condition is false and the insert does nothing, so an instance that
 * keeps asking for a busy lease costs the database a read, not a commit to disk. Two
 * instances taking an expired lease at once both update its row; the second finds it no
 * longer expired and takes nothing.
 */
const TAKE = `WITH taken AS (
    UPDATE leases AS l SET holder = $2, expires_at = ${UNTIL},
      token = CASE WHEN l.holder = $2 THEN l.token ELSE $3 END
    WHERE l.name = $1 AND (l.expires_at <= clock_timestamp() OR ($5 AND l.holder = $2))
    ${RETURNING}),
  added AS (
    INSERT INTO leases (name, holder, token, expires_at)
    SELECT $1, $2, $3, ${UNTIL} WHERE NOT EXISTS (SELECT FROM leases WHERE name = $1)
    ON CONFLICT (name) DO NOTHING
    ${RETURNING})
  SELECT * FROM taken UNION ALL SELECT * FROM added`;

/**
 * Takes `name` when it is free or expired, or extends it for its holder; one statement, so
 * two instances never both take it. Time is the database's clock.
 */
export async function acquireLease(
  db: Queryable,
  name: string,
  holder: string,
  ttlMs: number,
): Promise<Lease | undefined> {
  const { rows } = await db.query<Lease>(TAKE, [name, holder, newLeaseToken(), ttlMs, true]);
  return rows[0];
}

export async function renewLease(db: Queryable, lease: Lease, ttlMs: number) {
  const { rows } = await db.query<Lease>(
    `UPDATE leases SET expires_at = clock_timestamp() + $3::float8 * interval '1 millisecond'
     WHERE name = $1 AND token = $2 ${RETURNING}`,
    [lease.name, lease.token, ttlMs],
  );
  return rows[0];
}

export async function releaseLease(db: Queryable, lease: Lease): Promise<void> {
  await db.query('DELETE FROM leases WHERE name = $1 AND token = $2', [lease.name, lease.token]);
}

/**
 * Takes the free or expired lease of each conversation with unfinished runs, one statement
 * each: whichever instance's statement comes first takes it, the others find it held.
 */
export async function claimConversations(
  db: Queryable,
  holder: string,
  ttlMs: number,
): Promise<{ lease: Lease; conversationId: string }[]> {
  const { rows } = await db.query<{ conversation_id: string }>(
    `SELECT DISTINCT conversation_id FROM agent_runs WHERE status IN ('pending', 'running')
     ORDER BY conversation_id`,
  );
  const claimed: { lease: Lease; conversationId: string }[] = [];
  for (const { conversation_id: conversationId } of rows) {
    const taken = await db.query<Lease>(TAKE, [
      `${CONVERSATION_LEASE_PREFIX}${conversationId}`,
      holder,
      newLeaseToken(),
      ttlMs,
      false,
    ]);
    if (taken.rows[0] !== undefined) claimed.push({ lease: taken.rows[0], conversationId });
  }
  return claimed;
}
