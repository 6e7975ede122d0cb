import { StoreError } from '../../src/errors.js';
import type { ConversationSummary } from '../../src/store.js';
import type { RedisKeys } from './keys.js';
import type { RedisCommander } from './scripts.js';

/** The `info` fields of a conversation, in the order `readInfo` reads them. */
const INFO = [
  'channelType',
  'channelId',
  'channelName',
  'threadId',
  'scope',
  'count',
  'first',
  'last',
  'title',
  'metadata',
];

/** One conversation's summary from its `info` hash; undefined when there is none. */
export async function readInfo(
  client: RedisCommander,
  keys: RedisKeys,
  conversationId: string,
): Promise<ConversationSummary | undefined> {
  const values = (await command(
    client,
    'HMGET',
    `${keys.conversation(conversationId)}info`,
    ...INFO,
  )) as (string | null)[];
  const [
    channelType,
    channelId,
    channelName,
    threadId,
    scope,
    count,
    first,
    last,
    title,
    metadata,
  ] = values;
  if (channelType == null || channelId == null || scope == null || first == null || last == null) {
    return undefined;
  }
  return {
    id: conversationId,
    channelType,
    channelId,
    ...(channelName == null ? {} : { channelName }),
    ...(threadId == null ? {} : { threadId }),
    scope: scope as ConversationSummary['scope'],
    messageCount: Number(count ?? 0),
    firstMessageAt: first,
    lastMessageAt: last,
    ...(title == null ? {} : { title }),
    ...(metadata == null ? {} : { metadata: JSON.parse(metadata) as Record<string, unknown> }),
  };
}

/** How many of the matching conversations a listing skips, then how many it takes. */
export interface Window {
  skip: number;
  take: number;
}

/** The conversations newest activity first from the shared list, below the cursor. */
export async function listAll(
  client: RedisCommander,
  keys: RedisKeys,
  want: Window,
  after: CursorKey | undefined,
  wanted: (c: ConversationSummary) => boolean,
): Promise<ConversationSummary[]> {
  const list = keys.conversations;
  let upper = after === undefined ? '+' : `(${after.lastMessageAt}\0${after.id}`;
  const items: ConversationSummary[] = [];
  let skip = want.skip;
  const batch = Math.min(Math.max(want.take, 16), 500);
  while (items.length < want.take) {
    const range = [upper, '-', 'BYLEX', 'REV', 'LIMIT', '0', `${batch}`];
    const members = (await command(client, 'ZRANGE', list, ...range)) as string[];
    const ids = members.map((member) => member.slice(member.indexOf('\0') + 1));
    const infos = await Promise.all(ids.map((id) => readInfo(client, keys, id)));
    for (const [i, info] of infos.entries()) {
      // A conversation that expired leaves its entry behind: it goes now.
      if (info === undefined) await command(client, 'ZREM', list, members[i]!);
      else if (!wanted(info) || items.length === want.take) continue;
      else if (skip > 0) skip--;
      else items.push(info);
    }
    if (members.length < batch) break;
    upper = `(${members[members.length - 1]}`;
  }
  return items;
}

/**
 * The conversations in every one of `sets` (who wrote there), newest activity first, below
 * the cursor.
 */
export async function listOf(
  client: RedisCommander,
  keys: RedisKeys,
  sets: string[],
  want: Window,
  after: CursorKey | undefined,
  wanted: (c: ConversationSummary) => boolean,
): Promise<ConversationSummary[]> {
  const members = (await Promise.all(
    sets.map((set) => command(client, 'SMEMBERS', set)),
  )) as string[][];
  const ids = members.reduce((both, next) => {
    const inNext = new Set(next);
    return both.filter((id) => inNext.has(id));
  });
  const infos = await Promise.all(ids.map((id) => readInfo(client, keys, id)));
  const items: ConversationSummary[] = [];
  for (const [i, info] of infos.entries()) {
    if (info === undefined) {
      for (const set of sets) await command(client, 'SREM', set, ids[i]!); // expired
    } else if (wanted(info) && (after === undefined || newestActivityFirst(info, after) > 0)) {
      items.push(info);
    }
  }
  return items.sort(newestActivityFirst).slice(want.skip, want.skip + want.take);
}

function command(client: RedisCommander, ...args: string[]): Promise<unknown> {
  return client.sendCommand(args);
}

export type CursorKey = Pick<ConversationSummary, 'id' | 'lastMessageAt'>;

export function newestActivityFirst(a: CursorKey, b: CursorKey): number {
  if (a.lastMessageAt !== b.lastMessageAt) return a.lastMessageAt > b.lastMessageAt ? -1 : 1;
  return a.id > b.id ? -1 : a.id < b.id ? 1 : 0;
}

export function encodeCursor(key: CursorKey): string {
  return Buffer.from(JSON.stringify([key.lastMessageAt, key.id]), 'utf8').toString('base64url');
}

export function decodeCursor(cursor: string): CursorKey {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && value.every((v) => typeof v === 'string')) {
      return { lastMessageAt: value[0] as string, id: value[1] as string };
    }
  } catch {
    // fall through to the error below
  }
  throw new StoreError(`not a listConversations cursor: ${JSON.stringify(cursor)}`, {
    transient: false,
  });
}
