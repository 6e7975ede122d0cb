/**
 * Splits text into the plain words colloquy searches by: runs of letters and digits,
 * lowercased, with diacritics folded (NFD, combining marks removed) — the same words
 * SQLite's FTS5 `unicode61 remove_diacritics 2` tokenizer produces. Everything else
 * (quotes, `*`, `:`, `^`, parentheses, `%`, `_`, emoji) is a separator, never syntax.
 *
 * @example
 * ```ts
 * import { searchWords } from 'colloquy';
 * searchWords('Café "NEAR(a b)" foo*'); // ['cafe', 'near', 'a', 'b', 'foo']
 * ```
 */
export function searchWords(text: string): string[] {
  const folded = text
    .toLowerCase()
    .normalize('NFD')
    .replace(/\p{M}+/gu, '');
  return folded.match(/[\p{L}\p{N}]+/gu) ?? [];
}
