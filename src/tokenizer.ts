import { createRequire } from 'node:module';
import type * as Bpe from 'gpt-tokenizer';

// The o200k table is 2.4 MB of JavaScript: a process loads it when it first counts tokens,
// so a CLI command or a bot process that never builds a prompt starts without it.
let bpe: typeof Bpe | undefined;
const encode: typeof Bpe.encode = (...args) => loadBpe().encode(...args);
const decode: typeof Bpe.decode = (...args) => loadBpe().decode(...args);
function loadBpe(): typeof Bpe {
  return (bpe ??= createRequire(import.meta.url)('gpt-tokenizer') as typeof Bpe);
}

/**
 * Counts and truncates text in model tokens. The default is a real BPE tokenizer
 * (`o200k_base`, the GPT-4o family's); plug in your model's own for exact budgets.
 *
 * @example
 * ```ts
 * import { defaultTokenizer } from 'colloquy';
 * defaultTokenizer.count('hello world'); // 2
 * ```
 */
export interface Tokenizer {
  count(text: string): number;
  /** The longest prefix of `text` that fits in `maxTokens` tokens. */
  truncate(text: string, maxTokens: number): string;
}

// People's text is data: `<|endoftext|>` typed into a chat is counted as plain characters,
// never refused as a special token.
const PLAIN = { disallowedSpecial: new Set<string>() };

// BPE cost grows fast with the length of a run without spaces, so text is encoded in pieces
// cut before a space where there is one, and every HARD_CUT characters where there is none. The o200k pre-tokenizer splits
// before spaces anyway, so cutting there does not change the count.
const PIECE = 512;
const HARD_CUT = 128;

function* pieces(text: string): Generator<string> {
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + PIECE);
    if (end < text.length) {
      const space = lastSpace(text, start + HARD_CUT, end);
      end = space > start ? space : start + HARD_CUT;
      if (isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    }
    yield text.slice(start, end);
    start = end;
  }
}

/** The start of the last whitespace run in (from, to]: a run cut in two would count differently. */
function lastSpace(text: string, from: number, to: number): number {
  for (let i = to; i > from; i--) {
    if (!/\s/.test(text[i] ?? '')) continue;
    while (i - 1 > from && /\s/.test(text[i - 1] ?? '')) i--;
    return i;
  }
  return -1;
}

function isHighSurrogate(code: number): boolean {
  return code >= 0xd800 && code <= 0xdbff;
}

// Prompts are assembled from the same turns again and again: remember recent counts.
const cache = new Map<string, number>();
const CACHE_SIZE = 4096;

function count(text: string): number {
  if (text.length === 0) return 0;
  const known = cache.get(text);
  if (known !== undefined) return known;
  let total = 0;
  for (const piece of pieces(text)) total += encode(piece, PLAIN).length;
  if (text.length > 32) {
    if (cache.size >= CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    cache.set(text, total);
  }
  return total;
}

function truncate(text: string, maxTokens: number): string {
  if (maxTokens <= 0) return '';
  let kept = '';
  let used = 0;
  for (const piece of pieces(text)) {
    const tokens = encode(piece, PLAIN);
    if (used + tokens.length <= maxTokens) {
      kept += piece;
      used += tokens.length;
      continue;
    }
    // Decoding a token prefix can end inside a multi-byte character: drop the broken end,
    // and re-check, since a decoded prefix can re-encode differently.
    for (let take = maxTokens - used; take > 0; take--) {
      const part = decode(tokens.slice(0, take)).replace(/\uFFFD+$/u, '');
      if (count(kept + part) <= maxTokens) return kept + part;
    }
    return kept;
  }
  return text;
}

export const defaultTokenizer: Tokenizer = { count, truncate };

/**
 * Keeps results, best first, while their content fits in `tokenCap` tokens. The first is
 * always kept, truncated to the cap when it alone is longer (and dropped only when nothing
 * of it fits). Every store's `search` caps its results with this.
 *
 * @example
 * ```ts
 * capByTokens(ranked, 2000);
 * ```
 */
export function capByTokens<M extends { content: string }>(
  ranked: readonly M[],
  tokenCap: number,
  tokenizer: Tokenizer = defaultTokenizer,
): M[] {
  const kept: M[] = [];
  let used = 0;
  for (const message of ranked) {
    const cost = tokenizer.count(message.content);
    if (kept.length === 0 && cost > tokenCap) {
      const content = tokenizer.truncate(message.content, tokenCap);
      return content.length > 0 ? [{ ...message, content }] : [];
    }
    if (used + cost > tokenCap) break;
    kept.push(message);
    used += cost;
  }
  return kept;
}
