/**
 * The text of a thrown value: an Error's message (its name when the message is empty), or
 * the value as a string.
 *
 * @example
 * ```ts
 * messageOf(new Error('SQLITE_BUSY')); // 'SQLITE_BUSY'
 * messageOf('timeout'); // 'timeout'
 * ```
 */
export function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}

/**
 * Text folded onto one line: each line break, with the blanks around it, becomes one space.
 *
 * @example
 * ```ts
 * oneLine('no such table: messages\n  at line 1'); // 'no such table: messages at line 1'
 * ```
 */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').trim();
}
