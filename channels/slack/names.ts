/**
 * The people and channels a Slack channel has looked up: `users.info` (a display name, and
 * whether the user is a bot) and `conversations.info` (a channel's name), each cached.
 *
 * @example
 * ```ts
 * const names = new SlackNames(() => app.client);
 * (await names.user('U0ALICE'))?.name; // 'alice'
 * ```
 */
import type { App } from '@slack/bolt';

/** A user as `users.info` answered: their display name, and whether Slack says it is a bot. */
export interface SlackUser {
  name?: string;
  isBot: boolean;
}

/** How many users and channels are kept looked up, each. */
const KEPT = 5000;

export class SlackNames {
  readonly #client: () => App['client'];
  readonly #users = new Map<string, Promise<SlackUser | Error>>();
  readonly #channels = new Map<string, Promise<string | undefined>>();

  constructor(client: () => App['client']) {
    this.#client = client;
  }

  /** Keeps `user` as what `users.info` would answer for `userId` (the bot itself, from auth.test). */
  know(userId: string, user: SlackUser): void {
    this.#users.set(userId, Promise.resolve(user));
  }

  /**
   * `users.info` for `userId`, cached; the error when it failed (not kept: looked up again next
   * time).
   */
  user(userId: string): Promise<SlackUser | Error> {
    const cached = this.#users.get(userId);
    if (cached !== undefined) return cached;
    const lookup = this.#client()
      .users.info({ user: userId })
      .then(
        ({ user }): SlackUser => {
          const name =
            user?.profile?.display_name ||
            user?.profile?.real_name ||
            user?.real_name ||
            user?.name;
          return { ...(name && { name }), isBot: user?.is_bot === true };
        },
        (error: unknown) => {
          this.#users.delete(userId);
          return error instanceof Error ? error : new Error(String(error));
        },
      );
    this.#users.set(userId, lookup);
    trim(this.#users);
    return lookup;
  }

  /** The display names of `userIds` that could be looked up; a failure falls back to the id. */
  async names(userIds: string[]): Promise<Map<string, string>> {
    const names = new Map<string, string>();
    await Promise.all(
      userIds.map(async (id) => {
        const user = await this.user(id);
        if (!(user instanceof Error) && user.name !== undefined) names.set(id, user.name);
      }),
    );
    return names;
  }

  /** `conversations.info`'s name, cached including failures (needs `channels:read`; optional). */
  channel(channelId: string): Promise<string | undefined> {
    const cached = this.#channels.get(channelId);
    if (cached !== undefined) return cached;
    const lookup = this.#client()
      .conversations.info({ channel: channelId })
      .then(
        ({ channel }) => channel?.name,
        () => undefined,
      );
    this.#channels.set(channelId, lookup);
    trim(this.#channels);
    return lookup;
  }
}

function trim(map: Map<unknown, unknown>): void {
  while (map.size > KEPT) map.delete(map.keys().next().value);
}
