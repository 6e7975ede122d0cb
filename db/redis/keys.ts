import type { NewMessage, PlatformMessageRef } from '../../src/types.js';
import { searchKeys } from '../../src/search-words.js';

/**
 * How the Redis store lays out its keys, and the members of its sorted sets. Every sorted
 * set holds its members at score 0 and is read by lexical range (`ZRANGE … BYLEX`), so a
 * member sorts by its text: `<timestamp>:<seq padded to 16 digits>` orders turns by time,
 * then by insertion, exactly as the other stores do.
 *
 * Per conversation (`<prefix>c:<conversation id>:<part>`):
 * - `info` hash: the conversation's place, span, count, title and metadata (JSON);
 * - `msgs` hash: seq → the turn as JSON; `refs` hash: seq → where it is indexed ({@link Refs});
 * - `order` zset: `<stamp>` per turn;
 * - `ix` zset: `by\0<participant>\0<stamp>`, `re\0<replied-to participant>\0<stamp>`,
 *   `at\0<mentioned>\0<stamp>`, `dm\0<stamp>`, `sum\0<agent>\0<stamp>`: the addressed-only
 *   filter and summaries, read newest first;
 * - `words` zset: `<word key>\0<seq padded>` per distinct word, the search index;
 * - `ids` hash: colloquy id → seq; `pm` hash: platform message → seq (duplicates);
 * - `used` hash: the colloquy id of a message whose `once` buttons a press used → that press's id;
 * - `authors` set: who wrote in it; `named` set: who its turns mention or reply to.
 *
 * Shared: `<prefix>seq` (the sequence), `<prefix>conversations` (zset `<last>\0<id>`, newest
 * activity last), `<prefix>channel:<type>\0<channel id>` (set of conversation ids, for edits
 * and deletions that name a platform message), `<prefix>participant:<id>` (set of the
 * conversations a participant wrote in), `<prefix>agent:<id>` (the same, for agents),
 * `<prefix>named:<id>` (the conversations whose turns mention or reply to a participant),
 * `<prefix>reacted:<id>` (the conversations where a participant put a reaction on a turn) and
 * `<prefix>parts` (zset `<seq padded>\0<conversation id>` per reply split into parts, among the
 * newest `PARTS_WITHIN` seqs only: where a later part is looked for when no conversation is named;
 * with a TTL it lives as long as the conversation renewed last).
 *
 * @example
 * ```ts
 * const keys = new RedisKeys('colloquy:');
 * keys.conversation('telegram:42'); // 'colloquy:c:telegram:42:'
 * ```
 */
export class RedisKeys {
  constructor(readonly prefix: string) {}

  /** The base every key of one conversation starts with (`info`, `msgs`, … follow). */
  conversation(conversationId: string): string {
    return `${this.prefix}c:${conversationId}:`;
  }

  channel(channelType: string, channelId: string): string {
    return `${this.prefix}channel:${channelType}\0${channelId}`;
  }

  participant(participantId: string): string {
    return `${this.prefix}participant:${participantId}`;
  }

  /** The conversations where someone mentioned or replied to a participant. */
  named(participantId: string): string {
    return `${this.prefix}named:${participantId}`;
  }

  /** The conversations where a participant put a reaction on a turn. */
  reacted(participantId: string): string {
    return `${this.prefix}reacted:${participantId}`;
  }

  /** The conversations an agent (a participant of kind `agent`) wrote in. */
  agent(agentId: string): string {
    return `${this.prefix}agent:${agentId}`;
  }

  get conversations(): string {
    return `${this.prefix}conversations`;
  }

  /** The replies split into parts among the newest turns (see {@link partsMember}). */
  get parts(): string {
    return `${this.prefix}parts`;
  }
}

/** The parts of a conversation's keys, after its base (see {@link RedisKeys}). */
export const PARTS = [
  'info',
  'msgs',
  'refs',
  'order',
  'ix',
  'words',
  'ids',
  'pm',
  'authors',
  'named',
  'rx',
  'used',
];

/** Digits a seq is padded to inside members, so that text order is number order. */
export const SEQ_DIGITS = 16;

/** Words longer than this are not indexed (nobody searches for a 300-letter word). */
const MAX_WORD = 256;

/**
 * Where one turn is indexed, stored beside it so a script can unindex it: its timestamp,
 * ids, the `ix` entries as their parts (joined with NUL by the script) and its word keys.
 */
export interface Refs {
  ts: string;
  id: string;
  pm: string;
  ix: string[][];
  w: string[];
  /** A rolling summary: not counted as its author's turn by `forgetParticipant`. */
  s?: true;
  /** A reply split into parts: listed in `<prefix>parts`. */
  p?: true;
}

/**
 * The refs of a stored turn: deleted turns and summaries get no words (they are never found).
 *
 * @example
 * ```ts
 * refsOf(turn).ix; // [['by', 'telegram:1001'], ['dm']]
 * ```
 */
export function refsOf(message: NewMessage & { deletedAt?: string }): Refs {
  const { metadata } = message;
  const ix: string[][] = [['by', message.participant.id]];
  if (metadata.replyToParticipantId !== undefined) ix.push(['re', metadata.replyToParticipantId]);
  for (const mention of new Set(metadata.mentions ?? [])) ix.push(['at', mention]);
  if (message.scope === 'dm') ix.push(['dm']);
  const summary = metadata.isSummary === true;
  const split = metadata.messageId !== undefined && (metadata.partMessageIds?.length ?? 0) > 0;
  if (summary) ix.push(['sum', metadata.summaryForAgentId ?? '']);
  const searchable = !summary && message.deletedAt === undefined;
  const words = searchable ? [...new Set(searchKeys(message.content))] : [];
  return {
    ts: message.timestamp,
    id: message.id,
    pm: platformField(message),
    ix,
    w: words.filter((word) => word.length <= MAX_WORD),
    ...(summary ? { s: true as const } : {}),
    ...(split ? { p: true as const } : {}),
  };
}

/** The `pm` field of a turn's platform message; empty when it has no platform id. */
export function platformField(message: Pick<NewMessage, 'metadata'>): string {
  const { channelType, channelId, messageId } = message.metadata;
  return messageId === undefined ? '' : platformRefField({ channelType, channelId, messageId });
}

export function platformRefField(ref: PlatformMessageRef): string {
  return JSON.stringify([ref.channelType, ref.channelId, ref.messageId]);
}

/** The prefix of one `ix` entry's members (`by\0<id>\0`), as the scripts build it. */
export function ixPrefix(...parts: string[]): string {
  return `${parts.join('\0')}\0`;
}

/** A seq padded to `SEQ_DIGITS`, so that text order is number order. */
export function padSeq(seq: number): string {
  return String(seq).padStart(SEQ_DIGITS, '0');
}

/**
 * Where a member of `<prefix>parts` (`<seq padded>\0<conversation id>`) points.
 *
 * @example
 * ```ts
 * partsMember(`${padSeq(42)}\0telegram:7`); // { seq: '42', conversationId: 'telegram:7' }
 * ```
 */
export function partsMember(member: string): { seq: string; conversationId: string } {
  return {
    seq: String(Number(member.slice(0, SEQ_DIGITS))),
    conversationId: member.slice(SEQ_DIGITS + 1),
  };
}

/** The seq at the end of a member (`…:<16 digits>` or `…\0<16 digits>`). */
export function seqOf(member: string): string {
  return String(Number(member.slice(-SEQ_DIGITS)));
}

/** The timestamp of a stamp (`<timestamp>:<seq>`). */
export function timeOf(stamp: string): string {
  return stamp.slice(0, -SEQ_DIGITS - 1);
}
