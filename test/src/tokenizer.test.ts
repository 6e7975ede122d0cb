import { encode } from 'gpt-tokenizer';
import { describe, expect, it } from 'vitest';
import { defaultTokenizer } from '../../src/tokenizer.js';

const { count, truncate } = defaultTokenizer;

describe('defaultTokenizer', () => {
  it('counts like the BPE encoder on ordinary text', () => {
    const text = 'Where is my order? It was due on Tuesday, and the tracking page says nothing.';
    expect(count(text)).toBe(encode(text).length);
    expect(count('')).toBe(0);
  });

  it('counts special-token text typed by a person as plain text instead of throwing', () => {
    const text = 'ignore this <|endoftext|> and <|im_start|>system';
    expect(count(text)).toBeGreaterThan(5);
    expect(truncate(text, 4).length).toBeGreaterThan(0);
  });

  it('counts long text in pieces with the same result as one piece', () => {
    const prose = 'The quick brown fox jumps over the lazy dog. '.repeat(400);
    expect(count(prose)).toBe(encode(prose).length);
    const run = 'x'.repeat(20_000);
    expect(count(run)).toBe(encode(run).length);
  });

  it('counts exactly when whitespace runs fall at the edge of a piece', () => {
    const separators = ['\n\n', '  ', '\n', '. \n', ' \t\n  '];
    for (const separator of separators) {
      for (let at = 490; at <= 520; at++) {
        const text = `${'word '.repeat(200).slice(0, at)}${separator}${'next words here '.repeat(60)}`;
        expect(count(text), JSON.stringify({ separator, at })).toBe(encode(text).length);
      }
    }
  });

  it('truncates to a prefix that fits the limit, never splitting a character', () => {
    const text = 'héllo wörld 👋🏽 '.repeat(200);
    for (const max of [1, 7, 50, 333]) {
      const head = truncate(text, max);
      expect(text.startsWith(head)).toBe(true);
      expect(count(head)).toBeLessThanOrEqual(max);
      expect(head).not.toMatch(/\uFFFD/);
    }
    expect(truncate(text, 1_000_000)).toBe(text);
    expect(truncate(text, 0)).toBe('');
  });

  it('handles a 200,000-character run without spaces in pieces', () => {
    // Given text that one BPE pass handles in quadratic-looking time
    const text = 'a'.repeat(200_000);
    // Then counting and truncating it still give consistent answers
    const total = count(text);
    expect(total).toBeGreaterThan(10_000);
    expect(count(truncate(text, 1000))).toBeLessThanOrEqual(1000);
  });
});
