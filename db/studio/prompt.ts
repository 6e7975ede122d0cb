import type { ModelMessage } from 'ai';
import {
  assemblePrompt,
  countModelMessageTokens,
  DEFAULT_ASSEMBLER_OPTIONS,
} from '../../src/assemble.js';
import type { ConversationStore, GetOptions } from '../../src/store.js';
import { defaultTokenizer } from '../../src/tokenizer.js';
import type { StoredMessage } from '../../src/types.js';
import type { RunDetail, StudioSource } from './source.js';

/** A prompt as the studio shows it: messages with their token costs. */
export interface ShownPrompt {
  source: 'recorded' | 'rebuilt';
  messages: { role: string; content: string; tokens?: number }[];
  tokens?: number;
  budget?: number;
  /** Anything recorded that is not a message list, shown as JSON. */
  raw?: unknown;
  notes: string[];
}

/**
 * What a run's agent saw: the prompt recorded with the run when the bot kept it, else the
 * prompt rebuilt from the store with the project's own assembly (`assemblePrompt`) as of the
 * inbound turn, with the default options and the aliases learned from the data.
 */
export async function promptOf(source: StudioSource, run: RunDetail): Promise<ShownPrompt> {
  const cut = truncated(run.prompt);
  if (run.prompt !== undefined && cut === undefined) return recorded(run.prompt);
  const inbound = await source.store.getMessage?.(run.conversationId, run.messageId);
  if (inbound === undefined) {
    return {
      source: 'rebuilt',
      messages: [],
      notes: ['the inbound turn is no longer stored (deleted or forgotten): nothing to rebuild'],
    };
  }
  const aliases = await source.agentAliases(run.agentId);
  const prompt = await assemblePrompt(
    asOf(source.store, inbound),
    run.conversationId,
    run.agentId,
    run.agentId,
    {
      agentAliases: aliases,
      currentMessage: inbound,
      now: () => new Date(inbound.timestamp),
    },
  );
  return {
    source: 'rebuilt',
    messages: prompt.messages.map((m) => ({
      role: m.role,
      content: contentText(m),
      tokens: countModelMessageTokens(m, defaultTokenizer),
    })),
    tokens: prompt.tokens,
    budget: DEFAULT_ASSEMBLER_OPTIONS.tokenBudget,
    notes: [
      cut === undefined
        ? 'rebuilt from the store: no prompt was recorded with this run'
        : `rebuilt from the store: the recorded prompt (${cut} bytes) was over the bot's size cap`,
      `assembled with the default options (token budget ${DEFAULT_ASSEMBLER_OPTIONS.tokenBudget}) ` +
        `and the agent's ids found in the data (${aliases.join(', ')}); ` +
        'the bot’s system prompt and its own options are not in the database',
      'turns stored after the inbound turn are left out; edits and deletions made since are not undone',
    ],
  };
}

function recorded(prompt: unknown): ShownPrompt {
  const record =
    typeof prompt === 'object' && prompt !== null ? (prompt as Record<string, unknown>) : {};
  const list = Array.isArray(record['messages']) ? (record['messages'] as unknown[]) : undefined;
  const number = (key: string) =>
    typeof record[key] === 'number' ? (record[key] as number) : undefined;
  const tokens = number('tokens');
  const budget = number('tokenBudget') ?? number('budget');
  if (list === undefined) {
    return {
      source: 'recorded',
      messages: [],
      raw: prompt,
      notes: ['recorded when the run happened'],
    };
  }
  return {
    source: 'recorded',
    messages: list.map((item) => {
      const m = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
      const counted = m['tokens'];
      const role = typeof m['role'] === 'string' ? m['role'] : '?';
      const message = asModelMessage(m);
      try {
        if (message === undefined) throw new TypeError('not a model message');
        return {
          role,
          content: contentText(message),
          tokens:
            typeof counted === 'number'
              ? counted
              : countModelMessageTokens(message, defaultTokenizer),
        };
      } catch {
        // Recorded by another version, or cut: shown as it was stored.
        return { role, content: JSON.stringify(m['content'], null, 2) ?? '' };
      }
    }),
    ...(tokens === undefined ? {} : { tokens }),
    ...(budget === undefined ? {} : { budget }),
    notes: ['recorded when the run happened'],
  };
}

/** The byte size a bot recorded instead of a prompt over its cap (`{ truncated, bytes }`). */
function truncated(prompt: unknown): number | undefined {
  if (typeof prompt !== 'object' || prompt === null) return undefined;
  const p = prompt as Record<string, unknown>;
  return p['truncated'] === true && typeof p['bytes'] === 'number' ? p['bytes'] : undefined;
}

/** A recorded message in the AI SDK's shape (text, or parts that each name their type). */
function asModelMessage(m: Record<string, unknown>): ModelMessage | undefined {
  const content = m['content'];
  if (typeof m['role'] !== 'string') return undefined;
  if (typeof content === 'string') return m as unknown as ModelMessage;
  const parts =
    Array.isArray(content) &&
    content.every((part) => typeof part === 'object' && part !== null && 'type' in part);
  return parts ? (m as unknown as ModelMessage) : undefined;
}

function contentText(message: ModelMessage): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((part) => {
      if (part.type === 'text') return part.text;
      if (part.type === 'tool-call')
        return `[tool call ${part.toolName}] ${JSON.stringify(part.input)}`;
      if (part.type === 'tool-result') {
        const output = part.output;
        const value = 'value' in output ? output.value : output.type;
        return `[tool result ${part.toolName}] ${typeof value === 'string' ? value : JSON.stringify(value)}`;
      }
      return `[${part.type}]`;
    })
    .join('\n');
}

/**
 * The store as it stood when `inbound` arrived, for reading: turns and summaries stored after
 * it are not returned. Writes go to the (read-only) store and fail there; none is made, as
 * no summarizer is passed.
 */
function asOf(store: ConversationStore, inbound: StoredMessage): ConversationStore {
  const seq = inbound.sequence ?? Number.MAX_SAFE_INTEGER;
  const before = new Date(Date.parse(inbound.timestamp) + 1).toISOString();
  const earlier = (turns: StoredMessage[]) => turns.filter((t) => (t.sequence ?? 0) <= seq);
  const get = async (conversationId: string, options: GetOptions = {}) =>
    earlier(await store.get(conversationId, { ...options, before }));
  const getSummary = async (conversationId: string, agentId: string) => {
    const newest = await store.getSummary(conversationId, agentId);
    if (newest === undefined || (newest.sequence ?? 0) <= seq) return newest;
    const rows = earlier(
      await store.get(conversationId, { before, includeSummaries: true, limit: 500 }),
    );
    return rows.filter((t) => t.metadata.summaryForAgentId === agentId).at(-1);
  };
  return new Proxy(store, {
    get(target, property) {
      if (property === 'get') return get;
      if (property === 'getSummary') return getSummary;
      const value: unknown = Reflect.get(target, property, target);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}
