import { dueTimeOf } from '../posts.js';
import type { NewPost, PostQueue, PostStatus, ScheduledPost } from '../posts.js';

/**
 * A post queue in this process's memory: the `InMemoryConversationStore`'s.
 *
 * @example
 * ```ts
 * const queue = new MemoryPostQueue();
 * await queue.schedulePost(post);
 * ```
 */
export class MemoryPostQueue implements PostQueue {
  readonly #posts = new Map<string, ScheduledPost>();

  async schedulePost(post: NewPost, claim?: { holder: string; ttlMs: number }): Promise<void> {
    if (this.#posts.has(post.id)) return;
    this.#posts.set(post.id, {
      ...structuredClone(post),
      dueAt: dueTimeOf(post.dueAt),
      status: 'pending',
      createdAt: new Date().toISOString(),
      ...(claim !== undefined && claimOf(claim.holder, claim.ttlMs)),
    });
  }

  async claimDuePosts(
    holder: string,
    ttlMs: number,
    options: { limit?: number; takeOver?: boolean } = {},
  ): Promise<ScheduledPost[]> {
    const now = new Date().toISOString();
    const due = (await this.getPosts({ statuses: ['pending'] })).filter(
      (post) =>
        post.dueAt <= now &&
        (options.takeOver === true || post.claimedUntil === undefined || post.claimedUntil <= now),
    );
    return due.slice(0, options.limit ?? 50).map((post) => {
      const claimed = { ...post, ...claimOf(holder, ttlMs) };
      this.#posts.set(post.id, claimed);
      return structuredClone(claimed);
    });
  }

  async renewPostClaims(holder: string, ttlMs: number): Promise<number> {
    const held = [...this.#posts.values()].filter(
      (post) => post.status === 'pending' && post.claimedBy === holder,
    );
    for (const post of held) this.#posts.set(post.id, { ...post, ...claimOf(holder, ttlMs) });
    return held.length;
  }

  async finishPost(id: string, status: Exclude<PostStatus, 'pending'>, error?: string) {
    const post = this.#posts.get(id);
    if (post === undefined) return;
    const { claimedBy: _, claimedUntil: __, ...rest } = post;
    this.#posts.set(id, { ...rest, status, ...(error !== undefined && { error }) });
  }

  async getPosts(query: { statuses?: readonly PostStatus[] } = {}): Promise<ScheduledPost[]> {
    const { statuses } = query;
    return [...this.#posts.values()]
      .filter((post) => statuses === undefined || statuses.includes(post.status))
      .sort((a, b) => (a.dueAt < b.dueAt ? -1 : a.dueAt > b.dueAt ? 1 : 0))
      .map((post) => structuredClone(post));
  }
}

function claimOf(holder: string, ttlMs: number): { claimedBy: string; claimedUntil: string } {
  return { claimedBy: holder, claimedUntil: new Date(Date.now() + ttlMs).toISOString() };
}
