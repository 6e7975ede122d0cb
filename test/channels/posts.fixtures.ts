import Database from 'better-sqlite3';
import { expect } from 'vitest';
import { Bot, silentLogger } from 'colloquy';
import type { BotOptions, Channel, ColloquyError } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';

/** A bot of `PostBots` with the store it runs on. */
export interface PostBot {
  bot: Bot;
  store: SqliteConversationStore;
}

/** What a fake platform holds of the bot's posts: each one's text and platform id. */
export type Posted = () => readonly { text: string; id: string }[];

/**
 * Bots one after another on one SQLite file, each on a new channel from `channel` (`started`
 * points the fake at it, when the fake must know where to deliver events): a restart is
 * `stop` then `start`. What they report to `bot.catch` is kept in `errors`.
 *
 * @example
 * ```ts
 * const bots = new PostBots(path, () => slackChannelOn(slack), (c) => (slack.eventsUrl = c.eventsUrl));
 * const { bot } = await bots.start();
 * ```
 */
export class PostBots<C extends Channel = Channel> {
  readonly errors: ColloquyError[] = [];
  readonly #running: PostBot[] = [];

  constructor(
    private readonly path: string,
    private readonly channel: () => C,
    private readonly started?: (channel: C) => void,
  ) {}

  async start(options: Partial<BotOptions> = {}): Promise<PostBot> {
    const store = new SqliteConversationStore({ path: this.path });
    const channel = this.channel();
    const bot = new Bot({
      channels: [channel],
      agents: [],
      store,
      logger: silentLogger,
      ...options,
    });
    bot.catch((error) => void this.errors.push(error));
    this.#running.push({ bot, store });
    await bot.start();
    this.started?.(channel);
    return { bot, store };
  }

  async stop(running: PostBot): Promise<void> {
    this.#running.splice(this.#running.indexOf(running), 1);
    await running.bot.stop();
    await running.store.close();
  }

  async stopAll(): Promise<void> {
    for (const running of [...this.#running]) await this.stop(running);
  }
}

/**
 * A post scheduled for a moment later, by a bot stopped before it is due, goes out once
 * when the next bot starts after it came due: recorded sent as a post, with the platform's id.
 */
export async function scheduledPostSurvivesRestart<C extends Channel>(
  bots: PostBots<C>,
  conversationId: string,
  posted: Posted,
): Promise<void> {
  const first = await bots.start();
  const at = new Date(Date.now() + 300);
  const scheduled = await first.bot.send(conversationId, 'Your call starts now', { at });
  expect(scheduled).toMatchObject({ status: 'pending', messageIds: [], dueAt: at.toISOString() });
  await bots.stop(first);
  expect(posted()).toEqual([]);
  while (Date.now() < at.getTime()) await new Promise((resolve) => setTimeout(resolve, 50));

  const second = await bots.start(); // sends what came due while no bot ran before it answers
  await second.bot.idle();

  const [post, ...more] = posted();
  expect({ text: post?.text, more }).toEqual({ text: 'Your call starts now', more: [] });
  expect(await second.store.getPosts()).toMatchObject([{ id: scheduled.id, status: 'sent' }]);
  expect(await second.store.getMessage(conversationId, scheduled.id)).toMatchObject({
    delivery: 'sent',
    metadata: { origin: 'post', messageId: post!.id },
  });
  expect(bots.errors).toEqual([]);
}

/**
 * Leaves the database file at `path` as a crash between a post's platform call and its
 * confirmation leaves it: the platform has the post, the record still says `sending`, without
 * its platform id, and the post is still pending in the queue.
 */
export function leaveAsACrashBeforeConfirming(path: string): void {
  const db = new Database(path);
  try {
    db.prepare(`UPDATE messages SET delivery = 'sending', platform_message_id = NULL`).run();
    db.prepare(`UPDATE scheduled_posts SET status = 'pending'`).run();
  } finally {
    db.close();
  }
}
