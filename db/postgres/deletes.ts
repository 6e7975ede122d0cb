import type pg from 'pg';
import { PG } from './statements.js';

// Transactions that delete take their locks in the order every transaction takes them
// (`lockSharedRows` in locks.ts): conversations, then participants, then turns, each in key
// order, all before they change anything. Their locks on conversations and participants are
// exclusive (they may delete the rows), so a capture that key-share locks the same rows waits
// for them, or they for it, and never both.

/** Conversations locked for a deletion, in id order; answers those that exist. */
const LOCK_CONVERSATIONS = `SELECT id FROM conversations WHERE id = ANY($1::text[])
  ORDER BY id FOR UPDATE`;

const LOCK_PARTICIPANTS = `SELECT id FROM participants WHERE id = ANY($1::text[])
  ORDER BY id FOR UPDATE`;

/**
 * The conversations forgetting `$1` changes, in id order: where they wrote, or the threads under
 * a turn of theirs (`metadata.threadParent`: a conversation of its own that retells that turn)
 * (`wrote`: their turns, the summaries and the recorded prompts there go, the conversation is
 * recounted), or where they were replied to or mentioned (those turns change). The threads' side
 * spells `messages_thread_parent_idx`'s expression and its WHERE, so it reads them from that index.
 */
export const CONVERSATIONS_OF = `SELECT conversation_id AS id, bool_or(wrote) AS wrote FROM (
    SELECT conversation_id, participant_id = $1 AS wrote FROM messages
    WHERE participant_id = $1 OR reply_to_participant_id = $1
    UNION ALL
    SELECT conversation_id, false FROM message_mentions WHERE participant_id = $1
    UNION ALL
    SELECT t.conversation_id, true FROM messages h JOIN messages t
      ON t.channel_type = h.channel_type AND t.channel_id = h.channel_id
        AND t.metadata->'threadParent'->>'id' = h.id
        AND t.metadata->'threadParent'->>'id' IS NOT NULL
    WHERE h.participant_id = $1 AND t.conversation_id <> h.conversation_id) x
  GROUP BY conversation_id ORDER BY conversation_id`;

/**
 * The turns forgetting `$1` changes, in seq order: theirs, replies to them, summaries, and those
 * they reacted to (whose reaction rows it deletes, as deleting a turn does).
 */
const LOCK_TURNS_OF = `SELECT seq FROM messages
  WHERE participant_id = $1 OR reply_to_participant_id = $1
    OR (is_summary AND conversation_id = ANY($2::text[]))
    OR seq IN (SELECT message_seq FROM message_reactions WHERE participant_id = $1)
  ORDER BY seq FOR UPDATE`;

const LOCK_TURNS = `SELECT seq FROM messages WHERE conversation_id = $1 AND id = ANY($2::text[])
  ORDER BY seq FOR UPDATE`;

const KEY_SHARE_CONVERSATION = `SELECT FROM conversations WHERE id = $1 FOR KEY SHARE`;

/**
 * Forgetting met a conversation it had not locked (the person wrote there meanwhile): the
 * transaction is rolled back and run again with the conversations it knows now locked first.
 */
export class MoreToLock extends Error {
  constructor(readonly conversations: readonly string[]) {
    super('forgetting found a conversation it had not locked');
  }
}

/**
 * Everything `forgetParticipant` changes, in one transaction; the turns it removed. Locks the
 * conversations the person is in (and `known`, from an earlier attempt), then the person, then
 * the turns it changes; throws `MoreToLock` when the person wrote in another conversation
 * before their row was locked, or wrote with no row to lock.
 *
 * @example
 * ```ts
 * const removed = await forget(client, 'telegram:1001', 'delete', []);
 * ```
 */
export async function forget(
  client: pg.PoolClient,
  participantId: string,
  mode: 'delete' | 'redact',
  known: readonly string[],
): Promise<number> {
  const q = (text: string) => client.query(text, [participantId]);
  const before = (await q(CONVERSATIONS_OF)).rows as { id: string; wrote: boolean }[];
  const locked = [...new Set([...known, ...before.map((row) => row.id)])].sort();
  const held = new Set(
    (await client.query<{ id: string }>(LOCK_CONVERSATIONS, [locked])).rows.map((row) => row.id),
  );
  // Their row locked, no turn of theirs goes in until this commits (a capture key-share locks
  // it first): the ones that did are read here, in conversations that may be new (or deleted
  // and made again) since the lock. With no row to lock they have no turns (the foreign key);
  // one written meanwhile makes their row anew and comes after the forget, so their turns and
  // row are left alone, and when such a turn is read here all the same it starts again.
  const present = ((await client.query(LOCK_PARTICIPANTS, [[participantId]])).rowCount ?? 0) > 0;
  const now = (await q(CONVERSATIONS_OF)).rows as { id: string; wrote: boolean }[];
  if (now.some((row) => !held.has(row.id) || (row.wrote && !present))) {
    throw new MoreToLock([...new Set([...locked, ...now.map((row) => row.id)])]);
  }
  const wrote = now.flatMap((row) => (row.wrote ? [row.id] : []));
  await client.query(LOCK_TURNS_OF, [participantId, wrote]);
  // A rolling summary can retell what the person said: those of these conversations go too.
  for (const id of wrote) await client.query(PG.deleteSummaries, [id]);
  // The reactions they put on anyone's turns go in both modes (those on their deleted turns
  // go with the turns).
  await q(PG.deleteReactionsOf);
  let changes = 0;
  if (present && mode === 'redact') {
    await q(PG.redactRevisions);
    changes = (await q(PG.redactMessages)).rowCount ?? 0;
    await q(PG.redactParticipant);
  }
  if (mode === 'delete') {
    if (present) changes = (await q(PG.deleteMessagesOf)).rowCount ?? 0;
    await q(PG.deleteMentionsOf);
    await q(PG.clearRepliesTo);
    if (present) await q(PG.deleteParticipant);
  }
  await client.query(PG.forgetPrompts, [wrote]);
  for (const id of wrote) {
    await client.query(PG.refreshConversation, [id]);
    await client.query(PG.deleteEmptyConversation, [id]);
  }
  return changes;
}

/**
 * Deletes a conversation (its turns go with it) and those of its authors who wrote nowhere
 * else; false when there is no such conversation.
 *
 * @example
 * ```ts
 * await deleteConversation(client, 'telegram:42');
 * ```
 */
export async function deleteConversation(
  client: pg.PoolClient,
  conversationId: string,
): Promise<boolean> {
  const { rowCount } = await client.query(LOCK_CONVERSATIONS, [[conversationId]]);
  if ((rowCount ?? 0) === 0) return false;
  const authors = await client.query<{ participant_id: string }>(PG.authorsIn, [conversationId]);
  const ids = authors.rows.map((row) => row.participant_id).sort();
  await client.query(LOCK_PARTICIPANTS, [ids]);
  await client.query(PG.deleteConversation, [conversationId]);
  await client.query(PG.deleteRuns, [conversationId]);
  await client.query(PG.deleteSilentParticipants, [ids]);
  return true;
}

/**
 * Deletes turns of one conversation and recounts it: the conversation key-share locked, then
 * the turns, then the conversation's own row, as a capture takes them.
 *
 * @example
 * ```ts
 * const removed = await deleteTurns(client, 'telegram:42', ['telegram:42:7']);
 * ```
 */
export async function deleteTurns(
  client: pg.PoolClient,
  conversationId: string,
  ids: string[],
): Promise<number> {
  await client.query(KEY_SHARE_CONVERSATION, [conversationId]);
  await client.query(LOCK_TURNS, [conversationId, ids]);
  const changes = (await client.query(PG.deleteMessages, [conversationId, ids])).rowCount ?? 0;
  if (changes > 0) {
    await client.query(PG.lockConversation, [conversationId]);
    await client.query(PG.refreshConversation, [conversationId]);
  }
  return changes;
}
