import { decode, encode } from 'gpt-tokenizer';

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

export const defaultTokenizer: Tokenizer = {
  count: (text) => (text.length === 0 ? 0 : encode(text).length),
  truncate(text, maxTokens) {
    if (maxTokens <= 0) return '';
    const tokens = encode(text);
    if (tokens.length <= maxTokens) return text;
    // A token boundary can fall inside a multi-byte character; drop a trailing broken one.
    return decode(tokens.slice(0, maxTokens)).replace(/\uFFFD+$/u, '');
  },
};
