import type {
  Agent,
  AgentRunContext,
  ConversationStore,
  Logger,
  NewMessage,
  ReactionChange,
} from 'colloquy';
import { InMemoryConversationStore, StoreError } from 'colloquy';
import type { AgentRun } from '../../../src/runs.js';
import type { CommitResult, StoreOperation } from '../../../src/store.js';

/** An agent whose answers come from a function: no model, for runtime tests. */
export function scriptedAgent(
  name: string,
  answer: (message: NewMessage, ctx: AgentRunContext) => string | Promise<string>,
  extra: Partial<Agent> = {},
): Agent & { runs: NewMessage[] } {
  const runs: NewMessage[] = [];
  return {
    id: name,
    name,
    runs,
    ...extra,
    async run(message, ctx) {
      runs.push(message);
      return { output: await answer(message, ctx), metadata: { model: 'scripted' } };
    },
  };
}

/** A logger that keeps what it was told. */
export function recordingLogger(): Logger & { lines: { level: string; msg: string }[] } {
  const lines: { level: string; msg: string }[] = [];
  const at = (level: string) => (msg: string) => void lines.push({ level, msg });
  return { lines, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** Wraps a store so appends fail while `failing` is true. */
export function flakyStore(
  inner: ConversationStore,
): ConversationStore & { failing: boolean; attempts: number } {
  const state = { failing: true, attempts: 0 };
  const append: ConversationStore['append'] = async (message) => {
    state.attempts++;
    if (state.failing) throw new Error('SQLITE_BUSY: database is locked');
    return inner.append(message);
  };
  // Through commit too: capture hands a store that has one its batches.
  const commit = async (ops: readonly StoreOperation[]): Promise<CommitResult[]> => {
    if (!state.failing) return inner.commit!(ops);
    state.attempts++;
    const error = new StoreError('SQLITE_BUSY: database is locked', { transient: true });
    return ops.map(() => ({ ok: false, error }));
  };
  return new Proxy(inner, {
    get(target, key) {
      if (key === 'append') return append;
      if (key === 'commit' && inner.commit !== undefined) return commit;
      if (key === 'failing' || key === 'attempts') return state[key];
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
    set(_target, key, value) {
      if (key !== 'failing') return false;
      state.failing = value as boolean;
      return true;
    },
  }) as ConversationStore & { failing: boolean; attempts: number };
}

/** A memory store whose next `failing` reactions fail for a passing reason. */
export class FlakyReactions extends InMemoryConversationStore {
  failing = 0;

  override async recordReaction(change: ReactionChange): Promise<boolean> {
    if (this.failing > 0) {
      this.failing--;
      throw new StoreError('cannot record a reaction: the store is busy', { transient: true });
    }
    return super.recordReaction(change);
  }
}

/** A promise with its resolve function, to hold an agent mid-turn. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** The support agent's run on `turn` as a crash leaves it: running, started once, recorded now. */
export function runningOn(turn: NewMessage, fields: Partial<AgentRun> = {}): AgentRun {
  return {
    id: `${turn.id}:support-agent`,
    messageId: turn.id,
    conversationId: turn.conversationId,
    agentId: 'support-agent',
    status: 'running',
    createdAt: new Date().toISOString(),
    attempts: 1,
    ...fields,
  };
}
