/**
 * Text from chats made safe to print on a terminal: every character a terminal could act on
 * is shown as an escape instead. C0 controls but line feed and tab (ESC `\e`, BEL `\a`, CR
 * `\r`, NUL `\0`, backspace `\b`, others `\xNN`), DEL and the C1 controls (`\x7F`, `\u009B`:
 * CSI on some terminals), and the invisible direction controls that reorder what follows
 * (bidi embeddings, overrides and isolates, LRM/RLM/ALM, line and paragraph separators) as
 * `\u202E`. Callers decide how line feeds and tabs are shown.
 *
 * @example
 * ```ts
 * visible('hi\u001b]0;pwned\u0007'); // 'hi\\e]0;pwned\\a'
 * ```
 */
export function visible(text: string): string {
  return text.replace(CONTROLS, escape);
}

const CONTROLS =
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;

const NAMED: Record<string, string> = {
  '\u0000': '\\0',
  '\u0007': '\\a',
  '\u0008': '\\b',
  '\u000b': '\\v',
  '\u000c': '\\f',
  '\r': '\\r',
  '\u001b': '\\e',
};

function escape(char: string): string {
  const named = NAMED[char];
  if (named !== undefined) return named;
  const code = char.charCodeAt(0);
  const hex = code.toString(16).toUpperCase();
  return code < 0x80 ? `\\x${hex.padStart(2, '0')}` : `\\u${hex.padStart(4, '0')}`;
}
