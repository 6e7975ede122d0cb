import { randomUUID } from 'node:crypto';
import type { Channel, OutboundMessage, SentMessage } from '../channel.js';
import { ColloquyError, StoreError, deliveryAfterFailure, messageOf } from '../errors.js';
import { newLeaseHolder } from '../leases.js';
import type {
  NewPost,
  PostMessage,
  PostPlace,
  PostQueue,
  PostReceipt,
  ScheduledPost,
  SendPostOptions,
} from '../posts.js';
import { dueTimeOf } from '../posts.js';
import { channelNamed, postRoute } from '../channel/place.js';
import { outboundChain } from '../chain.js';
import type { SendHook } from '../chain.js';
import type { ConversationStore } from '../store.js';
import type { NewMessage, Participant, StoredMessage } from '../types.js';
import { RecordedElsewhere, confirmation, sendThroughOutbox } from './outbox.js';
import type { Write } from './outbox.js';
import { actionsOf } from './turn.js';
import { settlerFor } from './settle.js';
import type { Settle, UnconfirmedReplies } from './settle.js';

/** What the posts the bot starts need from it. */
export interface PostsDeps {
  channels: readonly Channel[];
  store: ConversationStore;
  /** The store's post queue; without one a post goes out at once, and `at` is refused. */
  queue: PostQueue | undefined;
  write: Write;
  /** The bot's send hooks: a post passes them, as a reply does, before the outbox. */
  sendHooks?: readonly SendHook[];
  unconfirmed: UnconfirmedReplies | undefined;
  /** Other instances share the store: a post another one claimed is left to it until its claim expires. */
  shared: boolean;
  /** How long a claim on a post lasts (default 60 000 ms). */
  claimTtlMs?: number;
  /** How often due posts are looked for (default 1000 ms). */
  pollMs?: number;
  report(error: unknown): void;
  /** Runs work the bot waits for at `idle` and `stop`. */
  track(work: () => Promise<void>): Promise<void>;
}

/**
 * The posts the bot starts (`bot.send`): every post is a row of the store's post queue, and
 * one loop delivers what is due (at start, then every `pollMs`) through the outbox, as a turn
 * with `metadata.origin = 'post'`: recorded `sending`, then sent, then `sent` with the
 * platform's ids. A post due now is claimed as it is stored and delivered at once. After a
 * crash, a claimed post whose turn was recorded is settled as replies are (`Channel.settle`,
 * else `unconfirmedReplies`); one not yet recorded is sent.
 *
 * @example
 * ```ts
 * const posts = new Posts({ channels, store, queue: store, write, unconfirmed: 'leave', shared: false, report, track });
 * await posts.start();
 * await posts.send('telegram:42', 'Your order shipped.');
 * ```
 */
export class Posts {
  readonly #deps: PostsDeps;
  readonly #holder = newLeaseHolder();
  readonly #ttl: number;
  readonly #settlers = new Map<Channel, Settle | undefined>();
  #timer: NodeJS.Timeout | undefined;
  #renewer: NodeJS.Timeout | undefined;
  #draining: Promise<void> | undefined;
  /**
   * Posts this instance claimed whose delivery met a store failure before it ended them:
   * delivered again by a later drain if their claim is still this instance's then.
   */
  #unfinished: ScheduledPost[] = [];

  constructor(deps: PostsDeps) {
    this.#deps = deps;
    this.#ttl = deps.claimTtlMs ?? 60_000;
    for (const channel of deps.channels) {
      this.#settlers.set(channel, settlerFor(channel, deps.unconfirmed ?? 'leave'));
    }
  }

  /**
   * Delivers what came due while the bot was down, then looks for due posts every `pollMs`;
   * the claims it holds are renewed every third of their time, so a post another instance
   * could take over is one whose instance stopped renewing it.
   */
  async start(): Promise<void> {
    const { queue } = this.#deps;
    if (queue === undefined) return;
    const renew = () =>
      queue.renewPostClaims(this.#holder, this.#ttl).catch((cause: unknown) => {
        this.#deps.report(new StoreError('could not renew the claims on posts', { cause }));
      });
    this.#renewer = setInterval(() => void renew(), this.#ttl / 3);
    this.#renewer.unref();
    await this.#drain(!this.#deps.shared);
    this.#timer = setInterval(() => void this.#drain(false), this.#deps.pollMs ?? 1000);
    this.#timer.unref();
  }

  /** Stops looking for due posts (a delivery under way is waited for by the bot's `idle`). */
  stop(): void {
    clearInterval(this.#timer);
    clearInterval(this.#renewer);
  }

  /**
   * Posts `message` into `conversationId` now, or stores it to go out `at` a later time.
   * Rejects with a one-line `ColloquyError` when no channel knows the conversation, and with
   * the platform's error when it refused the post. A `StoreError` once the post is stored
   * means the store failed while it was being delivered: it goes out once the store answers.
   */
  async send(
    conversationId: string,
    message: string | PostMessage,
    options: SendPostOptions = {},
  ): Promise<PostReceipt> {
    const { channel, place, participant } = this.#route(conversationId, options);
    const body: PostMessage = typeof message === 'string' ? { content: message } : message;
    if (body.visibleTo !== undefined && channel.ephemeral !== true) {
      throw new ColloquyError(
        `the ${channel.type} channel cannot show a post to one person only (visibleTo)`,
        { conversationId },
      );
    }
    const post: NewPost = {
      id: `post:${randomUUID()}`,
      conversationId: place.conversationId,
      channelType: channel.type,
      message: body,
      participant,
      dueAt: dueTimeOf(options.at),
    };
    const { queue } = this.#deps;
    const later = Date.parse(post.dueAt) > Date.now();
    if (queue === undefined && later) {
      throw new ColloquyError('this store keeps no post queue: a post cannot be scheduled', {
        conversationId,
      });
    }
    if (body.files !== undefined && later) {
      throw new ColloquyError('a post with files cannot wait: its bytes are not stored', {
        conversationId,
      });
    }
    const stored: ScheduledPost = { ...post, status: 'pending', createdAt: post.dueAt };
    if (queue === undefined) return this.#deliver(stored);
    // The queue keeps the text, never a file's bytes: files go out with the post sent now.
    const { files: _, ...kept } = body;
    const claim = later ? undefined : { holder: this.#holder, ttlMs: this.#ttl };
    try {
      await queue.schedulePost({ ...post, message: kept }, claim);
    } catch (cause) {
      throw new StoreError('could not store the post', { cause, conversationId });
    }
    if (later) return receipt(stored, []);
    return this.#deliver(stored).catch((error: unknown) => {
      if (error instanceof StoreError) this.#unfinished.push(stored);
      throw error;
    });
  }

  /**
   * The conversation id of the DM with `platformUserId` on `on` (see `Bot.openDm`), opened on
   * the platform when it must be.
   */
  async openDm(on: string | Channel, platformUserId: string): Promise<string> {
    const channel = channelNamed(this.#deps.channels, on, 'openDm');
    if (channel.openDm === undefined) {
      throw new ColloquyError(`the ${channel.type} channel cannot open a DM`);
    }
    return channel.openDm(platformUserId);
  }

  /** Claims the due posts and delivers them one after another; one drain at a time. */
  #drain(takeOver: boolean): Promise<void> {
    this.#draining ??= this.#deps
      .track(async () => {
        const due = await this.#stillClaimed(this.#unfinished.splice(0));
        try {
          due.push(
            ...(await this.#deps.queue!.claimDuePosts(this.#holder, this.#ttl, { takeOver })),
          );
        } catch (cause) {
          this.#deps.report(new StoreError('could not claim the posts due', { cause }));
        }
        for (const post of due) {
          await this.#deliver(post).catch((error: unknown) => {
            if (error instanceof StoreError) this.#unfinished.push(post);
            this.#deps.report(error);
          });
        }
      })
      .finally(() => (this.#draining = undefined));
    return this.#draining;
  }

  /**
   * Of `posts` (claimed, their delivery cut short by the store), those this instance still
   * holds, their claims renewed first: while the store failed, a claim left unrenewed may have
   * expired and been taken by another instance, which delivers the post. Kept for a later
   * drain when the store cannot tell.
   */
  async #stillClaimed(posts: ScheduledPost[]): Promise<ScheduledPost[]> {
    if (posts.length === 0) return [];
    const queue = this.#deps.queue!;
    try {
      await queue.renewPostClaims(this.#holder, this.#ttl);
      const pending = await queue.getPosts({ statuses: ['pending'] });
      const held = new Set(pending.filter((p) => p.claimedBy === this.#holder).map((p) => p.id));
      return posts.filter((post) => held.has(post.id));
    } catch (cause) {
      this.#unfinished.push(...posts);
      this.#deps.report(new StoreError('could not check the claims on posts to send', { cause }));
      return [];
    }
  }

  /**
   * The channel a new post goes through (the one `via` names, else the one that knows the
   * conversation), the place it reads there, and the post's author, checked to pick that
   * channel again from the stored post (`postRoute`).
   */
  #route(conversationId: string, { via, from }: SendPostOptions) {
    const { channels } = this.#deps;
    const knowing = channels.filter((c) => c.placeOf?.(conversationId) !== undefined);
    const named = via === undefined ? undefined : channelNamed(channels, via, 'via');
    const where = { conversationId };
    if (named !== undefined && !knowing.includes(named)) {
      const which = named.botIdentity?.id ?? named.type;
      throw new ColloquyError(`${which} does not know conversation ${conversationId}`, where);
    }
    const [first] = knowing;
    if (first === undefined) {
      const types = channels.map((c) => c.type).join(', ');
      const why = `no channel of this bot (${types}) knows conversation ${conversationId}`;
      throw new ColloquyError(why, where);
    }
    const participant = authorOf(named ?? first, from);
    try {
      const author = named === undefined ? '' : participant.id;
      return { ...postRoute(channels, first.type, conversationId, author), participant };
    } catch (error) {
      if (named === undefined || from === undefined) throw error;
      throw new ColloquyError(
        `${messageOf(error)}; a post from an agent (from) keeps no channel, so it cannot be sent there`,
        { ...where, cause: error },
      );
    }
  }

  /**
   * Delivers a claimed post: sent through the outbox when its turn is not yet recorded, else
   * settled (a crash came between the record and the confirmation), then ended in the queue.
   */
  async #deliver(post: ScheduledPost): Promise<PostReceipt> {
    const { conversationId } = post;
    let route: { channel: Channel; place: PostPlace };
    try {
      route = postRoute(this.#deps.channels, post.channelType, conversationId, post.participant.id);
    } catch (error) {
      const why = messageOf(error);
      await this.#finish(post, 'failed', why);
      throw new ColloquyError(`post ${post.id} not sent: ${why}`, { conversationId, cause: error });
    }
    const { channel, place } = route;
    const outbound: OutboundMessage = { ...post.message, ...place, replyId: post.id };
    const recorded = await this.#deps.store.getMessage(conversationId, post.id);
    if (recorded !== undefined && recorded.delivery !== 'failed') {
      return this.#settle(post, recorded, channel, outbound);
    }
    let confirmed: Promise<unknown> = Promise.resolve();
    const outbox = async (turn: NewMessage) => {
      // A hook may change the text (and the buttons): what is posted is what it passed on.
      const hooked = { ...outbound, content: turn.content, ...actionsOf(turn) };
      const out = await sendThroughOutbox(this.#deps.write, { channel, turn, outbound: hooked });
      confirmed = out.confirmed;
      return out.sent;
    };
    try {
      const hooks = this.#deps.sendHooks ?? [];
      const sent = await outboundChain(hooks, outbox, { channel })(postTurn(post, place));
      await confirmed;
      await this.#finish(post, 'sent');
      return receipt(post, idsOf(sent), 'sent');
    } catch (error) {
      // Another instance took the post over (this one's claim ran out while its send waited)
      // and recorded it first: that one delivers it and ends it; this one sends nothing.
      if (error instanceof RecordedElsewhere) return this.#overtaken(post);
      // Not recorded: nothing went out, and the post stays pending for the next claim.
      if (error instanceof StoreError) throw error;
      const status = deliveryAfterFailure(error) === 'failed' ? 'failed' : 'unconfirmed';
      await this.#finish(post, status, messageOf(error));
      throw error;
    }
  }

  /** The receipt of a post another instance recorded: as that instance has got on with it. */
  async #overtaken(post: ScheduledPost): Promise<PostReceipt> {
    const recorded = await this.#deps.store.getMessage(post.conversationId, post.id);
    if (recorded?.delivery !== 'sent') return receipt(post, []);
    return receipt(post, idsOf(recorded), 'sent');
  }

  /** A post whose turn a crash left recorded: confirmed as it stands, or settled on its channel. */
  async #settle(
    post: ScheduledPost,
    recorded: StoredMessage,
    channel: Channel,
    outbound: OutboundMessage,
  ): Promise<PostReceipt> {
    const confirmed = idsOf(recorded);
    if (recorded.delivery === 'sent') {
      await this.#finish(post, 'sent');
      return receipt(post, confirmed, 'sent');
    }
    // An ephemeral post cannot be found again: it is left unconfirmed, never sent twice.
    const settle = post.message.visibleTo === undefined ? this.#settlers.get(channel) : undefined;
    let sent: SentMessage | undefined;
    if (settle !== undefined) {
      try {
        sent = await settle({ message: outbound, confirmed, recordedAt: recorded.timestamp });
      } catch (cause) {
        this.#deps.report(
          new ColloquyError(`could not settle post ${post.id}: ${messageOf(cause)}`, {
            cause,
            conversationId: post.conversationId,
          }),
        );
      }
    }
    if (sent === undefined) {
      const { id, conversationId } = post;
      const delivery = 'unconfirmed';
      await this.#deps.write({
        kind: 'confirm',
        confirmation: { id, conversationId, messageIds: confirmed, delivery },
      });
      await this.#finish(post, 'unconfirmed', 'recorded, but the platform never confirmed it');
      return receipt(post, confirmed, 'unconfirmed');
    }
    const messageIds = [...confirmed, ...sent.messageIds];
    const timestamp = confirmed.length === 0 ? sent.timestamp : undefined;
    await this.#deps.write(confirmation(recorded, messageIds, 'sent', { timestamp }));
    await this.#finish(post, 'sent');
    return receipt(post, messageIds, 'sent');
  }

  async #finish(post: ScheduledPost, status: 'sent' | 'failed' | 'unconfirmed', error?: string) {
    await this.#deps.queue?.finishPost(post.id, status, error);
  }
}

/**
 * The turn a post becomes: from its author, at the place the channel read from its
 * conversation id, with `metadata.origin = 'post'` (and `visibleTo` for an ephemeral post).
 *
 * @example
 * ```ts
 * postTurn(post, { conversationId: 'telegram:42', scope: 'dm', channelId: '42' }).metadata.origin; // 'post'
 * ```
 */
export function postTurn(post: NewPost, place: PostPlace): NewMessage {
  const { content, visibleTo, actions, select } = post.message;
  return {
    id: post.id,
    conversationId: place.conversationId,
    participant: post.participant,
    content,
    timestamp: new Date().toISOString(),
    scope: place.scope,
    metadata: {
      origin: 'post',
      channelType: post.channelType,
      channelId: place.channelId,
      ...(place.threadId !== undefined && { threadId: place.threadId }),
      ...(visibleTo !== undefined && { visibleTo }),
      ...(actions !== undefined && actions.length > 0 && { actions }),
      ...(select !== undefined && { select }),
    },
  };
}

/** The author of a post: the agent it is from, else the bot's identity on the channel. */
function authorOf(channel: Channel, from: SendPostOptions['from']): Participant {
  if (from !== undefined) {
    return {
      kind: 'agent',
      id: from.id,
      ...(from.name !== undefined && { displayName: from.name }),
    };
  }
  const identity = channel.botIdentity;
  return {
    kind: 'agent',
    id: identity?.id ?? `${channel.type}:bot`,
    ...(identity?.displayName !== undefined && { displayName: identity.displayName }),
  };
}

/** The platform ids a turn as sent carries, in order. */
function idsOf(turn: NewMessage): string[] {
  const { messageId, partMessageIds = [] } = turn.metadata;
  return messageId === undefined ? [] : [messageId, ...partMessageIds];
}

function receipt(
  post: NewPost,
  messageIds: string[],
  status: PostReceipt['status'] = 'pending',
): PostReceipt {
  const { id, conversationId, dueAt } = post;
  return { id, conversationId, status, messageIds, dueAt };
}
