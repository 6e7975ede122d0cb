import { StoreError } from './errors.js';

/** A date-time without a zone (taken as UTC). */
const ZONELESS = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/;
/**
 * Already as colloquy stores it, and certainly a real date: such a timestamp is kept as it is
 * instead of being parsed and printed again (every captured turn comes this way). Days 29-31,
 * which `Date` would roll over into the next month, take the long way.
 */
const CANONICAL =
  /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|1\d|2[0-8])T([01]\d|2[0-3]):[0-5]\d:[0-5]\d\.\d{3}Z$/;

/**
 * Any parseable date as colloquy stores it: ISO 8601, UTC, milliseconds. A date-time without
 * a zone is taken as UTC. Unparseable input is a StoreError.
 *
 * @example
 * ```ts
 * normalizeTimestamp('2026-11-21T10:30:00+01:00'); // '2026-11-21T09:30:00.000Z'
 * ```
 */
export function normalizeTimestamp(
  value: string,
  what = 'timestamp',
  context: { conversationId?: string; messageId?: string } = {},
): string {
  if (typeof value === 'string' && CANONICAL.test(value)) return value;
  const text = typeof value === 'string' ? value.trim() : '';
  const date = new Date(ZONELESS.test(text) ? `${text.replace(' ', 'T')}Z` : text);
  if (text === '' || Number.isNaN(date.getTime())) {
    throw new StoreError(
      `${what} ${JSON.stringify(value)} is not a date; colloquy stores ISO 8601 UTC timestamps ` +
        `such as 2026-11-21T09:30:00.000Z`,
      { ...context, transient: false },
    );
  }
  return date.toISOString();
}

/**
 * True when timestamp `at` names an earlier instant than `than`; false when `than` is absent.
 * Stores use it to leave a change that arrives after a later one (a platform's redelivery, a
 * dead letter imported late) without effect.
 *
 * @example
 * ```ts
 * isBefore('2026-01-01T00:01:00.000Z', '2026-01-01T00:02:00.000Z'); // true
 * isBefore('2026-01-01T00:01:00.000Z', undefined); // false
 * ```
 */
export function isBefore(at: string, than: string | null | undefined): boolean {
  return than !== null && than !== undefined && Date.parse(at) < Date.parse(than);
}
