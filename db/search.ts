import { defaultTokenizer } from '../src/tokenizer.js';
import type { StoredMessage } from '../src/types.js';

/** At most this many distinct words of a query are searched for. */
const MAX_WORDS = 32;

/**
 * The plain words of a search query: runs of letters and digits, lowercased, diacritics
 * folded. Everything else (quotes, `*`, `NEAR(`, `-`, `:`) is a separator, never syntax.
 *
 * @example
 * ```ts
 * searchWords('"Café" AND NEAR(x*'); // ['cafe', 'and', 'near', 'x']
 * ```
 */
export function searchWords(query: string): string[] {
  const folded = query
    .normalize('NFD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase();
  const words = folded.match(/[\p{L}\p{N}]+/gu) ?? [];
  return [...new Set(words)].slice(0, MAX_WORDS);
}

/**
 * The FTS5 token that stands for one conversation in `messages_fts.conversation_key`:
 * the same `'c' || hex(conversation_id)` the generated column computes.
 *
 * @example
 * ```ts
 * conversationKey('telegram:42'); // 'c74656C656772616D3A3432'
 * ```
 */
export function conversationKey(conversationId: string): string {
  return `c${Buffer.from(conversationId, 'utf8').toString('hex').toUpperCase()}`;
}

/**
 * The FTS5 MATCH expression: this conversation's token AND any of the words in the text.
 * Every word is a quoted string, so nothing in a query can act as an operator.
 *
 * @example
 * ```ts
 * matchExpression('telegram:42', ['refund', 'order']);
 * // 'conversation_key : "c74…" AND content : ("refund" OR "order")'
 * ```
 */
export function matchExpression(conversationId: string, words: string[]): string {
  const any = words.map((word) => `"${word.replaceAll('"', '""')}"`).join(' OR ');
  return `conversation_key : "${conversationKey(conversationId)}" AND content : (${any})`;
}

/**
 * Keeps results, best first, while their content fits in `tokenCap` tokens; the first is
 * always kept, truncated to the cap when it alone is longer.
 *
 * @example
 * ```ts
 * capByTokens(ranked, 2000);
 * ```
 */
export function capByTokens(ranked: StoredMessage[], tokenCap: number): StoredMessage[] {
  const kept: StoredMessage[] = [];
  let used = 0;
  for (const message of ranked) {
    const cost = defaultTokenizer.count(message.content);
    if (kept.length === 0 && cost > tokenCap) {
      return [{ ...message, content: defaultTokenizer.truncate(message.content, tokenCap) }];
    }
    if (used + cost > tokenCap) break;
    kept.push(message);
    used += cost;
  }
  return kept;
}
