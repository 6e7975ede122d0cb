import { describe, expect, it } from 'vitest';
import { formatSlackText } from 'colloquy/slack';
import { answerText } from '../../fixtures/answers.js';

describe('formatSlackText', () => {
  it('writes nested emphasis, lists and quotes as mrkdwn', () => {
    expect(formatSlackText('**bold _it_** ***both***\n- one\n  1. two\n> said')).toEqual([
      '*bold _it_* *_both_*\n• one\n  1. two\n> said',
    ]);
  });

  it('shows a table as aligned text in a code block, links with their target', () => {
    const [part] = formatSlackText(answerText('plans-table'));
    expect(part).toContain(
      '```\nPlan          | Price / month                          | Seats | SSO\n' +
        '--------------+----------------------------------------+-------+----\n',
    );
    expect(part).toContain(
      'Enterprise 🏢 | contact us (https://example.com/sales) | ∞     | ✅\n```',
    );
  });

  it('keeps code as written, escaped, without the language Slack would show as text', () => {
    expect(formatSlackText('```ts\nif (a < b) {}\n```')).toEqual(['```\nif (a &lt; b) {}\n```']);
  });

  it('closes and reopens bold across a cut', () => {
    const parts = formatSlackText(`**${'word '.repeat(30).trim()}**`, 40);
    expect(parts.length).toBeGreaterThan(3);
    for (const part of parts) expect(part).toMatch(/^\*word( word)*\*$/);
  });
});
