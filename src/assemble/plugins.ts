import type { ColloquyError } from '../errors.js';
import { isMaskingPlugin, toolResultMasking } from '../history/builtins.js';
import { entryToRows, sourcedEntries } from '../history/entries.js';
import type { HistoryEntry, SourcedEntry } from '../history/entries.js';
import { PluginHost } from '../history/plugins.js';
import type { HistoryPlugin } from '../history/plugins.js';
import type { ConversationStore } from '../store.js';
import type { Tokenizer } from '../tokenizer.js';
import type { StoredMessage } from '../types.js';
import { readableBy } from '../visibility.js';
import { storeSummary } from './summary.js';

/** What the plugin pass of prompt assembly works with. */
export interface PluginPassInput {
  store: ConversationStore;
  conversationId: string;
  agentId: string;
  /** The turns not yet covered by the agent's summary, oldest first. */
  rows: StoredMessage[];
  plugins: readonly HistoryPlugin[];
  /** The masking every prompt gets when no masking plugin is registered. */
  masking: { keepRecent: number; overTokens: number };
  previousSummary: StoredMessage | undefined;
  tokenizer: Tokenizer;
  now: Date;
  report(error: ColloquyError): void;
}

/** The turns the prompt shows, and the summary a `reduce` stored (when one did). */
export interface PluginPassOutput {
  rows: StoredMessage[];
  /** True when a plugin can reduce: the default summary rule then stands aside. */
  reduces: boolean;
  summary?: StoredMessage;
}

/**
 * Runs the agent's plugins over the turns (as `HistoryEntry`s): first `reduce` (the first
 * plugin that folds the oldest entries into a summary, stored as the agent's rolling summary
 * row), then every `transform` in order, the default tool-result masking first unless a
 * masking plugin is registered. Returns the turns the transformed entries stand for: a
 * changed `content` replaces the text of its row, a new entry becomes new rows.
 */
export async function pluginPass(input: PluginPassInput): Promise<PluginPassOutput> {
  const host = new PluginHost((error) => input.report(error));
  if (!input.plugins.some(isMaskingPlugin)) {
    host.plugins.push(
      toolResultMasking({
        keepRecent: input.masking.keepRecent,
        minTokensToMask: input.masking.overTokens + 1,
      }),
    );
  }
  host.plugins.push(...input.plugins);
  const ctx = {
    conversationId: input.conversationId,
    agentId: input.agentId,
    tokenizer: input.tokenizer,
    now: input.now,
  };
  let sourced = sourcedEntries(input.rows);
  let summary: StoredMessage | undefined;
  if (host.reduces) {
    // The summary is read by everyone: it folds in only the turns everyone may read.
    const open = sourced.filter((s) => s.rows.every((row) => readableBy(row, undefined)));
    const previous = input.previousSummary?.content;
    const made = await host.reduce(
      open.map((s) => s.entry),
      previous === undefined ? ctx : { ...ctx, previousSummary: previous },
      false,
    );
    const folded = new Set(made ? open.slice(0, made.covers) : []);
    const last = newest([...folded].flatMap((s) => s.rows));
    if (made !== undefined && last !== undefined) {
      summary = await storeSummary(input, made.summary, last, input.now.toISOString());
      sourced = sourced.filter((s) => !folded.has(s));
    }
  }
  const shown = await host.transform(
    sourced.map((s) => s.entry),
    ctx,
  );
  const rows = rowsFor(shown, sourced, input);
  return summary === undefined
    ? { rows, reduces: host.reduces }
    : { rows, reduces: host.reduces, summary };
}

function newest(rows: StoredMessage[]): StoredMessage | undefined {
  let last: StoredMessage | undefined;
  for (const row of rows) {
    if (row.sequence !== undefined && (last?.sequence ?? -1) < row.sequence) last = row;
  }
  return last;
}

function keyOf(entry: HistoryEntry): string {
  return entry.role === 'tool' ? `tool:${entry.messageId}` : `${entry.role}:${entry.id}`;
}

/** The rows transformed entries stand for (see {@link pluginPass}). */
function rowsFor(
  entries: readonly HistoryEntry[],
  sourced: readonly SourcedEntry[],
  input: PluginPassInput,
): StoredMessage[] {
  const sources = new Map(sourced.map((s) => [keyOf(s.entry), s.rows]));
  const first = input.rows[0];
  const place = {
    channelType: first?.metadata.channelType ?? 'custom',
    channelId: first?.metadata.channelId ?? input.conversationId,
    scope: first?.scope ?? 'dm',
  };
  return entries.flatMap((entry) => {
    const rows = sources.get(keyOf(entry));
    if (rows === undefined) {
      return entryToRows(entry, input.conversationId, place) as StoredMessage[];
    }
    return rows.map((row) =>
      row.metadata['toolRole'] !== 'call' && row.content !== entry.content
        ? { ...row, content: entry.content }
        : row,
    );
  });
}
