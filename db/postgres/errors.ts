/**
 * Whether a Postgres failure can pass: a lost or refused connection, a deadlock or
 * serialization failure, a full disk, a server shutting down can; a constraint, a bad value
 * or a syntax error never will. Undefined for anything else.
 *
 * @example
 * ```ts
 * isTransientPg({ code: '40P01' }); // true (deadlock)
 * ```
 */
export function isTransientPg(error: unknown): boolean | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code !== 'string') {
    // node-postgres reports a connection that went away without a code.
    return error instanceof Error && /Connection terminated|timeout/i.test(error.message)
      ? true
      : undefined;
  }
  if (/^E[A-Z]+$/.test(code)) return true; // ECONNREFUSED, ECONNRESET, ETIMEDOUT…
  if (/^(08|40|53|57P|58)/.test(code) || code === '55P03' || code === '55006') return true;
  if (/^(22|23|42|2B|2F|P0|XX)/.test(code)) return false;
  return undefined;
}

/**
 * Whether Postgres rolled the transaction back because of another one (a deadlock victim, a
 * serialization failure): nothing of it was written, and running it again is safe.
 *
 * @example
 * ```ts
 * isRolledBackConflict({ code: '40P01' }); // true
 * ```
 */
export function isRolledBackConflict(error: unknown): boolean {
  const code = (error as { code?: unknown } | undefined)?.code;
  return code === '40P01' || code === '40001';
}

/**
 * How long to wait before running again a transaction rolled back by a conflict (attempt 1
 * is the first retry): a short random pause, longer at each attempt, so two instances that
 * collided do not run again in lockstep and collide again. Milliseconds, from 5 × attempt up
 * to 25 × attempt.
 *
 * @example
 * ```ts
 * await setTimeout(conflictBackoffMs(attempt));
 * ```
 */
export function conflictBackoffMs(attempt: number, random: () => number = Math.random): number {
  return Math.round(attempt * (5 + 20 * random()));
}

/** A short reason for a Postgres failure: its message and SQLSTATE. */
export function describePgError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const { code } = error as { code?: unknown };
  if (error instanceof AggregateError && error.errors.length > 0) {
    return describePgError(error.errors[0]);
  }
  if (code === 'ECONNREFUSED') return `the server refused the connection (${error.message})`;
  if (code === '53100') return `the database's disk is full (${code}: ${error.message})`;
  return typeof code === 'string' && code !== '' ? `${code}: ${error.message}` : error.message;
}

const NUL = /\0/g;
/**
 * In JSON text, left to right: an escaped backslash (kept), a surrogate pair (kept), half of
 * one or `\u0000` (neither of which jsonb takes).
 */
const JSON_ESCAPES =
  /\\\\|\\ud[89ab][0-9a-f]{2}\\ud[c-f][0-9a-f]{2}|\\ud[89a-f][0-9a-f]{2}|\\u0000/gi;

/**
 * The values with U+0000 replaced by U+FFFD: Postgres text cannot hold it, and a turn is
 * kept with one character changed rather than refused. Arrays of strings too.
 *
 * @example
 * ```ts
 * withoutNul(['a\u0000b']); // ['a\ufffdb']
 * ```
 */
export function withoutNul(values: unknown[]): unknown[] {
  return values.map((value) => {
    if (typeof value === 'string') return value.replace(NUL, '\ufffd');
    if (Array.isArray(value)) return withoutNul(value);
    return value;
  });
}

/**
 * JSON text as jsonb takes it: escaped U+0000 and halves of surrogate pairs (a platform's text
 * cut inside an emoji) as U+FFFD.
 *
 * @example
 * ```ts
 * storableJson('{"k":"a\\u0000"}'); // '{"k":"a\\ufffd"}'
 * storableJson('"\\ud83d"'); // '"\\ufffd"'
 * ```
 */
export function storableJson<T extends string | null>(json: T): T {
  return (
    json === null
      ? json
      : json.replace(JSON_ESCAPES, (escape) => (escape.length === 6 ? '\\ufffd' : escape))
  ) as T;
}
