import type { Channel } from '../channel.js';
import { ColloquyError } from '../errors.js';
import type { PostPlace } from '../posts.js';
import type { NewMessage } from '../types.js';

/**
 * The channel of type `type` that `conversationId` belongs to: the one whose bot identity is
 * `via` (the turn's `metadata.via`: the bot that received it, where several channels know the
 * conversation), else the one whose `placeOf` knows it, else (a channel that cannot tell) the
 * first of that type.
 *
 * @example
 * ```ts
 * channelOf([workspaceOne, workspaceTwo], 'slack', 'slack:T0TWO:C0GENERAL'); // workspaceTwo
 * channelOf([botOne, botTwo], 'slack', 'slack:T0FAKE:C0GENERAL', 'slack:U0BOTTWO'); // botTwo
 * ```
 */
export function channelOf(
  channels: readonly Channel[],
  type: string,
  conversationId: string,
  via?: string,
): Channel | undefined {
  const ofType = channels.filter((c) => c.type === type);
  const knows = (c: Channel) => c.placeOf?.(conversationId) !== undefined;
  const received = ofType.find(
    (c) => via !== undefined && c.botIdentity?.id === via && (c.placeOf === undefined || knows(c)),
  );
  return received ?? ofType.find(knows) ?? ofType[0];
}

/**
 * `turn` as `channel` hands it over: with `channel`'s bot identity as `metadata.via` when the
 * bot has another channel of its type, so that answered later it goes through the same bot.
 *
 * @example
 * ```ts
 * receivedVia([botOne, botTwo], botTwo, turn).metadata.via; // 'slack:U0BOTTWO'
 * ```
 */
export function receivedVia(
  channels: readonly Channel[],
  channel: Channel,
  turn: NewMessage,
): NewMessage {
  const via = channel.botIdentity?.id;
  const others = channels.filter((c) => c !== channel && c.type === channel.type);
  if (via === undefined || others.length === 0 || turn.metadata.via === via) return turn;
  return { ...turn, metadata: { ...turn.metadata, via } };
}

/**
 * The one channel `on` names: itself (a `Channel` of the bot), the channel whose bot identity
 * id it is (`slack:U0BOTTWO`), or the only channel of that type (`slack`). A type that several
 * channels share is refused, naming their identities, as is a channel the bot does not have.
 *
 * @example
 * ```ts
 * channelNamed([workspaceOne, workspaceTwo], 'slack:U0BOTTWO', 'openDm'); // workspaceTwo
 * channelNamed([workspaceOne, workspaceTwo], 'slack', 'openDm'); // throws: 2 slack channels (…)
 * ```
 */
export function channelNamed(
  channels: readonly Channel[],
  on: string | Channel,
  by: 'openDm' | 'via',
): Channel {
  if (typeof on !== 'string') {
    if (channels.includes(on)) return on;
    throw new ColloquyError(`the ${on.type} channel given to ${by} is not one of the bot's`);
  }
  const byIdentity = channels.find((c) => c.botIdentity?.id === on);
  if (byIdentity !== undefined) return byIdentity;
  const [channel, ...others] = channels.filter((c) => c.type === on);
  if (channel === undefined) throw new ColloquyError(`the bot has no ${on} channel`);
  if (others.length === 0) return channel;
  throw new ColloquyError(
    `${others.length + 1} ${on} channels (${identities([channel, ...others])}): name one by its bot identity id, or pass the Channel`,
  );
}

/**
 * The channel a post into `conversationId` goes through, with the place it reads there, from
 * what the post keeps: the channel of type `type` whose `placeOf` knows the id, or, when
 * several do (two Slack bots in one workspace), the one whose bot identity is the post's
 * `author` (a post's participant id). Throws a one-line `ColloquyError` when none does, or
 * when the author picks none of several.
 *
 * @example
 * ```ts
 * postRoute([botOne, botTwo], 'slack', 'slack:T0FAKE:D0ALICE', 'slack:U0BOTTWO').channel; // botTwo
 * ```
 */
export function postRoute(
  channels: readonly Channel[],
  type: string,
  conversationId: string,
  author: string,
): { channel: Channel; place: PostPlace } {
  const knowing = channels.flatMap((channel) => {
    const place = channel.type === type ? channel.placeOf?.(conversationId) : undefined;
    return place === undefined ? [] : [{ channel, place }];
  });
  const byAuthor = knowing.filter((k) => k.channel.botIdentity?.id === author);
  const [route, ...others] = knowing.length > 1 ? byAuthor : knowing;
  if (route !== undefined && others.length === 0) return route;
  if (knowing.length === 0) {
    throw new ColloquyError(`no ${type} channel knows conversation ${conversationId}`, {
      conversationId,
    });
  }
  const ids = identities(knowing.map((k) => k.channel));
  throw new ColloquyError(
    `${knowing.length} ${type} channels know conversation ${conversationId} (${ids}): name one with { via }`,
    { conversationId },
  );
}

/** The channels' bot identity ids, for a message naming them. */
function identities(channels: readonly Channel[]): string {
  return channels.map((c) => c.botIdentity?.id ?? 'not started').join(', ');
}
