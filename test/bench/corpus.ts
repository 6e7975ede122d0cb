import type { NewMessage, Participant } from '../../src/types.js';
import { rng } from './report.js';

/**
 * Generated Telegram conversations for the store benchmark: group chats and DMs, people
 * mentioning the bot now and then and the agent answering, text drawn from a Zipf-distributed
 * vocabulary, and a few rare words planted in every conversation. Deterministic: the same
 * seed gives the same turns.
 */

/** The 120 most frequent words, most frequent first ('the' ranks 1, 'order' 33). */
const HEAD = (
  'the to and a i you it of is that in for on this we be have with not are do can at so if ' +
  'your my me was just will but order from what all there about get they he she one out up ' +
  'please thanks when know would like no yes an by how time think see go our more need now ' +
  'some his her them could here going today still back ok also got did new had then than ' +
  'any been make really well good because sure want their right help check fix build update ' +
  'ticket refund invoice payment shipping account email issue error release deploy tomorrow ' +
  'customer meeting team week'
).split(' ');

/** Words that occur only where planted: a handful of turns per conversation. */
export const RARE_WORDS = [
  'zanzibar',
  'quokka',
  'marzipan',
  'kumquat',
  'xylophone',
  'fjordland',
  'quixotic',
  'zeppelin',
];

const CONSONANTS = 'bcdfghklmnprstvw';
const VOWELS = 'aeiou';

/** The Zipf-ish vocabulary: HEAD, then pseudo-words (CV syllables, no j/q/x/y/z). */
function vocabulary(size: number, random: () => number): string[] {
  const words = new Set(HEAD);
  while (words.size < size) {
    let word = '';
    const syllables = 1 + Math.floor(random() * 4);
    for (let s = 0; s < syllables; s++) {
      word += CONSONANTS[Math.floor(random() * CONSONANTS.length)];
      word += VOWELS[Math.floor(random() * VOWELS.length)];
    }
    if (random() < 0.4) word += CONSONANTS[Math.floor(random() * CONSONANTS.length)];
    words.add(word);
  }
  return [...words];
}

/** Bot and agent identities of the generated conversations. */
export const BOT_USER_ID = 'telegram:123456789';
export const AGENT: Participant = { kind: 'agent', id: 'support-agent', displayName: 'Support' };

interface ConversationState {
  chatId: number;
  dm: boolean;
  firstMember: number;
  name: string;
  rareWord: string;
  /** Turns so far. */
  count: number;
  /** The person the agent answers next, when a turn addressed it. */
  replyTo?: { participantId: string; messageId: string };
}

export interface CorpusOptions {
  conversations?: number;
  vocabularySize?: number;
  /** Zipf exponent (default 1.0). */
  exponent?: number;
  seed?: number;
}

/**
 * An endless, deterministic stream of turns spread uniformly over `conversations`
 * conversations, in timestamp order.
 *
 * @example
 * ```ts
 * const corpus = new Corpus();
 * const turn = corpus.next();
 * corpus.rareWordOf(turn.conversationId); // 'quokka'
 * ```
 */
export class Corpus {
  readonly conversationIds: string[];
  readonly #random: () => number;
  readonly #words: string[];
  readonly #cdf: Float64Array;
  readonly #states: ConversationState[];
  readonly #byId = new Map<string, ConversationState>();
  #turns = 0;

  constructor(options: CorpusOptions = {}) {
    const count = options.conversations ?? 1000;
    this.#random = rng(options.seed ?? 20261121);
    this.#words = vocabulary(options.vocabularySize ?? 20_000, this.#random);
    const exponent = options.exponent ?? 1.0;
    this.#cdf = new Float64Array(this.#words.length);
    let sum = 0;
    for (let rank = 0; rank < this.#words.length; rank++) {
      sum += 1 / (rank + 1) ** exponent;
      this.#cdf[rank] = sum;
    }
    for (let rank = 0; rank < this.#cdf.length; rank++) this.#cdf[rank]! /= sum;
    this.#states = Array.from({ length: count }, (_, c) => {
      const dm = c % 5 === 4; // one conversation in five is a DM
      const state: ConversationState = {
        chatId: dm ? 5000 + c : -1001000000000 - c,
        dm,
        firstMember: 100_000 + c * 10,
        name: dm ? `User ${5000 + c}` : `Team ${c}`,
        rareWord: RARE_WORDS[c % RARE_WORDS.length]!,
        count: 0,
      };
      this.#byId.set(`telegram:${state.chatId}`, state);
      return state;
    });
    this.conversationIds = [...this.#byId.keys()];
  }

  /** The rare word planted in a conversation (a few times, starting with its 6th turn). */
  rareWordOf(conversationId: string): string {
    const state = this.#byId.get(conversationId);
    if (state === undefined) throw new Error(`not a generated conversation: ${conversationId}`);
    return state.rareWord;
  }

  /** The next turn of the stream. */
  next(): NewMessage {
    const i = this.#turns++;
    const state = this.#states[Math.floor(this.#random() * this.#states.length)]!;
    const k = state.count++;
    const messageId = String(k + 1);
    const conversationId = `telegram:${state.chatId}`;
    let content = this.#sentence();
    if (k === 5 || k % 400 === 200) content = `${content} ${state.rareWord}`;

    let participant: Participant;
    const mentions: string[] = [];
    let replyToParticipantId: string | undefined;
    let replyToMessageId: string | undefined;
    if (state.replyTo !== undefined) {
      participant = AGENT;
      replyToParticipantId = state.replyTo.participantId;
      replyToMessageId = state.replyTo.messageId;
      state.replyTo = undefined;
    } else {
      // A DM's chat id is the person's user id; a group has nine regular members.
      const userId = state.dm ? state.chatId : state.firstMember + Math.floor(this.#random() * 9);
      const id = `telegram:${userId}`;
      participant = { kind: 'user', id, displayName: `User ${userId}` };
      if (state.dm || this.#random() < 0.02) {
        if (!state.dm) {
          mentions.push(BOT_USER_ID);
          content = `@colloquy_bench_bot ${content}`;
        }
        state.replyTo = { participantId: id, messageId };
      }
    }
    return {
      id: `${conversationId}:${messageId}`,
      conversationId,
      participant,
      content,
      timestamp: new Date(Date.UTC(2026, 0, 1) + i * 250).toISOString(),
      scope: state.dm ? 'dm' : 'channel',
      metadata: {
        channelType: 'telegram',
        channelId: String(state.chatId),
        channelName: state.name,
        messageId,
        mentions,
        ...(replyToMessageId === undefined ? {} : { replyToMessageId }),
        ...(replyToParticipantId === undefined ? {} : { replyToParticipantId }),
      },
    };
  }

  /** The next `count` turns. */
  take(count: number): NewMessage[] {
    return Array.from({ length: count }, () => this.next());
  }

  #word(): string {
    const u = this.#random();
    let lo = 0;
    let hi = this.#cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.#cdf[mid]! < u) lo = mid + 1;
      else hi = mid;
    }
    return this.#words[lo]!;
  }

  /** 1–60 words, about 10 on average, like chat messages. */
  #sentence(): string {
    const length = Math.min(60, 1 + Math.floor(-Math.log(1 - this.#random()) * 9));
    const words = Array.from({ length }, () => this.#word());
    const first = words[0]!;
    words[0] = first[0]!.toUpperCase() + first.slice(1);
    const end = this.#random();
    return words.join(' ') + (end < 0.5 ? '.' : end < 0.7 ? '?' : end < 0.8 ? '!' : '');
  }
}
