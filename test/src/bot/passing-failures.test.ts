import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Bot, StoreError, silentLogger } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { MemoryChannel } from 'colloquy/testing';
import type { CommitResult, StoreOperation } from '../../../src/store.js';
import { scriptedAgent } from './bot.fixtures.js';

/**
 * A store whose commit loses the first batch holding an op `losing` picks, as Postgres loses
 * a transaction it picks as a deadlock's victim.
 */
function losingOnce(store: SqliteConversationStore, losing: (op: StoreOperation) => boolean) {
  const lost: string[] = [];
  const commit = async (ops: readonly StoreOperation[]): Promise<CommitResult[]> => {
    const op = lost.length === 0 ? ops.find(losing) : undefined;
    if (op === undefined) return store.commit(ops);
    lost.push(op.kind);
    const error = new StoreError(`cannot store ${op.kind}: 40P01: deadlock detected`, {
      transient: true,
    });
    return ops.map(() => ({ ok: false, error }));
  };
  const wrapped = new Proxy(store, {
    get: (target, key) => {
      if (key === 'commit') return commit;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return { store: wrapped, lost };
}

describe('a run meets a passing store failure', () => {
  let dir: string;
  let file: SqliteConversationStore;
  let bot: Bot | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'colloquy-passing-'));
    file = new SqliteConversationStore({ path: join(dir, 'colloquy.db') });
  });
  afterEach(async () => {
    await bot?.stop();
    await file.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const row = (sql: string, ...params: unknown[]) =>
    file.db.prepare(sql).get(...params) as Record<string, unknown> | undefined;

  it.each([
    ['the run starting', 'run', (op: StoreOperation) => op.kind === 'run' && op.create !== true],
    ['the reply record', 'reply', (op: StoreOperation) => op.kind === 'reply'],
    ['the confirmation', 'confirm', (op: StoreOperation) => op.kind === 'confirm'],
  ])(
    'waits for %s to be committed on a retry, then answers once and records it answered',
    async (_what, kind, losing) => {
      // given a bot whose store loses one commit holding that op
      const { store, lost } = losingOnce(file, losing);
      const channel = new MemoryChannel();
      bot = new Bot({
        channels: [channel],
        agents: [scriptedAgent('support-agent', () => 'on it')],
        store,
        logger: silentLogger,
        capture: { retryBaseMs: 5 },
      });
      await bot.start();

      // when a person asks
      const turn = await channel.receive('@support-agent where is 4711?');
      await bot.idle();
      await bot.settled();

      // then the lost commit was retried, and the person has one answer, recorded as sent
      expect(lost).toEqual([kind]);
      expect(channel.sent.map((sent) => sent.content)).toEqual(['on it']);
      expect(row('SELECT status, error FROM agent_runs WHERE message_id = ?', turn.id)).toEqual({
        status: 'answered',
        error: null,
      });
      expect(
        row('SELECT delivery FROM messages WHERE id = ?', `${turn.id}:support-agent:reply`),
      ).toEqual({ delivery: 'sent' });
    },
  );
});
