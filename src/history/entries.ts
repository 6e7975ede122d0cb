import { MESSAGE_OVERHEAD_TOKENS } from '../assemble/projection.js';
import { SUMMARY_PREFIX } from '../assemble/summary.js';
import type { Tokenizer } from '../tokenizer.js';
import { isoTimestamp } from '../types.js';
import type {
  ConversationScope,
  MessageMetadata,
  NewMessage,
  Participant,
  StoredMessage,
} from '../types.js';

/**
 * A tool call an assistant made: the model's call id, the tool's name and its arguments.
 *
 * @example
 * ```ts
 * const call: ToolCall = { id: 'call_1', name: 'lookup_order', arguments: { orderId: '42' } };
 * ```
 */
export interface ToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

interface EntryBase {
  /** The stored turn's id (a tool entry: the call id it answers; see `messageId`). */
  id: string;
  participant: Participant;
  /** ISO 8601 UTC, as stored. */
  timestamp: string;
}

/** A person's turn, as a history entry. */
export interface UserEntry extends EntryBase {
  role: 'user';
  content: string;
}

/**
 * A turn by the system (participant kind `system`): a platform notice, an instruction you add
 * with `history.addText('system', …)`. Prompts show it as a system message.
 */
export interface SystemEntry extends EntryBase {
  role: 'system';
  content: string;
}

/** An agent's turn: its text, the tool calls it made, and its reasoning when the model gave one. */
export interface AssistantEntry extends EntryBase {
  role: 'assistant';
  content: string;
  calls?: ToolCall[];
  reasoning?: string;
}

/** A tool's result: `id` is the call id it answers; `messageId` the stored row's id. */
export interface ToolEntry extends EntryBase {
  role: 'tool';
  name: string;
  content: string;
  messageId: string;
  /** True when the tool failed and `content` is its error. */
  isError?: boolean;
}

/**
 * One entry of a conversation's history, in the shapes other agent frameworks use: `user`,
 * `assistant` (text, `calls`, `reasoning`), `tool` (the result of a call) and `system`.
 *
 * @example
 * ```ts
 * const entries: HistoryEntry[] = history.getSnapshot().filter((e) => e.role !== 'tool');
 * ```
 */
export type HistoryEntry = UserEntry | AssistantEntry | ToolEntry | SystemEntry;

type Optional<T, K extends keyof T> = Omit<T, K> & Partial<Pick<T, K>>;

/**
 * An entry as `restore` and `addEntry` take it: `id`, `participant` and `timestamp` may be
 * left out (a tool entry's `messageId` too) and are filled in.
 *
 * @example
 * ```ts
 * await history.restore([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }]);
 * ```
 */
export type HistoryEntryInput =
  | Optional<UserEntry, 'id' | 'participant' | 'timestamp'>
  | Optional<AssistantEntry, 'id' | 'participant' | 'timestamp'>
  | Optional<ToolEntry, 'id' | 'participant' | 'timestamp' | 'messageId'>
  | Optional<SystemEntry, 'id' | 'participant' | 'timestamp'>;

/** Where a history's turns are stored when it writes them (`restore`). */
export interface HistoryPlace {
  channelType: string;
  channelId: string;
  threadId?: string;
  scope: ConversationScope;
}

function toolRole(turn: StoredMessage): 'call' | 'result' | undefined {
  const role = turn.metadata['toolRole'];
  return role === 'call' || role === 'result' ? role : undefined;
}

function parseArguments(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}

/**
 * The entries stored turns make, oldest first. Summary rows are left out. An agent's tool
 * call row becomes an assistant entry with that call; rows written together by `restore`
 * (`metadata.entryId`) make one entry again.
 *
 * @example
 * ```ts
 * const entries = rowsToEntries(await store.get(conversationId, { limit: 1000 }));
 * ```
 */
export function rowsToEntries(rows: readonly StoredMessage[]): HistoryEntry[] {
  return sourcedEntries(rows).map((sourced) => sourced.entry);
}

/** An entry and the stored rows it was made from. */
export interface SourcedEntry {
  entry: HistoryEntry;
  rows: StoredMessage[];
}

/** As {@link rowsToEntries}, each entry with the rows it came from. */
export function sourcedEntries(rows: readonly StoredMessage[]): SourcedEntry[] {
  const out: SourcedEntry[] = [];
  const entries = {
    push: (entry: HistoryEntry, row: StoredMessage) => out.push({ entry, rows: [row] }),
  };
  for (const row of rows) {
    if (row.metadata.isSummary === true) continue;
    const base = { participant: row.participant, timestamp: row.timestamp };
    const role = toolRole(row);
    if (role === 'result') {
      const entry: ToolEntry = {
        role: 'tool',
        id: String(row.metadata.toolCallId ?? row.id),
        ...base,
        name: row.metadata.toolName ?? 'unknown',
        content: row.content,
        messageId: row.id,
      };
      if (row.metadata['toolError'] === true) entry.isError = true;
      entries.push(entry, row);
      continue;
    }
    if (role === undefined && row.participant.kind !== 'agent') {
      const speaker = row.participant.kind === 'system' ? 'system' : 'user';
      entries.push({ role: speaker, id: row.id, ...base, content: row.content }, row);
      continue;
    }
    const entryId = row.metadata['entryId'];
    const id = typeof entryId === 'string' ? entryId : row.id;
    const last = out[out.length - 1];
    const previous = last?.entry;
    let entry: AssistantEntry;
    if (previous?.role === 'assistant' && previous.id === id && typeof entryId === 'string') {
      entry = previous;
      last!.rows.push(row);
    } else {
      entry = { role: 'assistant', id, ...base, content: '' };
      entries.push(entry, row);
    }
    if (role === 'call') {
      const call: ToolCall = {
        id: String(row.metadata.toolCallId ?? row.id),
        name: row.metadata.toolName ?? 'unknown',
        arguments: parseArguments(row.content),
      };
      entry.calls = [...(entry.calls ?? []), call];
    } else {
      entry.content = row.content;
      const reasoning = row.metadata['reasoning'];
      if (typeof reasoning === 'string') entry.reasoning = reasoning;
    }
  }
  return out;
}

/**
 * The turns an entry is stored as: one row (an assistant entry with calls: a row for its
 * text, when it has any, and one per call, tied together by `metadata.entryId`).
 */
export function entryToRows(
  entry: HistoryEntry,
  conversationId: string,
  place: HistoryPlace,
): NewMessage[] {
  const metadata = (extra: Partial<MessageMetadata>): MessageMetadata => ({
    channelType: place.channelType,
    channelId: place.channelId,
    ...(place.threadId === undefined ? {} : { threadId: place.threadId }),
    ...extra,
  });
  const row = (id: string, content: string, extra: Partial<MessageMetadata>): NewMessage => ({
    id,
    conversationId,
    participant: entry.participant,
    content,
    timestamp: entry.timestamp,
    scope: place.scope,
    metadata: metadata(extra),
  });
  if (entry.role === 'user' || entry.role === 'system') return [row(entry.id, entry.content, {})];
  if (entry.role === 'tool') {
    return [
      row(entry.messageId, entry.content, {
        toolRole: 'result',
        toolCallId: entry.id,
        toolName: entry.name,
        ...(entry.isError === true ? { toolError: true } : {}),
      }),
    ];
  }
  const calls = entry.calls ?? [];
  const reasoning = entry.reasoning === undefined ? {} : { reasoning: entry.reasoning };
  if (calls.length === 0) return [row(entry.id, entry.content, reasoning)];
  const together = { entryId: entry.id };
  const text =
    entry.content !== '' || entry.reasoning !== undefined
      ? [row(entry.id, entry.content, { ...reasoning, ...together })]
      : [];
  return [
    ...text,
    ...calls.map((call, i) =>
      row(`${entry.id}:call:${i}`, JSON.stringify(call.arguments) ?? 'null', {
        toolRole: 'call',
        toolCallId: call.id,
        toolName: call.name,
        ...together,
      }),
    ),
  ];
}

/**
 * What an entry costs in a prompt, counted as assembly counts: its text (tool calls: name
 * and JSON arguments; tool results: name and output) plus `MESSAGE_OVERHEAD_TOKENS`.
 *
 * @example
 * ```ts
 * entryTokens({ role: 'user', id: '1', participant, timestamp, content: 'hi' }, defaultTokenizer);
 * ```
 */
export function entryTokens(entry: HistoryEntry, tokenizer: Tokenizer): number {
  let tokens = MESSAGE_OVERHEAD_TOKENS + tokenizer.count(entry.content);
  if (entry.role === 'tool') tokens += tokenizer.count(entry.name);
  if (entry.role === 'assistant') {
    for (const call of entry.calls ?? []) {
      tokens += tokenizer.count(call.name) + tokenizer.count(JSON.stringify(call.arguments) ?? '');
    }
  }
  return tokens;
}

/** A frozen copy of an entry (its participant and calls too). */
export function frozenEntry(entry: HistoryEntry): HistoryEntry {
  const copy = { ...entry, participant: Object.freeze({ ...entry.participant }) };
  if (copy.role === 'assistant' && copy.calls !== undefined) {
    copy.calls = Object.freeze(copy.calls.map((call) => Object.freeze({ ...call }))) as ToolCall[];
  }
  return Object.freeze(copy);
}

/**
 * An entry with its id (`<conversation id>:history:<key>`), participant (`user`, `assistant`
 * or `system` by role) and timestamp (now) filled in where `input` leaves them out.
 *
 * @example
 * ```ts
 * completeEntry({ role: 'system', content: 'Be brief.' }, 'console:demo', 1).participant; // { kind: 'system', id: 'system' }
 * ```
 */
export function completeEntry(
  input: HistoryEntryInput,
  conversationId: string,
  key: number | string,
): HistoryEntry {
  const id = input.id ?? `${conversationId}:history:${key}`;
  const timestamp = input.timestamp ?? isoTimestamp();
  const participant = input.participant ?? DEFAULT_PARTICIPANTS[input.role];
  if (input.role === 'tool') {
    return { ...input, id, timestamp, participant, messageId: input.messageId ?? `${id}:result` };
  }
  return { ...input, id, timestamp, participant } as HistoryEntry;
}

const DEFAULT_PARTICIPANTS: Record<HistoryEntry['role'], Participant> = {
  user: { kind: 'user', id: 'user' },
  assistant: { kind: 'agent', id: 'assistant' },
  tool: { kind: 'agent', id: 'assistant' },
  system: { kind: 'system', id: 'system' },
};

/**
 * How a stored summary shows in `History.view()`: a `user` entry from the summarizer.
 *
 * @example
 * ```ts
 * summaryEntry(summaryRow).content; // 'Summary of earlier conversation: …'
 * ```
 */
export function summaryEntry(summary: StoredMessage): HistoryEntry {
  return {
    role: 'user',
    id: summary.id,
    participant: summary.participant,
    timestamp: summary.timestamp,
    content: SUMMARY_PREFIX + summary.content,
  };
}
