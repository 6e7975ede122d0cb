import { describe, expect, it } from 'vitest';
import { formatDiscord } from 'colloquy/discord';
import { answerText } from '../../fixtures/answers.js';

describe('formatDiscord', () => {
  it('keeps Markdown Discord reads as written', () => {
    const answer = '## Steps\n**bold *it*** ~~old~~ `code`\n- one\n> quoted [docs](https://x.io)';
    expect(formatDiscord(answer)).toEqual([answer]);
  });

  it('shows a table as aligned text in a code block', () => {
    expect(formatDiscord('| a | b |\n|---|---|\n| 1 | 22 |')).toEqual([
      '```\na | b\n--+---\n1 | 22\n```',
    ]);
  });

  it('escapes what it reads as plain so Discord shows it plain too', () => {
    expect(formatDiscord('2 * 3, a_b, _x, https://x.io/a_b_c and ~5')).toEqual([
      '2 \\* 3, a_b, \\_x, https://x.io/a_b_c and \\~5',
    ]);
  });

  it('keeps the code answer with its languages in one message', () => {
    const [part] = formatDiscord(answerText('code-answer'));
    expect(part).toContain('```typescript\nexport function debounce');
    expect(part).toContain('```python\nimport asyncio');
  });

  it('cuts a long code block into blocks that each keep the language', () => {
    const code = Array.from({ length: 300 }, (_, i) => `let v${i} = ${i};`).join('\n');
    const parts = formatDiscord(`Here:\n\n\`\`\`ts\n${code}\n\`\`\``);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts.slice(1)) expect(part).toMatch(/^```ts\n[\s\S]*\n```$/);
  });
});
