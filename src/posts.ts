import type { Channel, OutboundMessage } from './channel.js';
import { checkLeaseName, checkLeaseTtl } from './leases.js';
import type { Participant } from './types.js';

/**
 * What a post the bot starts says: an `OutboundMessage` without its place (the conversation
 * names it) and without a reply key (the post's id is one). `visibleTo` (a platform user id)
 * shows it to that person only, where the channel can (`Channel.ephemeral`: Slack).
 *
 * @example
 * ```ts
 * const message: PostMessage = { content: 'Your order shipped.' };
 * ```
 */
export type PostMessage = Omit<
  OutboundMessage,
  'conversationId' | 'scope' | 'channelId' | 'threadId' | 'replyToMessageId' | 'replyId'
>;

/**
 * Where a post stands: `pending` (stored, not yet delivered: due later, or being delivered),
 * `sent` (the platform confirmed it; the record is its turn, `metadata.origin = 'post'`),
 * `failed` (refused: `error` says why) or `unconfirmed` (a crash came between the platform
 * call and its answer and the channel could not settle it).
 */
export type PostStatus = 'pending' | 'sent' | 'failed' | 'unconfirmed';

/**
 * A post to store (`scheduled_posts`): its id is the colloquy id of the turn it becomes.
 *
 * @example
 * ```ts
 * const post: NewPost = {
 *   id: 'post:5f0c…', conversationId: 'telegram:42', channelType: 'telegram',
 *   message: { content: 'Reminder: your call is at 3pm' },
 *   participant: { kind: 'agent', id: 'telegram:99', displayName: 'Helper' },
 *   dueAt: '2026-11-28T15:00:00.000Z',
 * };
 * ```
 */
export interface NewPost {
  id: string;
  conversationId: string;
  channelType: string;
  message: PostMessage;
  /** Who the post is from (the agent, or the bot's identity on the channel). */
  participant: Participant;
  /** When it is to go out (ISO 8601 UTC). */
  dueAt: string;
}

/** A stored post, as `claimDuePosts` and `getPosts` answer it. */
export interface ScheduledPost extends NewPost {
  status: PostStatus;
  /** ISO 8601 UTC. */
  createdAt: string;
  /** The instance delivering it, until `claimedUntil`. */
  claimedBy?: string;
  claimedUntil?: string;
  error?: string;
}

/**
 * A store that keeps the posts the bot starts (`scheduled_posts`): the one queue every post
 * goes through, so one due while the bot was down goes out when it is back, and each goes out
 * once when several instances share the store. Every store colloquy ships has it.
 *
 * @example
 * ```ts
 * await store.schedulePost(post);
 * const due = await store.claimDuePosts('host-a:4242:ab12', 60_000); // claimed for a minute
 * await store.finishPost(due[0]!.id, 'sent');
 * ```
 */
export interface PostQueue {
  /**
   * Stores `post` as `pending` (a post already stored under its id is left as it is); with
   * `claim`, already claimed by `claim.holder` for `claim.ttlMs` (it is delivered at once).
   */
  schedulePost(post: NewPost, claim?: { holder: string; ttlMs: number }): Promise<void>;
  /**
   * Claims for `holder`, for `ttlMs`, up to `limit` (default 50) pending posts due by now whose
   * claim is free or expired, oldest due first; `takeOver` claims them whoever holds them (a
   * bot alone on its store, restarting). A post goes to one caller only, even when several
   * instances ask at once.
   */
  claimDuePosts(
    holder: string,
    ttlMs: number,
    options?: { limit?: number; takeOver?: boolean },
  ): Promise<ScheduledPost[]>;
  /**
   * Extends, to `ttlMs` from now, the claim of every pending post `holder` holds (a post whose
   * claim another holder took is left to it): a delivery that takes longer than a claim is not
   * taken up by another instance while it runs. Answers how many claims were renewed.
   */
  renewPostClaims(holder: string, ttlMs: number): Promise<number>;
  /** Ends a post: `sent`, `failed` (with why) or `unconfirmed`; its claim is dropped. */
  finishPost(id: string, status: Exclude<PostStatus, 'pending'>, error?: string): Promise<void>;
  /** Stored posts, oldest due first, in one of `statuses` when given. */
  getPosts(query?: { statuses?: readonly PostStatus[] }): Promise<ScheduledPost[]>;
}

/** How `bot.send` posts. */
export interface SendPostOptions {
  /** When to post (a `Date` or ISO 8601 text); now when absent or past. */
  at?: Date | string;
  /** Who the post is from: an agent (`{ id, name }`); default the bot's identity on the channel. */
  from?: { id: string; name?: string };
  /**
   * The channel the post goes through, named as `bot.openDm` names one (`'slack:U0BOTTWO'`, a
   * platform, or the `Channel`): needed where several channels know the conversation (two Slack
   * bots in one workspace). Kept as the post's author, so it goes without `from` there.
   */
  via?: string | Channel;
}

/**
 * What `bot.send` answers: the post's id (the colloquy id of its turn), and once it went out,
 * the platform's ids; a post due later answers with `dueAt` and no ids yet.
 */
export interface PostReceipt {
  id: string;
  conversationId: string;
  status: PostStatus;
  messageIds: string[];
  dueAt: string;
}

/**
 * Where a post into a conversation goes, as the channel reads the conversation id
 * (`Channel.placeOf`).
 */
export interface PostPlace {
  conversationId: string;
  scope: OutboundMessage['scope'];
  channelId: string;
  threadId?: string;
}

/** Checks a post's due time: a valid date, as ISO 8601 UTC; throws a one-line error else. */
export function dueTimeOf(at: Date | string | undefined, now = new Date()): string {
  if (at === undefined) return now.toISOString();
  const time = at instanceof Date ? at.getTime() : Date.parse(at);
  if (!Number.isFinite(time)) {
    throw new RangeError(`a post's "at" must be a Date or an ISO 8601 time, not ${String(at)}`);
  }
  return new Date(time).toISOString();
}

/**
 * A `claimDuePosts` call's terms, checked (a non-empty holder, a whole ttl above zero), with
 * its defaults: 50 posts, no take-over.
 *
 * @example
 * ```ts
 * const { limit, takeOver } = claimTerms('host-a:4242:ab12', 60_000, {}); // 50, false
 * ```
 */
export function claimTerms(
  holder: string,
  ttlMs: number,
  options: { limit?: number; takeOver?: boolean },
): { limit: number; takeOver: boolean } {
  checkLeaseName('claimDuePosts', holder);
  checkLeaseTtl(ttlMs);
  const { limit = 50, takeOver = false } = options;
  return { limit, takeOver };
}
