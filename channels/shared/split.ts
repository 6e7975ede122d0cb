/**
 * Splits a reply into parts that each fit a platform's length limit (Discord 2000, Telegram
 * 4096, Slack 4000), measured in UTF-16 code units as JavaScript strings are.
 *
 * Cuts prefer a paragraph break, then a line break, then a space; a hard cut never falls
 * inside a grapheme (surrogate pairs, emoji with modifiers, combining marks). A ``` code
 * block cut in two is closed at the end of one part and reopened, with its language, at the
 * start of the next, so each part renders on its own.
 *
 * @example
 * ```ts
 * import { splitMessage } from 'colloquy';
 * splitMessage('a'.repeat(5000), 2000).map((part) => part.length); // [2000, 2000, 1000]
 * ```
 */
export function splitMessage(text: string, limit: number): string[] {
  if (!Number.isInteger(limit) || limit < 16) {
    throw new RangeError(`splitMessage: limit must be an integer of at least 16, got ${limit}`);
  }
  const parts: string[] = [];
  let rest = text;
  let reopen = ''; // the fence line to reopen a code block cut at the previous part
  while (reopen.length + rest.length > limit) {
    const room = limit - reopen.length;
    // Leave room to close a code block that is open at the cut.
    let cut = findCut(rest, room - CLOSE.length);
    let part = reopen + rest.slice(0, cut);
    const fence = openFence(part);
    if (fence === undefined) {
      // No block open at the cut: the reserved room can be used after all.
      cut = findCut(rest, room);
      part = reopen + rest.slice(0, cut);
    }
    const open = openFence(part);
    parts.push(open === undefined ? part.trimEnd() : part.trimEnd() + CLOSE);
    reopen = open === undefined ? '' : open + '\n';
    rest = rest.slice(cut).replace(/^\n+/, '');
    if (open === undefined) rest = rest.replace(/^[ \t]+/, '');
  }
  const last = reopen + rest;
  if (last.trim().length > 0 || parts.length === 0) parts.push(last);
  return parts;
}

const CLOSE = '\n```';

/** The opening fence line (```lang) of a code block still open at the end of `text`. */
function openFence(text: string): string | undefined {
  let open: string | undefined;
  for (const match of text.matchAll(/^```[^\n`]*$/gm)) {
    open = open === undefined ? match[0] : undefined;
  }
  return open;
}

/** Where to cut `text` so the head is at most `max` code units; always at least one grapheme. */
function findCut(text: string, max: number): number {
  if (text.length <= max) return text.length;
  const window = text.slice(0, max + 1);
  const floor = Math.floor(max / 2); // do not make tiny parts for the sake of a nice boundary
  for (const pattern of [/\n\n(?![\s\S]*\n\n)/, /\n(?![\s\S]*\n)/, /\s(?![\s\S]*\s)/]) {
    const at = window.search(pattern);
    if (at >= floor) return at;
  }
  return graphemeBoundary(text, max);
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** The last grapheme boundary at or before `index` (or after the first grapheme if none). */
function graphemeBoundary(text: string, index: number): number {
  let boundary = 0;
  for (const { index: start } of segmenter.segment(text.slice(0, index + 32))) {
    if (start > index) break;
    boundary = start;
  }
  if (boundary > 0) return boundary;
  const first = segmenter.segment(text)[Symbol.iterator]().next().value;
  return first ? first.segment.length : Math.min(index, text.length);
}

/**
 * `text` cut to `limit` characters, ending with `…` when cut (a button's label, where the
 * platform allows fewer characters than the label has).
 *
 * @example
 * ```ts
 * shortened('Approve the refund of order 4242', 12); // 'Approve the…'
 * ```
 */
export function shortened(text: string, limit: number): string {
  return text.length <= limit ? text : `${text.slice(0, limit - 1)}…`;
}
