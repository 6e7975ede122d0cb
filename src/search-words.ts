// eslint-disable-next-line no-control-regex -- "is every character ASCII?"
const ASCII = /^[\x00-\x7f]*$/;

/**
 * Splits text into the words colloquy searches by: the text composed (NFC) and lowercased,
 * then runs of letters, digits and combining marks, so a word keeps its vowel signs and
 * Hangul its syllables. Everything else (quotes, `*`, `:`, `^`, parentheses, `%`, `_`,
 * emoji) is a separator, never syntax. Compare words by their {@link wordKey}.
 *
 * @example
 * ```ts
 * import { searchWords } from './search-words.js';
 * searchWords('Café "NEAR(a b)" foo*'); // ['café', 'near', 'a', 'b', 'foo']
 * searchWords('한국어, हिंदी'); // ['한국어', 'हिंदी']
 * ```
 */
export function searchWords(text: string): string[] {
  if (ASCII.test(text)) return text.toLowerCase().match(/[a-z0-9]+/g) ?? [];
  return (
    text
      .normalize('NFC')
      .toLowerCase()
      .match(/[\p{L}\p{N}\p{M}]+/gu) ?? []
  );
}

/**
 * What a word from {@link searchWords} is compared by, the way SQLite's FTS5
 * `unicode61 remove_diacritics 2` tokenizer sees it: Latin letters lose their diacritics
 * (`café` → `cafe`), other combining marks (Devanagari and Arabic vowel signs) separate the
 * word's pieces, so `हिंदी` is the pieces `ह द` and never matches the word `हद`. Empty for
 * a word of marks alone.
 *
 * @example
 * ```ts
 * import { wordKey } from './search-words.js';
 * wordKey('café'); // 'cafe'
 * wordKey('हिंदी'); // 'ह द'
 * ```
 */
export function wordKey(word: string): string {
  if (ASCII.test(word)) return word;
  const pieces = word.match(/[\p{L}\p{N}]+/gu) ?? [];
  return pieces.map((piece) => piece.replace(/\p{Script=Latin}/gu, unaccent)).join(' ');
}

/**
 * The keys of a text's words ({@link searchWords}, then {@link wordKey}): what both stores
 * index a turn by and look a query up by.
 *
 * @example
 * ```ts
 * import { searchKeys } from './search-words.js';
 * searchKeys('Café, हिंदी!'); // ['cafe', 'ह द']
 * ```
 */
export function searchKeys(text: string): string[] {
  return searchWords(text)
    .map(wordKey)
    .filter((key) => key !== '');
}

/**
 * BM25 scores (k1 = 1.2, b = 0.75) of `docs` (each given as its keys, {@link searchKeys}) for a
 * query's `keys`, over a conversation of `total` turns where `found` says in how many turns
 * each key was found (a key it does not name is taken as found everywhere: it weighs little).
 * Every store ranks its search results with it.
 *
 * @example
 * ```ts
 * import { bm25 } from './search-words.js';
 * bm25([['refund', 'please'], ['hello']], ['refund'], 2, new Map([['refund', 1]])); // [0.9…, 0]
 * ```
 */
export function bm25(
  docs: readonly (readonly string[])[],
  keys: readonly string[],
  total: number,
  found: ReadonlyMap<string, number>,
): number[] {
  const sum = docs.reduce((words, doc) => words + doc.length, 0);
  const average = Math.max(1, sum / Math.max(1, docs.length));
  const n = Math.max(total, docs.length);
  return docs.map((doc) => {
    let score = 0;
    for (const key of keys) {
      let tf = 0;
      for (const word of doc) if (word === key) tf++;
      if (tf === 0) continue;
      const df = Math.min(n, found.get(key) ?? n);
      const idf = Math.log(1 + (n - df + 0.5) / (df + 0.5));
      score += (idf * tf * 2.2) / (tf + 1.2 * (0.25 + (0.75 * doc.length) / average));
    }
    return score;
  });
}

function unaccent(letter: string): string {
  return letter.normalize('NFD').replace(/\p{M}+/gu, '');
}
