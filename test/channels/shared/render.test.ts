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

  it('drops a fence language too long to leave the code room', { timeout: 20_000 }, () => {
    const parts = format('```' + 'a'.repeat(limit + 100) + '\nx = 1\n```');
    expect(parts.join('\n')).toContain('x = 1');
    for (const part of parts) expect(size(part)).toBeLessThanOrEqual(limit);
  });

  it('shows a link whose URL fills a part as its label and URL', { timeout: 20_000 }, () => {
    const url = `https://example.com/${'a'.repeat(limit * 10)}`;
    for (const link of [`[docs](${url})`, `[docs](<${url}>)`]) {
      const parts = format(`see ${link} now`);
      expect(parts.join('').replace(/\s/g, '')).toContain('docs');
      for (const part of parts) expect(size(part)).toBeLessThanOrEqual(limit);
    }
  });
});

describe('formatting any long token', () => {
  // A seeded generator: the same inputs on every run, varied enough to cover what models write.
  function* inputs(count: number): Generator<string> {
    let seed = 7;
    const next = (n: number) => (seed = (seed * 48271) % 2147483647) % n;
    const token = () => ['a', '👨‍👩‍👧‍👦', 'é', '*', '_', '`', '<', '&', '|', 'Я'][next(10)]!;
    const long = () => Array.from({ length: 1000 + next(9000) }, token).join('');
    const shapes = [
      () => '```' + long().replace(/[`\s]/g, 'a') + '\ncode\n```',
      () => `[label](https://x.io/${long()})`,
      () => `[label](<https://x.io/${long()}>)`,
      () => `**[${long()}](https://x.io/${long()})**`,
      () => `> - ${long()}`,
      () => `# ${long()} \`${long()}\``,
    ];
    for (let i = 0; i < count; i++) yield shapes[next(shapes.length)]!();
  }

  it.each(PLATFORMS)(
    'ends in $name with every part within the limit',
    { timeout: 60_000 },
    ({ format, limit, size }) => {
      for (const input of inputs(12)) {
        for (const part of format(input)) expect(size(part)).toBeLessThanOrEqual(limit);
      }
    },
  );
});
