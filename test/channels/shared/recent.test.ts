import { describe, expect, it } from 'vitest';
import { RecentKeys } from '../../../channels/shared/recent.js';

describe('RecentKeys', () => {
  it('says a key is new once, then seen, until it is among the oldest past capacity', () => {
    const seen = new RecentKeys<string>(2);
    expect(seen.add('a')).toBe(true);
    expect(seen.add('a')).toBe(false);
    expect(seen.add('b')).toBe(true);
    expect(seen.add('c')).toBe(true); // forgets 'a', the oldest
    expect(seen.add('b')).toBe(false);
    expect(seen.add('a')).toBe(true);
  });
});
