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
  const [channelType, channelId, channelName, threadId, scope, count, first, last] = values;
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
  };
}

/** The conversations newest activity first from the shared list, below the cursor. */
export async function listAll(
  client: RedisCommander,
  keys: RedisKeys,
  want: number,
  after: CursorKey | undefined,
  wanted: (c: ConversationSummary) => boolean,
): Promise<ConversationSummary[]> {
  const list = keys.conversations;
  let upper = after === undefined ? '+' : `(${after.lastMessageAt}\0${after.id}`;
  const items: ConversationSummary[] = [];
  const batch = Math.min(Math.max(want, 16), 500);
  while (items.length < want) {
    const members = (await command(
      client,
      'ZRANGE',
      list,
      upper,
      '-',
      'BYLEX',
      'REV',
      'LIMIT',
      '0',
      `${batch}`,
    )) as string[];
    const ids = members.map((member) => member.slice(member.indexOf('\0') + 1));
    const infos = await Promise.all(ids.map((id) => readInfo(client, keys, id)));
    for (const [i, info] of infos.entries()) {
      if (info === undefined)
        await command(client, 'ZREM', list, members[i]!); // expired
      else if (wanted(info) && items.length < want) items.push(info);
    }
    if (members.length < batch) break;
    upper = `(${members[members.length - 1]}`;
  }
  return items;
}

/** The conversations a participant wrote in, newest activity first, below the cursor. */
export async function listOf(
  client: RedisCommander,
  keys: RedisKeys,
  participantId: string,
  want: number,
  after: CursorKey | undefined,
  wanted: (c: ConversationSummary) => boolean,
): Promise<ConversationSummary[]> {
  const set = keys.participant(participantId);
  const ids = (await command(client, 'SMEMBERS', set)) as string[];
  const infos = await Promise.all(ids.map((id) => readInfo(client, keys, id)));
  const items: ConversationSummary[] = [];
  for (const [i, info] of infos.entries()) {
    if (info === undefined)
      await command(client, 'SREM', set, ids[i]!); // expired
    else if (wanted(info) && (after === undefined || newestActivityFirst(info, after) > 0)) {
      items.push(info);
    }
  }
  return items.sort(newestActivityFirst).slice(0, want);
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
