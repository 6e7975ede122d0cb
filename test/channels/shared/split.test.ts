import { describe, expect, it } from 'vitest';
import { splitMessage } from '../../../channels/shared/split.js';

const fits = (parts: string[], limit: number) => parts.every((part) => part.length <= limit);
/** No lone surrogate halves (String#isWellFormed is ES2024, newer than our lib). */
const wellFormed = (part: string) =>
  !/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(part);
const fenceCount = (part: string) => (part.match(/^```/gm) ?? []).length;

describe('splitMessage', () => {
  it('leaves a short message whole', () => {
    expect(splitMessage('hello', 2000)).toEqual(['hello']);
  });

  it('keeps an empty message as one empty part', () => {
    expect(splitMessage('', 2000)).toEqual(['']);
  });

  it('cuts at paragraph breaks before line breaks and words', () => {
    const text = `${'a '.repeat(30).trim()}\n\n${'b '.repeat(30).trim()}`;
    expect(splitMessage(text, 70)).toEqual(['a '.repeat(30).trim(), 'b '.repeat(30).trim()]);
  });

  it('never breaks a word when a space is near the limit', () => {
    const words = Array.from({ length: 500 }, (_, i) => `word${i}`).join(' ');
    const parts = splitMessage(words, 100);
    expect(fits(parts, 100)).toBe(true);
    expect(parts.join(' ')).toBe(words);
    for (const part of parts) expect(part).toMatch(/^word\d+( word\d+)*$/);
  });

  it('hard-cuts a long run without splitting surrogate pairs or emoji sequences', () => {
    const family = '👨‍👩‍👧‍👦';
    const text = `${'x'.repeat(15)}${family.repeat(40)}`;
    const parts = splitMessage(text, 40);
    expect(fits(parts, 40)).toBe(true);
    expect(parts.join('')).toBe(text);
    for (const part of parts) expect(wellFormed(part)).toBe(true);
    for (const part of parts.slice(1)) expect(part.startsWith(family)).toBe(true);
  });

  it('closes and reopens a code block cut in two, with its language', () => {
    const code = Array.from({ length: 60 }, (_, i) => `const v${i} = ${i};`).join('\n');
    const text = `Here is the fix:\n\n\`\`\`ts\n${code}\n\`\`\`\nDone.`;
    const parts = splitMessage(text, 300);
    expect(parts.length).toBeGreaterThan(2);
    expect(fits(parts, 300)).toBe(true);
    for (const part of parts) expect(fenceCount(part) % 2).toBe(0);
    for (const part of parts.slice(1, -1)) expect(part.startsWith('```ts\n')).toBe(true);
    const rejoined = parts.join('\n').replace(/\n```\n```ts\n/g, '\n');
    expect(rejoined).toContain(code);
    expect(parts.at(-1)?.endsWith('Done.')).toBe(true);
  });

  it('splits 10,000 characters for Telegram into parts of at most 4096 in order', () => {
    const text = Array.from({ length: 1000 }, (_, i) => `line ${i} 🎉`).join('\n');
    const parts = splitMessage(text, 4096);
    expect(fits(parts, 4096)).toBe(true);
    expect(parts.join('\n')).toBe(text);
  });

  it('refuses a limit too small to hold a fence', () => {
    expect(() => splitMessage('abc', 3)).toThrow(RangeError);
  });
});
