import type pg from 'pg';
import type { AgentRun, ReplyConfirmation } from '../../src/runs.js';
import type { StoreOperation } from '../../src/store.js';
import { CREATE_RUNS, runColumns } from './batch.js';
import { withMetadata } from '../../src/types.js';
import { normalizeTimestamp } from '../rows.js';
import { storableJson, withoutNul } from './errors.js';

/**
 * Participants a transaction's turns name, created when missing, in id order. One that exists
 * is not locked (`DO NOTHING`): its tallies are written by the last statement of the
 * transaction (`TALLY_PARTICIPANTS`), so a row every reply names (the bot's own) is held only
 * while the transaction commits.
 */
const ENSURE_PARTICIPANTS = `INSERT INTO participants AS t (id, kind, display_name, first_seen_at,
    last_seen_at)
  SELECT w.id, w.kind, w.display_name, w.seen, w.seen
  FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[])
    AS w(id, kind, display_name, seen)
  ORDER BY w.id
  ON CONFLICT (id) DO NOTHING`;

/**
 * The seen-times, kind and name of the participants whose turns this transaction inserted
 * (`txid`), locked in id order: the newest turn names a participant, the seen-times span every
 * turn. `$1` is a JSON array of `{ id, kind, display_name }`.
 */
const TALLY_PARTICIPANTS = (who: string) => `WITH seen AS (
    SELECT participant_id AS id, min(timestamp) AS first, max(timestamp) AS last
    FROM messages WHERE txid = pg_current_xact_id_if_assigned() GROUP BY participant_id),
  locked AS MATERIALIZED (
    SELECT t.id FROM participants t WHERE t.id IN (SELECT id FROM seen)
    ORDER BY t.id FOR NO KEY UPDATE)
  UPDATE participants AS t SET
    kind = CASE WHEN s.last >= t.last_seen_at THEN coalesce(w.kind, t.kind) ELSE t.kind END,
    display_name = CASE
      WHEN w.display_name IS NOT NULL AND (s.last >= t.last_seen_at OR t.display_name IS NULL)
      THEN w.display_name ELSE t.display_name END,
    first_seen_at = least(t.first_seen_at, s.first),
    last_seen_at = greatest(t.last_seen_at, s.last)
  FROM locked l JOIN seen s ON s.id = l.id
    LEFT JOIN jsonb_to_recordset(${who}::jsonb) AS w(id text, kind text, display_name text)
      ON w.id = l.id
  WHERE t.id = l.id`;

/**
 * Conversations a new turn of the transaction goes to, created empty when missing, in id
 * order. One that exists is not locked: its count and times are written by the statement that
 * commits the transaction (`TALLY_CONVERSATIONS`).
 */
const ENSURE_CONVERSATIONS = `INSERT INTO conversations (id, channel_type, channel_id,
    channel_name, thread_id, scope, created_at, last_message_at, message_count)
  SELECT x.id, x.channel_type, x.channel_id, x.channel_name, x.thread_id, x.scope, x.at, x.at, 0
  FROM unnest($5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
    $11::timestamptz[]) AS x(id, channel_type, channel_id, channel_name, thread_id, scope, at)
  WHERE x.channel_type IS NOT NULL
  ORDER BY x.id
  ON CONFLICT (id) DO NOTHING`;

/** A conversation's time read again from its turns where a confirmation retimed one. */
const reread = (span: 'min' | 'max', column: string) => `WHEN p.refresh THEN coalesce(
        (SELECT ${span}(m.timestamp) FROM messages m WHERE m.conversation_id = t.id),
        t.${column})`;

/**
 * The count, span and name of the conversations this transaction inserted turns into
 * (`txid`), the span of those where it confirmed a reply at a new time (the earliest and
 * newest turns'), and the count and span of those where it deleted a refused reply, locked in
 * id order. `place` is a JSON array of `{ id, channel_name, thread_id, refresh, recount }`.
 */
const TALLY_CONVERSATIONS = (place: string) => `WITH added AS (
    SELECT conversation_id AS id, count(*) AS n, min(timestamp) AS first, max(timestamp) AS last
    FROM messages WHERE txid = pg_current_xact_id_if_assigned() GROUP BY conversation_id),
  place AS (
    SELECT * FROM jsonb_to_recordset(${place}::jsonb)
      AS w(id text, channel_name text, thread_id text, refresh boolean, recount boolean)),
  locked AS MATERIALIZED (
    SELECT t.id FROM conversations t
    WHERE t.id IN (SELECT id FROM added) OR t.id IN (SELECT id FROM place WHERE refresh)
    ORDER BY t.id FOR NO KEY UPDATE)
  UPDATE conversations AS t SET
    message_count = CASE
      WHEN p.recount THEN (SELECT count(*) FROM messages m WHERE m.conversation_id = t.id)
      ELSE t.message_count + coalesce(a.n, 0) END,
    created_at = CASE
      ${reread('min', 'created_at')}
      WHEN a.n IS NULL THEN t.created_at
      WHEN t.message_count = 0 THEN a.first
      ELSE least(t.created_at, a.first) END,
    last_message_at = CASE
      ${reread('max', 'last_message_at')}
      WHEN a.n IS NULL THEN t.last_message_at
      WHEN t.message_count = 0 THEN a.last
      ELSE greatest(t.last_message_at, a.last) END,
    channel_name = CASE WHEN a.n IS NULL THEN t.channel_name
      ELSE coalesce(p.channel_name, t.channel_name) END,
    thread_id = CASE WHEN a.n IS NULL THEN t.thread_id ELSE coalesce(t.thread_id, p.thread_id) END
  FROM locked l LEFT JOIN added a ON a.id = l.id LEFT JOIN place p ON p.id = l.id
  WHERE t.id = l.id`;

/**
 * Key-share locks on the conversations and then the participants a transaction's turns name
 * (and the conversations of the replies it confirms), each in id order: what the foreign keys
 * of its inserts take, taken first and in the order every deleting transaction takes its
 * stronger locks (deletes.ts). A key-share lock waits only for a transaction that deletes the
 * row; answers the ids it locked.
 */
const KEY_SHARE = `WITH c AS MATERIALIZED (
    SELECT id FROM conversations WHERE id = ANY($1::text[]) ORDER BY id FOR KEY SHARE),
  p AS MATERIALIZED (
    SELECT id FROM participants WHERE id = ANY($2::text[]) AND (SELECT count(*) FROM c) >= 0
    ORDER BY id FOR KEY SHARE)
  SELECT coalesce((SELECT array_agg(id) FROM c), '{}') AS conversations,
    coalesce((SELECT array_agg(id) FROM p), '{}') AS participants`;

/** Turns a transaction changes (confirmed replies, edits, deletions), locked in seq order. */
const LOCK_MESSAGES = `SELECT seq FROM messages WHERE seq IN (
    SELECT seq FROM messages WHERE id = ANY($1::text[])
    UNION
    SELECT m.seq FROM unnest($2::text[], $3::text[], $4::text[]) AS k(channel_type, channel_id,
        platform_message_id)
      JOIN messages m ON m.channel_type = k.channel_type AND m.channel_id = k.channel_id
        AND m.platform_message_id = k.platform_message_id)
  ORDER BY seq FOR UPDATE`;

/**
 * Runs a transaction writes: those recorded already locked in id order, then the missing ones
 * created, in id order (the insert, which nothing reads, runs after the locking select).
 */
const LOCK_RUNS = `WITH created AS (${CREATE_RUNS} RETURNING id)
  SELECT id FROM agent_runs WHERE id = ANY($16::text[]) ORDER BY id FOR NO KEY UPDATE`;

/** What the ops of one transaction write to rows other transactions write too. */
interface Shared {
  participants: Map<string, [kind: string, name: string | null, seen: string]>;
  conversations: Map<string, (string | null)[]>;
  /** Conversations of the replies confirmed, key-share locked with those of new turns. */
  confirmed: Set<string>;
  replies: string[];
  /** Each run written, as the first op that writes it has it. */
  runs: Map<string, AgentRun>;
  /** Turns by platform key: channel types, channel ids, platform message ids. */
  platform: [string[], string[], string[]];
}

function sharedRows(ops: readonly StoreOperation[]): Shared {
  const shared: Shared = {
    participants: new Map(),
    conversations: new Map(),
    confirmed: new Set(),
    replies: [],
    runs: new Map(),
    platform: [[], [], []],
  };
  for (const op of ops) {
    if (op.kind === 'append' || op.kind === 'reply') {
      const message = withMetadata(op.message);
      const { participant, metadata } = message;
      // A turn the store refuses (a bad time) is refused by its own statement, not here.
      let seen: string;
      try {
        seen = normalizeTimestamp(message.timestamp, 'timestamp');
      } catch {
        continue;
      }
      const known = shared.participants.get(participant.id);
      shared.participants.set(participant.id, [
        participant.kind,
        participant.displayName ?? known?.[1] ?? null,
        known?.[2] ?? seen,
      ]);
      if (!shared.conversations.has(message.conversationId)) {
        shared.conversations.set(message.conversationId, [
          metadata.channelType,
          metadata.channelId,
          metadata.channelName ?? null,
          metadata.threadId ?? null,
          message.scope,
          seen,
        ]);
      }
    } else if (op.kind === 'confirm') {
      shared.replies.push(op.confirmation.id);
      shared.confirmed.add(op.confirmation.conversationId);
    } else if (op.kind === 'run' && !shared.runs.has(op.run.id)) {
      shared.runs.set(op.run.id, op.run);
    } else if (op.kind === 'edit' || op.kind === 'delete') {
      const { channelType, channelId, messageId } = op.kind === 'edit' ? op.edit : op.deletion;
      shared.platform[0].push(channelType);
      shared.platform[1].push(channelId);
      shared.platform[2].push(messageId);
    }
  }
  return shared;
}

/**
 * Takes, first thing in a transaction, the row locks its ops will take on rows that other
 * instances write too: conversations and participants created when missing, then key-share
 * locks on those and on the conversations of confirmed replies (`KEY_SHARE`), then existing
 * turns, then runs (locked, then created when missing), each in key order; the conversations'
 * and the participants' own rows last, as the transaction commits (`commitTransaction`). The
 * ops after find their rows locked already.
 * Every transaction takes its locks in this one order, those that delete too (deletes.ts:
 * conversations, participants, turns), so none waits on another in a cycle.
 *
 * @example
 * ```ts
 * await client.query('BEGIN');
 * await lockSharedRows(client, ops);
 * ```
 */
export async function lockSharedRows(
  client: pg.PoolClient,
  ops: readonly StoreOperation[],
): Promise<void> {
  const { participants, conversations, confirmed, replies, runs, platform } = sharedRows(ops);
  if (participants.size > 0 || conversations.size > 0 || confirmed.size > 0) {
    await ensureKeyShared(client, participants, conversations, confirmed);
  }
  if (replies.length > 0 || platform[0].length > 0) {
    await client.query(LOCK_MESSAGES, withoutNul([replies, ...platform]));
  }
  if (runs.size > 0) {
    const ids = [...runs.keys()].sort();
    await client.query(LOCK_RUNS, [...runColumns(ids.map((id) => runs.get(id)!)), withoutNul(ids)]);
  }
}

/**
 * Creates the conversations and participants of new turns when missing, then key-share locks
 * them and the conversations of confirmed replies. A row a deleting transaction removed in
 * between (a forget, a deleted conversation) is created again, as it would be after it.
 */
async function ensureKeyShared(
  client: pg.PoolClient,
  participants: Shared['participants'],
  conversations: Shared['conversations'],
  confirmed: Set<string>,
): Promise<void> {
  const people = [...participants.values()];
  const places = [...conversations.values()];
  const ensure = withoutNul([
    [...participants.keys()],
    ...[0, 1, 2].map((i) => people.map((v) => v[i])),
    [...conversations.keys()],
    ...[0, 1, 2, 3, 4, 5].map((i) => places.map((v) => v[i] ?? null)),
  ]);
  const [conversationIds, participantIds, created] = withoutNul([
    [...new Set([...conversations.keys(), ...confirmed])],
    [...participants.keys()],
    [...conversations].flatMap(([id, place]) => (place[0] == null ? [] : [id])),
  ]) as string[][];
  for (;;) {
    if (participants.size > 0 || conversations.size > 0) {
      // One statement: the conversations are created as it runs, then the participants (a
      // data-modifying WITH that nothing reads runs last), in this order in every transaction.
      await client.query(`WITH p AS (${ENSURE_PARTICIPANTS}) ${ENSURE_CONVERSATIONS}`, ensure);
    }
    const { rows } = await client.query<{ conversations: string[]; participants: string[] }>(
      KEY_SHARE,
      [conversationIds, participantIds],
    );
    const locked = rows[0]!;
    if (
      locked.participants.length === participantIds!.length &&
      created!.every((id) => locked.conversations.includes(id))
    ) {
      return;
    }
  }
}

/**
 * Commits the transaction `lockSharedRows` began for `ops`: the tallies of the conversations
 * and then the participants whose turns it inserted (or whose replies it confirmed at a new
 * time), then COMMIT, all sent together: one round trip, so those rows, which every instance
 * writes, stay locked only while Postgres commits.
 *
 * @example
 * ```ts
 * await commitTransaction(client, ops);
 * ```
 */
export async function commitTransaction(
  client: pg.PoolClient,
  ops: readonly StoreOperation[],
): Promise<void> {
  const { participants } = sharedRows(ops);
  const places = placesOf(ops);
  if (participants.size === 0 && places.length === 0) {
    await client.query('COMMIT');
    return;
  }
  const who = [...participants].map(([id, [kind, name]]) => ({ id, kind, display_name: name }));
  // No parameters, so that the statements go in one message; the JSON goes as quoted literals.
  const literal = (value: unknown) => client.escapeLiteral(storableJson(JSON.stringify(value)));
  await client.query(
    [
      ...(places.length > 0 ? [TALLY_CONVERSATIONS(literal(places))] : []),
      ...(participants.size > 0 ? [TALLY_PARTICIPANTS(literal(who))] : []),
      'COMMIT',
    ].join(';\n'),
  );
}

/**
 * Per conversation: the name its newest turn gives, its first thread id, whether to read its
 * span again (a reply confirmed at a new time) and its count too (a refused reply deleted).
 */
function placesOf(ops: readonly StoreOperation[]) {
  interface Place {
    id: string;
    channel_name: string | null;
    thread_id: string | null;
    refresh: boolean;
    recount: boolean;
  }
  const places = new Map<string, Place>();
  const place = (id: string) => {
    const known = places.get(id) ?? {
      id,
      channel_name: null,
      thread_id: null,
      refresh: false,
      recount: false,
    };
    places.set(id, known);
    return known;
  };
  for (const op of ops) {
    if (op.kind === 'append' || op.kind === 'reply') {
      const { metadata } = withMetadata(op.message);
      const known = place(op.message.conversationId);
      known.channel_name = metadata.channelName ?? known.channel_name;
      known.thread_id ??= metadata.threadId ?? null;
    } else if (op.kind === 'confirm' && isRefused(op.confirmation)) {
      const known = place(op.confirmation.conversationId);
      known.refresh = known.recount = true;
    } else if (op.kind === 'confirm' && op.confirmation.timestamp !== undefined) {
      place(op.confirmation.conversationId).refresh = true;
    }
  }
  return [...places.values()];
}

/**
 * Whether a confirmation says the platform refused the whole reply: nothing went out, so its
 * row is deleted (and its conversation recounted as the transaction commits).
 *
 * @example
 * ```ts
 * isRefused({ id, conversationId, messageIds: [], delivery: 'failed' }); // true
 * ```
 */
export function isRefused(confirmation: ReplyConfirmation): boolean {
  return confirmation.delivery === 'failed' && confirmation.messageIds.length === 0;
}
