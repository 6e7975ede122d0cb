import { matchedSpans } from '../search.js';
import { visible } from './visible.js';

/** One turn a search found, as `colloquy search` prints it. */
export interface Hit {
  conversationId: string;
  speakerName: string;
  timestamp: string;
  content: string;
}

/** Bold and underlined, then back to normal: what marks a found word on a terminal. */
const MARK_ON = '\u001b[1;4m';
const MARK_OFF = '\u001b[22;24m';

/**
 * `time  conversation  speaker: text` on one line, with the searched words wrapped in bold
 * and underline when `color` is set. The chat text is made safe first: line breaks show as
 * ` ↵ ` and every control character is escaped (see `visible`), so the only escape sequences
 * printed are the marks this function adds.
 *
 * @example
 * ```ts
 * formatHit(hit, 'order', { color: false });
 * // '2026-11-17T09:01:00.000Z  telegram:42  Alice: where is my order 1235?'
 * ```
 */
export function formatHit(hit: Hit, query: string, options: { color: boolean }): string {
  const safe = (text: string) => visible(text.replace(/\r?\n/g, ' ↵ ').replace(/\t/g, ' '));
  let text = '';
  let last = 0;
  if (options.color) {
    for (const { start, end } of matchedSpans(hit.content, query)) {
      text += `${safe(hit.content.slice(last, start))}${MARK_ON}${hit.content.slice(start, end)}${MARK_OFF}`;
      last = end;
    }
  }
  text += safe(hit.content.slice(last));
  return `${safe(`${hit.timestamp}  ${hit.conversationId}  ${hit.speakerName}`)}: ${text}`;
}
