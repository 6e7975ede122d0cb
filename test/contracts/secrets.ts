import { inspect } from 'node:util';
import { expect } from 'vitest';

/** Every way an error usually ends up printed or shipped, one string each. */
export function renderings(error: unknown): Record<string, string> {
  const chain: unknown[] = [];
  for (let e: unknown = error; e instanceof Error && chain.length < 10; e = e.cause) chain.push(e);
  return {
    'String(error)': String(error),
    'error.stack': error instanceof Error ? (error.stack ?? '') : '',
    // own enumerable properties of the error and of every cause under it
    'JSON.stringify': chain.map((e) => JSON.stringify(e)).join('\n'),
    'util.inspect': inspect(error, { depth: 10 }),
  };
}

/** Asserts no rendering of `error` contains `secret`. */
export function expectNoSecret(error: unknown, secret: string): void {
  expect(error).toBeInstanceOf(Error);
  for (const [how, text] of Object.entries(renderings(error))) {
    expect(text, `${how} leaks the token`).not.toContain(secret);
  }
}

/** What a library error carries that a redacted copy must leave behind. */
const REQUEST_FIELDS = [
  'config',
  'headers',
  'request',
  'requestBody',
  'rawError',
  'body',
  'data',
  'url',
  'payload',
  'original',
  'error',
];

/** Asserts `error.cause` and every cause under it are plain Errors without request details. */
export function expectRedactedCauses(error: unknown): void {
  let cause = (error as Error).cause;
  expect(cause, 'the error keeps a cause').toBeInstanceOf(Error);
  for (let depth = 0; cause !== undefined && depth < 10; depth++) {
    expect(Object.getPrototypeOf(cause), 'a cause is a plain Error').toBe(Error.prototype);
    for (const field of REQUEST_FIELDS) {
      expect(Object.hasOwn(cause as object, field), `a cause keeps ${field}`).toBe(false);
    }
    cause = (cause as Error).cause;
  }
}
