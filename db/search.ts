import { bm25, searchKeys, searchWords, wordKey } from '../src/search-words.js';
import type { SearchOptions } from '../src/store.js';
import type * as TokenizerModule from '../src/tokenizer.js';

let tokenizer: typeof TokenizerModule | undefined;

/**
 * A search's results, lowest-ranked cut first, within `tokenCap` tokens (default 2000). The
 * tokenizer is loaded at the first search and kept: a process that never searches (the SQLite
 * commit thread) never holds its tables.
 *
 * @example
 * ```ts
 * return capResults(ranked, options.tokenCap);
 * ```
 */
export async function capResults<M extends { content: string }>(
  results: readonly M[],
  tokenCap = 2000,
): Promise<M[]> {
  tokenizer ??= await import('../src/tokenizer.js');
  return tokenizer.capByTokens(results, tokenCap);
}

/** At most this many distinct words of a query are searched for. */
const MAX_WORDS = 16;

/**
 * How many turns a search considers per word, newest first: 50 for a one-word query, fewer
 * per word for longer queries (never under 20). A word found in more turns than that is
 * "common": its newest matches are candidates, older turns are found only through the
 * query's other words. This bounds a search in a long conversation: reading a word's
 * matches and ranking them costs time per match.
 *
 * @example
 * ```ts
 * candidatesPerWord(1); // 50
 * candidatesPerWord(5); // 20
 * ```
 */
export function candidatesPerWord(words: number): number {
  return Math.max(20, Math.floor(100 / Math.max(2, words)));
}

/**
 * A word a search looks for: as typed (composed, lowercased, marks kept), which FTS5's own
 * tokenizer folds, and its key ({@link wordKey}), which ranking counts it by.
 */
export interface QueryWord {
  word: string;
  key: string;
}

/**
 * The distinct words a search looks for (at most 16), from `searchWords` in `src/`, the
 * same splitter the in-memory store uses.
 *
 * @example
 * ```ts
 * queryWords('Refund the REFUND café');
 * // [{ word: 'refund', key: 'refund' }, { word: 'the', … }, { word: 'café', key: 'cafe' }]
 * ```
 */
export function queryWords(query: string): QueryWord[] {
  const byKey = new Map<string, string>();
  for (const word of searchWords(query)) {
    const key = wordKey(word);
    if (key !== '' && !byKey.has(key)) byKey.set(key, word);
  }
  return [...byKey].slice(0, MAX_WORDS).map(([key, word]) => ({ word, key }));
}

/**
 * What a search asks for: the query's words and how many turns to return (`limit`, default
 * 10); `undefined` when it can find nothing (no words, or a limit of 0).
 *
 * @example
 * ```ts
 * const request = searchRequest('invoice march', { limit: 5 }); // two words, 5 turns at most
 * ```
 */
export function searchRequest(
  query: string,
  options: SearchOptions,
): { words: QueryWord[]; limit: number } | undefined {
  const words = queryWords(query);
  const limit = Math.max(0, Math.floor(options.limit ?? 10));
  return words.length === 0 || limit === 0 ? undefined : { words, limit };
}

/**
 * The FTS5 MATCH expression for one word: a quoted string, so nothing in a query acts as an
 * operator, and FTS5 tokenizes it as it tokenized the text (folding Latin diacritics; other
 * combining marks split it into a phrase). Text is indexed as stored, so a word whose
 * decomposed (NFD) spelling differs, like Hangul, also looks for that spelling. (The
 * conversation is a rowid range, bound next to it.)
 *
 * @example
 * ```ts
 * matchExpression('refund'); // '"refund"'
 * matchExpression('한국어'); // '"한국어" OR "한국어"': composed, then decomposed (jamo)
 * ```
 */
export function matchExpression(word: string): string {
  const spellings = new Set([word, word.normalize('NFD')]);
  return [...spellings].map((spelling) => `"${spelling.replaceAll('"', '""')}"`).join(' OR ');
}

/** A turn that matched at least one word: its sequence and text. */
export interface Candidate {
  seq: number;
  content: string;
}

/**
 * Orders candidates by BM25 (k1 = 1.2, b = 0.75) computed over the conversation, counting
 * words by their keys: `total` is its number of turns, `found` how many turns each key was
 * found in (a common word's count is unknown past `candidatesPerWord`; it is then taken as
 * `total`, so it weighs little). Ties go to the newer turn.
 *
 * @example
 * ```ts
 * rankCandidates(candidates, ['refund'], 1000, new Map([['refund', 3]])); // [seq, …]
 * ```
 */
export function rankCandidates(
  candidates: Candidate[],
  keys: string[],
  total: number,
  found: Map<string, number>,
): number[] {
  const scored = bm25(
    candidates.map((c) => searchKeys(c.content)),
    keys,
    total,
    found,
  );
  const scores = new Map(candidates.map((c, i) => [c.seq, scored[i]!]));
  return candidates
    .map((c) => c.seq)
    .sort((a, b) => (scores.get(b) ?? 0) - (scores.get(a) ?? 0) || b - a);
}

/**
 * The stretches of `text` a search for `query` found: each word of the text whose key
 * ({@link wordKey}) is one of the query's, so case and Latin accents are folded as the search
 * index folds them. For marking hits (the studio's `<mark>`, the CLI's bold).
 *
 * @example
 * ```ts
 * matchedSpans('Café or CAFE?', 'cafe'); // [{ start: 0, end: 4 }, { start: 8, end: 12 }]
 * ```
 */
export function matchedSpans(text: string, query: string): { start: number; end: number }[] {
  const keys = new Set(searchWords(query).map(wordKey));
  const spans: { start: number; end: number }[] = [];
  for (const match of text.matchAll(/[\p{L}\p{N}\p{M}]+/gu)) {
    const word = match[0];
    if (keys.has(wordKey(word.normalize('NFC').toLowerCase()))) {
      spans.push({ start: match.index, end: match.index + word.length });
    }
  }
  return spans;
}
