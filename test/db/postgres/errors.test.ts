import { describe, expect, it } from 'vitest';
import { conflictBackoffMs } from '../../../db/postgres/errors.js';

describe('the pause before a transaction rolled back by a conflict runs again', () => {
  it('is random, so two instances that collided run again apart', () => {
    expect(conflictBackoffMs(1, () => 0)).not.toBe(conflictBackoffMs(1, () => 0.99));
  });

  it('is short and grows with each attempt', () => {
    for (const random of [0, 0.5, 0.999]) {
      const pauses = [1, 2, 3].map((attempt) => conflictBackoffMs(attempt, () => random));
      expect(pauses[0]).toBeGreaterThanOrEqual(5);
      expect(pauses[2]).toBeLessThanOrEqual(75);
      expect(pauses[1]).toBeGreaterThan(pauses[0]!);
      expect(pauses[2]).toBeGreaterThan(pauses[1]!);
    }
  });
});
