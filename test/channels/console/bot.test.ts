import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { SqliteConversationStore } from 'colloquy/sqlite';
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

describe('npm start: the console bot', () => {
  it('answers piped lines with the offline model and captures the transcript in COLLOQUY_DB', async () => {
    // given the built console bot with a fresh database and no COLLOQUY_MODEL
    const db = join(temp.make('console'), 'chat.db');
    const bot = startConsoleBot({ COLLOQUY_DB: db, COLLOQUY_USER_NAME: 'Ada' });

    // when a person types two lines, waiting for each answer, then ends the input
    const first = await bot.say('hello', 1);
    const second = await bot.say('where is order 42?', 2);
    bot.child.stdin.end();

    // then each line got a labelled offline answer and the process exited cleanly
    expect(first).toEqual([
      '[offline model] I heard: "Ada: hello" — set COLLOQUY_MODEL to use a real model.',
    ]);
    expect(second[1]).toBe(
      '[offline model] I heard: "Ada: where is order 42?" — set COLLOQUY_MODEL to use a real model.',
    );
    expect(await bot.exited).toBe(0);
    expect(bot.stderr()).toContain(
      'using the offline model — set COLLOQUY_MODEL=openai:gpt-4o-mini',
    );
    expect(bot.stderr()).toContain(db);

    // and the database holds the conversation, readable through the transcript view
    const store = SqliteConversationStore.open(db);
    try {
      const turns = await store.get('console:local');
      expect(turns.map((t) => [t.participant.kind, t.content])).toEqual([
        ['user', 'hello'],
        ['agent', first[0]],
        ['user', 'where is order 42?'],
        ['agent', second[1]],
      ]);
      expect(turns[1]?.metadata).toMatchObject({ model: 'offline', offline: true });
      const rows = store.db
        .prepare("SELECT speaker, text FROM transcript WHERE conversation_id = 'console:local'")
        .all();
      expect(rows).toEqual([
        { speaker: 'Ada', text: 'hello' },
        { speaker: 'support-agent', text: first[0] },
        { speaker: 'Ada', text: 'where is order 42?' },
        { speaker: 'support-agent', text: second[1] },
      ]);
    } finally {
      await store.close();
    }
  });

  it('adds to the same database on a second run without clashing ids', async () => {
    const db = join(temp.make('console'), 'chat.db');
    for (const text of ['first run', 'second run']) {
      const bot = startConsoleBot({ COLLOQUY_DB: db });
      await bot.say(text, 1);
      bot.child.stdin.end();
      expect(await bot.exited).toBe(0);
    }
    const store = SqliteConversationStore.open(db);
    try {
      const users = (await store.get('console:local')).filter((t) => t.participant.kind === 'user');
      expect(users.map((t) => t.content)).toEqual(['first run', 'second run']);
    } finally {
      await store.close();
    }
  });

  it('stops cleanly on SIGTERM', async () => {
    const db = join(temp.make('console'), 'chat.db');
    const bot = startConsoleBot({ COLLOQUY_DB: db });
    await bot.say('hi', 1);
    bot.child.kill('SIGTERM');
    expect(await bot.exited).toBe(0);
  });

  it('on Ctrl-C lets the pending answer finish, answers the lines typed meanwhile, stamped when typed, and exits', async () => {
    // given the console bot on a model that holds its first answer
    const ada = { COLLOQUY_USER_NAME: 'Ada', COLLOQUY_LOG_LEVEL: 'info' };
    const { model, held: firstAnswer, db, env } = await heldModel(temp.make('console'), ada);
    const bot = startConsoleBot(env);
    try {
      // when a line's answer is pending and two more lines are typed meanwhile
      bot.child.stdin.write('first\n');
      await firstAnswer.arrived;
      bot.child.stdin.write('second\nthird\n');
      await until(() => userLines(db).length === 3); // stored at once, not after the answer

      // and Ctrl-C is pressed before the model answers
      bot.child.kill('SIGINT');
      await until(() =>
        bot.stderr().includes('SIGINT: finishing 3 answers — Ctrl-C again to quit now'),
      );
      firstAnswer.release();

      // then every line is answered, in order, and the process exits cleanly
      expect(await bot.exited).toBe(0);
      const { stdout } = bot;
      expect(stdout().trim().split('\n')).toEqual([
        'echo: Ada: first',
        'echo: Ada: second',
        'echo: Ada: third',
      ]);

      // and the lines typed meanwhile carry the time they were typed, before the first answer
      const turns = userLines(db);
      expect(turns.map((turn) => turn.content)).toEqual(['first', 'second', 'third']);
      const answered = firstAnswerTime(db);
      for (const turn of turns) expect(turn.timestamp < answered).toBe(true);
    } finally {
      bot.child.kill('SIGKILL');
      await model.close();
    }
  });

  it(
    'on a terminal, Ctrl-C says what it finishes, lets the pending answer finish, answers the lines typed meanwhile, and exits',
    onTerminal,
    async () => {
      // given the console bot on a real terminal and a model that holds its first answer
      const ada = { COLLOQUY_USER_NAME: 'Ada', COLLOQUY_LOG_LEVEL: 'info' };
      const { model, held: firstAnswer, db, env } = await heldModel(temp.make('console'), ada);
      const bot = startOnTerminal(env);
      try {
        // when a line's answer is pending and two more lines are typed meanwhile
        await until(() => bot.screen().includes('> '));
        bot.child.stdin.write('first\r');
        await firstAnswer.arrived;
        bot.child.stdin.write('second\rthird\r');
        await until(() => userLines(db).length === 3);

        // and Ctrl-C is pressed before the model answers
        bot.child.stdin.write('\x03');
        await until(() => bot.screen().includes('Ctrl-C again to quit now'));
        firstAnswer.release();

        // then it says what it finishes, every line is answered after the ^C, no prompt comes
        // back, and it exits cleanly
        expect(await bot.exited).toBe(0);
        const rows = render(bot.screen());
        const afterCtrlC = rows.slice(rows.indexOf('^C') + 1);
        expect(afterCtrlC).toEqual([
          expect.stringMatching(
            /^\S+ INFO SIGINT: finishing 3 answers — Ctrl-C again to quit now$/,
          ),
          'echo: Ada: first',
          'echo: Ada: second',
          'echo: Ada: third',
          '',
        ]);
        expect(userLines(db).map((turn) => turn.content)).toEqual(['first', 'second', 'third']);
      } finally {
        bot.child.kill('SIGKILL');
        await model.close();
      }
    },
  );

  it('exits with the reason when COLLOQUY_MODEL cannot be used', async () => {
    const bot = startConsoleBot({ COLLOQUY_MODEL: 'openai:gpt-4o-mini', OPENAI_API_KEY: '' });
    expect(await bot.exited).toBe(1);
    expect(bot.stderr()).toContain('OPENAI_API_KEY is not set');
  });

  it('exits with one line at start when COLLOQUY_MODEL_BASE_URL is not a URL', async () => {
    const bot = startConsoleBot({
      COLLOQUY_MODEL: 'openai-compatible:qwen',
      COLLOQUY_MODEL_BASE_URL: 'not-a-url',
    });
    expect(await bot.exited).toBe(1);
    expect(bot.stderr()).toBe(
      'COLLOQUY_MODEL_BASE_URL must be an http(s) URL such as http://127.0.0.1:11434/v1, not "not-a-url"\n',
    );
  });

  it('refuses at start a COLLOQUY_LOG_LEVEL it does not know, instead of logging at info', async () => {
    const db = join(temp.make('console'), 'chat.db');
    const bot = startConsoleBot({ COLLOQUY_DB: db, COLLOQUY_LOG_LEVEL: 'verbose' });
    expect(await bot.exited).toBe(1);
    expect(bot.stderr()).toContain(
      'Could not start: COLLOQUY_LOG_LEVEL must be one of debug, info, warn, error, silent, not "verbose"\n',
    );
  });
});

/** The person's turns in the console conversation, read from another connection. */
function userLines(db: string): { content: string; timestamp: string }[] {
  const file = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return file
      .prepare(
        "SELECT content, timestamp FROM messages WHERE conversation_id = 'console:local' AND participant_id LIKE 'console:%' ORDER BY seq",
      )
      .all() as { content: string; timestamp: string }[];
  } catch {
    return []; // not created yet
  } finally {
    file.close();
  }
}

/** When the first answer was written. */
function firstAnswerTime(db: string): string {
  const file = new Database(db, { readonly: true, fileMustExist: true });
  try {
    return file
      .prepare(
        "SELECT timestamp FROM messages WHERE conversation_id = 'console:local' AND participant_id NOT LIKE 'console:%' ORDER BY seq LIMIT 1",
      )
      .pluck()
      .get() as string;
  } finally {
    file.close();
  }
}
