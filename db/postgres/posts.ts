import type { NewPost, PostStatus, ScheduledPost } from '../../src/posts.js';
import { dueTimeOf } from '../../src/posts.js';
import { type PostRow, postOf } from '../rows.js';
import type { Queryable } from './runs.js';

const UNTIL = `clock_timestamp() + $3::float8 * interval '1 millisecond'`;
const COLUMNS = `id, conversation_id AS "conversationId", channel_type AS "channelType", message,
  participant, due_at AS "dueAt", status, created_at AS "createdAt", claimed_by AS "claimedBy",
  claimed_until AS "claimedUntil", error`;

/**
 * Claims `$4` due pending posts for `$2` for `$3` ms, oldest due first: rows another instance
 * is claiming are skipped (`SKIP LOCKED`), so each post goes to one instance. `$1`: whoever
 * holds them (a bot alone on its store, restarting).
 */
const CLAIM = `UPDATE scheduled_posts SET claimed_by = $2, claimed_until = ${UNTIL}
  WHERE id IN (SELECT id FROM scheduled_posts
    WHERE status = 'pending' AND due_at <= clock_timestamp()
      AND ($1 OR claimed_until IS NULL OR claimed_until <= clock_timestamp())
    ORDER BY due_at, id LIMIT $4 FOR UPDATE SKIP LOCKED)
  RETURNING ${COLUMNS}`;

/** Stores a post (pending; claimed by `claim.holder` when given); an id already stored stays. */
export async function schedulePost(
  db: Queryable,
  post: NewPost,
  claim?: { holder: string; ttlMs: number },
): Promise<void> {
  await db.query(
    `INSERT INTO scheduled_posts (id, conversation_id, channel_type, message, participant,
      due_at, status, created_at, claimed_by, claimed_until)
     VALUES ($1, $4, $5, $6, $7, $8, 'pending', clock_timestamp(), $2,
      CASE WHEN $2::text IS NULL THEN NULL ELSE ${UNTIL} END)
     ON CONFLICT (id) DO NOTHING`,
    [
      post.id,
      claim?.holder ?? null,
      claim?.ttlMs ?? 0,
      post.conversationId,
      post.channelType,
      JSON.stringify(post.message),
      JSON.stringify(post.participant),
      dueTimeOf(post.dueAt),
    ],
  );
}

/** See `CLAIM`. */
export async function claimDuePosts(
  db: Queryable,
  holder: string,
  ttlMs: number,
  limit: number,
  takeOver: boolean,
): Promise<ScheduledPost[]> {
  const { rows } = await db.query(CLAIM, [takeOver, holder, ttlMs, limit]);
  return (rows as PostRow[])
    .map(postOf)
    .sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0));
}

/** Extends the claims `holder` has on pending posts to `ttlMs` from now; answers how many. */
export async function renewPostClaims(
  db: Queryable,
  holder: string,
  ttlMs: number,
): Promise<number> {
  const { rowCount } = await db.query(
    `UPDATE scheduled_posts SET claimed_until = ${UNTIL.replace('$3', '$2')}
     WHERE status = 'pending' AND claimed_by = $1`,
    [holder, ttlMs],
  );
  return rowCount ?? 0;
}

/** Ends a post, dropping its claim. */
export async function finishPost(
  db: Queryable,
  id: string,
  status: PostStatus,
  error?: string,
): Promise<void> {
  await db.query(
    `UPDATE scheduled_posts SET status = $2, error = $3, claimed_by = NULL, claimed_until = NULL
     WHERE id = $1`,
    [id, status, error ?? null],
  );
}

/** Stored posts, oldest due first, in one of `statuses` when given. */
export async function getPosts(
  db: Queryable,
  statuses?: readonly PostStatus[],
): Promise<ScheduledPost[]> {
  const { rows } = await db.query(
    `SELECT ${COLUMNS} FROM scheduled_posts WHERE $1::text[] IS NULL OR status = ANY($1)
     ORDER BY due_at, id`,
    [statuses ?? null],
  );
  return (rows as PostRow[]).map(postOf);
}
