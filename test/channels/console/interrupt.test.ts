import { beforeAll, describe, expect, it } from 'vitest';
import { tempDirs } from '../../fixtures/temp-dirs.js';
import {
  buildIfStale,
  heldModel,
  onTerminal,
  render,
  startConsoleBot,
  startOnTerminal,
  until,
} from './bot.fixtures.js';

beforeAll(() => buildIfStale(), 180_000);
const temp = tempDirs();

describe('the console bot on Ctrl-C and at a restart', () => {
  it('says it finishes the answer being written, quits at once on a second Ctrl-C, and at the next start says it answers the question left', async () => {
    // given the console bot on a model that holds its first answer
    const ada = { COLLOQUY_USER_NAME: 'Ada', COLLOQUY_LOG_LEVEL: 'info' };
    const { model, held, env } = await heldModel(temp.make('console'), ada);
    const first = startConsoleBot(env);
    try {
      // when a question is being answered and Ctrl-C is pressed
      first.child.stdin.write('where is order 42?\n');
      await held.arrived;
      first.child.kill('SIGINT');

      // then it says what it is finishing and how to quit now
      await until(() =>
        first.stderr().includes('SIGINT: finishing 1 answer — Ctrl-C again to quit now'),
      );

      // and a second Ctrl-C quits at once, the answer unwritten
      first.child.kill('SIGINT');
      expect(await first.exited).toBe(130);
      expect(first.stdout()).toBe('');
    } finally {
      first.child.kill('SIGKILL');
      held.release();
    }

    // when the console starts again on the same database
    const second = startConsoleBot(env);
    try {
      await until(() => second.stdout().split('\n').length > 2);

      // then it says which question it answers before it answers it
      expect(second.stdout()).toBe(
        'answering a question left from last time: where is order 42?\n' +
          'echo: Ada: where is order 42?\n',
      );
      second.child.stdin.end();
      expect(await second.exited).toBe(0);
    } finally {
      second.child.kill('SIGKILL');
      await model.close();
    }
  });

  it(
    'on a terminal prints a log line above the prompt, leaving what is being typed whole',
    onTerminal,
    async () => {
      // given the console bot on a terminal, its model holding an answer it will refuse
      const refused = { replies: [{ status: 400, error: 'the model refused' }] };
      const { model, held, env } = await heldModel(temp.make('console'), {}, refused);
      const bot = startOnTerminal(env);
      try {
        // when a line is being answered and the person has half typed the next one
        await until(() => bot.screen().includes('> '));
        bot.child.stdin.write('first\r');
        await held.arrived;
        bot.child.stdin.write('sec');
        await until(() => bot.screen().includes('sec'));

        // and the answer fails, which the bot logs
        held.release();
        await until(() => render(bot.screen()).at(-1) === '> sec');

        // then the log line is a row of its own and the half-typed line is whole below it
        const rows = render(bot.screen());
        const logged = rows.filter((row) => row.includes('the model refused'));
        expect(logged).toHaveLength(1);
        expect(logged[0]).not.toContain('sec');
        expect(logged[0]).not.toContain('> ');
        expect(rows.indexOf(logged[0]!)).toBeLessThan(rows.length - 1);
      } finally {
        bot.child.kill('SIGKILL');
        await model.close();
      }
    },
  );

  it(
    'on a terminal, Ctrl-C says what it finishes and a second Ctrl-C quits at once',
    onTerminal,
    async () => {
      // given the console bot on a terminal, its model holding the first answer
      const { model, held, env } = await heldModel(temp.make('console'), {
        COLLOQUY_LOG_LEVEL: 'info',
      });
      const bot = startOnTerminal(env);
      try {
        // when a question is being answered and Ctrl-C is pressed twice
        await until(() => bot.screen().includes('> '));
        bot.child.stdin.write('first\r');
        await held.arrived;
        bot.child.stdin.write('\x03');
        await until(() => bot.screen().includes('Ctrl-C again to quit now'));
        bot.child.stdin.write('\x03');

        // then the first says what it finishes, on a row of its own, and the second quits
        expect(await bot.exited).toBe(130);
        const rows = render(bot.screen());
        expect(rows).toContainEqual(
          expect.stringMatching(/^\S+ INFO SIGINT: finishing 1 answer — Ctrl-C again to quit now$/),
        );
      } finally {
        bot.child.kill('SIGKILL');
        held.release();
        await model.close();
      }
    },
  );
});
