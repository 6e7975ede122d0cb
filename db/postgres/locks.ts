import type pg from 'pg';
import type { StoreOperation } from '../../src/store.js';
import { withMetadata } from '../../src/types.js';
import { normalizeTimestamp } from '../rows.js';
import { jsonWithoutNul, withoutNul } from './errors.js';

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
    FROM messages WHERE txid = pg_current_xact_id() GROUP BY participant_id),
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
 * Conversations a transaction writes, locked in id order: one a new turn goes to is created
 * empty when missing (the turn's upsert counts it); one only named by a run or a confirmation
 * is locked when it exists.
 */
const LOCK_CONVERSATIONS = `INSERT INTO conversations AS t (id, channel_type, channel_id,
    channel_name, thread_id, scope, created_at, last_message_at, message_count)
  SELECT x.id, coalesce(x.channel_type, c.channel_type), coalesce(x.channel_id, c.channel_id),
    x.channel_name, x.thread_id, coalesce(x.scope, c.scope), coalesce(x.at, c.created_at),
    coalesce(x.at, c.last_message_at), 0
  FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[],
    $7::timestamptz[]) AS x(id, channel_type, channel_id, channel_name, thread_id, scope, at)
  LEFT JOIN conversations c ON c.id = x.id
  WHERE x.channel_type IS NOT NULL OR c.id IS NOT NULL
  ORDER BY x.id
  ON CONFLICT (id) DO UPDATE SET message_count = t.message_count WHERE false`;

/** Turns a transaction changes (confirmed replies, edits, deletions), locked in seq order. */
const LOCK_MESSAGES = `SELECT seq FROM messages WHERE seq IN (
    SELECT seq FROM messages WHERE id = ANY($1::text[])
    UNION
    SELECT m.seq FROM unnest($2::text[], $3::text[], $4::text[]) AS k(channel_type, channel_id,
        platform_message_id)
      JOIN messages m ON m.channel_type = k.channel_type AND m.channel_id = k.channel_id
        AND m.platform_message_id = k.platform_message_id)
  ORDER BY seq FOR UPDATE`;

/** What the ops of one transaction write to rows other transactions write too. */
interface Shared {
  participants: Map<string, [kind: string, name: string | null, seen: string]>;
  conversations: Map<string, (string | null)[]>;
  replies: string[];
  /** Turns by platform key: channel types, channel ids, platform message ids. */
  platform: [string[], string[], string[]];
}

function sharedRows(ops: readonly StoreOperation[]): Shared {
  const shared: Shared = {
    participants: new Map(),
    conversations: new Map(),
    replies: [],
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
      if (shared.conversations.get(message.conversationId)?.[0] == null) {
        shared.conversations.set(message.conversationId, [
          metadata.channelType,
          metadata.channelId,
          metadata.channelName ?? null,
          metadata.threadId ?? null,
          message.scope,
          seen,
        ]);
      }
    } else if (op.kind === 'run' || op.kind === 'confirm') {
      const conversationId =
        op.kind === 'run' ? op.run.conversationId : op.confirmation.conversationId;
      if (!shared.conversations.has(conversationId)) shared.conversations.set(conversationId, []);
      if (op.kind === 'confirm') shared.replies.push(op.confirmation.id);
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
 * instances write too: participants created, then conversations, then existing turns, each in
 * key order; the participants' own rows last, as the transaction commits (`commitTransaction`).
 * Every transaction takes them in this one order, so two instances never wait on each other in
 * a cycle (a deadlock); the ops after find their rows locked already.
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
  const { participants, conversations, replies, platform } = sharedRows(ops);
  if (participants.size > 0) {
    const values = [...participants.values()];
    await client.query(
      ENSURE_PARTICIPANTS,
      withoutNul([[...participants.keys()], ...[0, 1, 2].map((i) => values.map((v) => v[i]))]),
    );
  }
  if (conversations.size > 0) {
    const values = [...conversations.values()];
    await client.query(
      LOCK_CONVERSATIONS,
      withoutNul([
        [...conversations.keys()],
        ...[0, 1, 2, 3, 4, 5].map((i) => values.map((v) => v[i] ?? null)),
      ]),
    );
  }
  if (replies.length > 0 || platform[0].length > 0) {
    await client.query(LOCK_MESSAGES, withoutNul([replies, ...platform]));
  }
}

/**
 * Commits the transaction `lockSharedRows` began for `ops`: the tallies of the participants
 * whose turns it inserted, then COMMIT, sent together (one round trip, so those rows stay
 * locked only while Postgres commits).
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
  if (participants.size === 0) {
    await client.query('COMMIT');
    return;
  }
  const who = [...participants].map(([id, [kind, name]]) => ({ id, kind, display_name: name }));
  // No parameters, so that both statements go in one message; the JSON is a quoted literal.
  const literal = client.escapeLiteral(jsonWithoutNul(JSON.stringify(who)));
  await client.query(`${TALLY_PARTICIPANTS(literal)};\nCOMMIT`);
}
