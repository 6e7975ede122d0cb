import { InvalidArgumentError } from 'commander';

/**
 * Commander argument parser for counts and limits: a whole number of at least 1.
 *
 * @example
 * ```ts
 * program.option('-n, --lines <count>', 'how many', positiveInteger, 20);
 * ```
 */
export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n) || n < 1) {
    throw new InvalidArgumentError('expected a whole number of at least 1');
  }
  return n;
}

/** A commander option parser for whole numbers from 0 (`--offset`). */
export function nonNegativeInteger(value: string): number {
  const n = Number(value);
  if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(n)) {
    throw new InvalidArgumentError('expected a whole number of at least 0');
  }
  return n;
}
