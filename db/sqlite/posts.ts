import type Database from 'better-sqlite3';
import type { NewPost, PostStatus, ScheduledPost } from '../../src/posts.js';
import { dueTimeOf } from '../../src/posts.js';
import { type PostRow, postOf } from '../rows.js';

/** `now`, and `now` plus `@ttl`, on the database's clock, as every timestamp column has them. */
const NOW = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now')`;
const UNTIL = `strftime('%Y-%m-%dT%H:%M:%fZ', 'now', '+' || (@ttl / 1000.0) || ' seconds')`;
const COLUMNS = `id, conversation_id AS conversationId, channel_type AS channelType, message,
  participant, due_at AS dueAt, status, created_at AS createdAt, claimed_by AS claimedBy,
  claimed_until AS claimedUntil, error`;

/**
 * The SQL of `scheduled_posts`, the queue of the posts the bot starts: the claim is one
 * statement, so two connections (two processes) on one file never claim one post twice.
 *
 * @example
 * ```ts
 * const posts = new PostStatements(db);
 * posts.claim('host:4242:ab12', 60_000, 50, false); // the due posts, now claimed
 * ```
 */
export class PostStatements {
  readonly #insert: Database.Statement;
  readonly #claim: Database.Statement;
  readonly #takeOver: Database.Statement;
  readonly #renew: Database.Statement;
  readonly #finish: Database.Statement;
  readonly #all: Database.Statement;

  constructor(db: Database.Database) {
    this.#insert = db.prepare(
      `INSERT INTO scheduled_posts (id, conversation_id, channel_type, message, participant,
        due_at, status, created_at, claimed_by, claimed_until)
       VALUES (@id, @conversationId, @channelType, @message, @participant, @dueAt, 'pending',
        ${NOW}, @holder, CASE WHEN @holder IS NULL THEN NULL ELSE ${UNTIL} END)
       ON CONFLICT (id) DO NOTHING`,
    );
    const claim = (free: string) =>
      db.prepare(
        `UPDATE scheduled_posts SET claimed_by = @holder, claimed_until = ${UNTIL}
         WHERE id IN (SELECT id FROM scheduled_posts
           WHERE status = 'pending' AND due_at <= ${NOW} ${free}
           ORDER BY due_at, id LIMIT @limit)
         RETURNING ${COLUMNS}`,
      );
    this.#claim = claim(`AND (claimed_until IS NULL OR claimed_until <= ${NOW})`);
    this.#takeOver = claim('');
    this.#renew = db.prepare(
      `UPDATE scheduled_posts SET claimed_until = ${UNTIL}
       WHERE status = 'pending' AND claimed_by = @holder`,
    );
    this.#finish = db.prepare(
      `UPDATE scheduled_posts SET status = @status, error = @error, claimed_by = NULL,
        claimed_until = NULL WHERE id = @id`,
    );
    this.#all = db.prepare(`SELECT ${COLUMNS} FROM scheduled_posts ORDER BY due_at, id`);
  }

  schedule(post: NewPost, claim?: { holder: string; ttlMs: number }): void {
    this.#insert.run({
      id: post.id,
      conversationId: post.conversationId,
      channelType: post.channelType,
      message: JSON.stringify(post.message),
      participant: JSON.stringify(post.participant),
      dueAt: dueTimeOf(post.dueAt),
      holder: claim?.holder ?? null,
      ttl: claim?.ttlMs ?? 0,
    });
  }

  claim(holder: string, ttl: number, limit: number, takeOver: boolean): ScheduledPost[] {
    const statement = takeOver ? this.#takeOver : this.#claim;
    const rows = statement.all({ holder, ttl, limit }) as PostRow[];
    return rows.map(postOf).sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0));
  }

  renew(holder: string, ttl: number): number {
    return this.#renew.run({ holder, ttl }).changes;
  }

  finish(id: string, status: PostStatus, error?: string): void {
    this.#finish.run({ id, status, error: error ?? null });
  }

  all(statuses?: readonly PostStatus[]): ScheduledPost[] {
    const posts = (this.#all.all() as PostRow[]).map(postOf);
    return statuses === undefined ? posts : posts.filter((post) => statuses.includes(post.status));
  }
}
