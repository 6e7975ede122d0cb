import { describe, expect, it } from 'vitest';
import { formatDiscord } from 'colloquy/discord';
import { formatSlackText } from 'colloquy/slack';
import { formatTelegram, telegramPlainText } from 'colloquy/telegram';
import { parseTelegramHtml } from '../../../channels/telegram/fake-html.js';
import { ANSWERS, answerText, longAnswer } from '../../fixtures/answers.js';

/** Each platform's formatter, what its limit counts and how a part proves it renders alone. */
const PLATFORMS = [
  {
    name: 'Telegram',
    format: (text: string) => formatTelegram(text),
    limit: 4096,
    size: (part: string) => telegramPlainText(part).length,
    wellFormed: (part: string) => parseTelegramHtml(part).text.trim() !== '',
  },
  {
    name: 'Slack',
    format: (text: string) => formatSlackText(text),
    limit: 4000,
    size: (part: string) => part.length,
    wellFormed: (part: string) => balanced(part, ['```']) && !/<[^>]*$/.test(part),
  },
  {
    name: 'Discord',
    format: (text: string) => formatDiscord(text),
    limit: 2000,
    size: (part: string) => part.length,
    wellFormed: (part: string) => balanced(part, ['```', '**', '~~']),
  },
];

/** Every marker occurs an even number of times outside code (fences counted themselves). */
function balanced(part: string, markers: string[]): boolean {
  const fences = (part.match(/^```/gm) ?? []).length;
  if (fences % 2 !== 0) return false;
  const prose = part.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
  return markers
    .filter((marker) => marker !== '```')
    .every((marker) => (prose.split(marker).length - 1) % 2 === 0);
}

describe.each(PLATFORMS)('$name formatting', ({ format, limit, size, wellFormed }) => {
  it.each(ANSWERS)('sends the %s answer in one message', (name) => {
    const parts = format(answerText(name));
    expect(parts).toHaveLength(1);
    expect(wellFormed(parts[0] as string)).toBe(true);
  });

  it('cuts a very long answer into parts that each fit and render on their own', () => {
    const parts = format(longAnswer());
    expect(parts.length).toBeGreaterThan(5);
    for (const part of parts) {
      expect(size(part)).toBeLessThanOrEqual(limit);
      expect(wellFormed(part)).toBe(true);
    }
  });

  it('loses no word of a very long answer across its parts', () => {
    const shown = format(longAnswer()).join('\n');
    for (const word of ['word0 ', 'word699 ', 'step_0 ', 'step_399 ', '👨‍👩‍👧‍👦', 'Привет!']) {
      expect(shown).toContain(word);
    }
  });

  it('keeps the parts of a growing answer once the lines after them are written', () => {
    // A streamed answer, looked at whenever a line is complete: only its last two parts move.
    const full = longAnswer();
    const final = format(full);
    for (let end = full.indexOf('\n', 500); end > 0; end = full.indexOf('\n', end + 1733)) {
      const parts = format(full.slice(0, end));
      expect(parts.slice(0, -2)).toEqual(final.slice(0, Math.max(0, parts.length - 2)));
    }
  });

  it('gives no part for a blank answer', () => {
    expect(format('  \n\n ')).toEqual([]);
  });
});
