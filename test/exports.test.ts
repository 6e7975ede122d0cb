import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const run = promisify(execFile);

/** Runs an ES module in a fresh node, from the package root, against the build (dist/). */
async function node(source: string, flags: string[] = []): Promise<string> {
  const { stdout } = await run('node', [...flags, '--input-type=module', '-e', source], {
    cwd: root,
    timeout: 30_000,
  });
  return stdout.trim();
}

/** What a bot's author uses from `colloquy`, and nothing else. */
const ROOT_EXPORTS = [
  'AgentError',
  'AttachmentTooLargeError',
  'addSecret',
  'BaseAgent',
  'Bot',
  'ColloquyError',
  'DEFAULT_ASSEMBLER_OPTIONS',
  'History',
  'InMemoryConversationStore',
  'MalformedEventError',
  'ModelConfigError',
  'NetworkError',
  'PlatformError',
  'PluginError',
  'RateLimitError',
  'StoreError',
  'SummarizerAgent',
  'assemblePrompt',
  'compose',
  'concerns',
  'consoleLogger',
  'conversationSearchTool',
  'createConsoleLogger',
  'defaultDbPath',
  'isPostgresUrl',
  'defaultTokenizer',
  'delegate',
  'delegateTool',
  'followUpTool',
  'describeModel',
  'isOfflineModel',
  'modelFromEnv',
  'offlineModel',
  'recallToolResultTool',
  'redactText',
  'replyFile',
  'rollingCompression',
  'silentLogger',
  'splitMessage',
  'toolResultMasking',
];

describe('the root export', () => {
  it('lists what users use and no internals (wordKey, samePlace, TRUNCATION_MARKER…)', async () => {
    const root = await import('../index.js');
    expect(Object.keys(root).sort()).toEqual([...ROOT_EXPORTS].sort());
  });
});

describe('the built package', () => {
  it.runIf(existsSync(`${root}dist/index.js`))(
    'serves every public entry point by name from dist/',
    async () => {
      // Given the build, when each subpath is imported by its public name
      const out = await node(`
        const names = {};
        for (const entry of ['colloquy', 'colloquy/sqlite', 'colloquy/redis', 'colloquy/console', 'colloquy/telegram',
                             'colloquy/slack', 'colloquy/discord', 'colloquy/testing']) {
          const mod = await import(entry);
          names[entry] = Object.keys(mod).sort();
        }
        console.log(JSON.stringify(names));`);
      const names = JSON.parse(out) as Record<string, string[]>;

      // Then each serves what its documentation promises
      expect(names['colloquy']).toEqual([...ROOT_EXPORTS].sort());
      expect(names['colloquy/sqlite']).toContain('SqliteConversationStore');
      expect(names['colloquy/redis']).toContain('RedisConversationStore');
      expect(names['colloquy/console']).toContain('ConsoleChannel');
      expect(names['colloquy/telegram']).toContain('TelegramChannel');
      expect(names['colloquy/slack']).toContain('SlackChannel');
      expect(names['colloquy/discord']).toContain('DiscordChannel');
      expect(names['colloquy/testing']).toEqual(
        expect.arrayContaining(['FakeTelegram', 'FakeSlack', 'FakeDiscord', 'FakeOpenAIServer']),
      );
    },
  );

  it.runIf(existsSync(`${root}dist/index.js`))(
    'lets a Telegram-only bot run without loading discord.js or Bolt',
    async () => {
      // Given a resolve hook that records every bare package a program loads
      const hook = `data:text/javascript,${encodeURIComponent(`
        export async function resolve(specifier, context, next) {
          if (!specifier.startsWith('.') && !specifier.startsWith('node:') && !specifier.startsWith('file:'))
            process.stderr.write('loaded ' + specifier + '\\n');
          return next(specifier, context);
        }`)}`;
      const register = `data:text/javascript,${encodeURIComponent(
        `import { register } from 'node:module'; register(${JSON.stringify(hook)});`,
      )}`;

      // When a program imports what a Telegram bot needs
      const { stderr } = await run(
        'node',
        [
          '--import',
          register,
          '--input-type=module',
          '-e',
          `await import('colloquy'); await import('colloquy/sqlite'); await import('colloquy/telegram');`,
        ],
        { cwd: root, timeout: 30_000 },
      );

      // Then grammy was loaded and the other platforms' libraries were not
      expect(stderr).toContain('loaded grammy');
      expect(stderr).not.toContain('discord.js');
      expect(stderr).not.toContain('@slack/bolt');
    },
  );

  it.runIf(existsSync(`${root}dist/index.js`))(
    'commits a batch to SQLite from the build',
    async () => {
      // Given the built store on a fresh file, when it commits a turn
      const out = await node(
        `
        import { mkdtempSync, rmSync } from 'node:fs';
        import { tmpdir } from 'node:os';
        import { join } from 'node:path';
        import { SqliteConversationStore } from 'colloquy/sqlite';
        const dir = mkdtempSync(join(tmpdir(), 'colloquy-dist-'));
        const store = new SqliteConversationStore({ path: join(dir, 'a.db') });
        const [result] = await store.commit([{ kind: 'append', message: {
          id: 'a', conversationId: 'console:local', participant: { kind: 'user', id: 'u' },
          content: 'hi', timestamp: new Date().toISOString(), scope: 'dm',
          metadata: { channelType: 'console', channelId: 'local', mentions: [] },
        } }]);
        console.log(result.ok, result.value.inserted, (await store.get('console:local')).length);
        await store.close();
        rmSync(dir, { recursive: true });`,
        [],
      );

      // Then it is stored
      expect(out).toBe('true true 1');
    },
  );

  it('is built before the suite runs (npm test builds first)', () => {
    expect(existsSync(`${root}dist/index.js`)).toBe(true);
  });
});
