import { maskedToolResultNote, RECALL_TOOL_NAME } from '../assemble/projection.js';
import type { Summarizer } from '../assemble/summary.js';
import { defaultTokenizer } from '../tokenizer.js';
import { defaultMetadata } from '../types.js';
import type { StoredMessage } from '../types.js';
import { entryToRows, entryTokens } from './entries.js';
import type { HistoryPlugin, Reduction } from './plugins.js';

/**
 * How `toolResultMasking` chooses what to mask.
 *
 * @example
 * ```ts
 * const options: ToolResultMaskingOptions = { keepRecent: 2, minTokensToMask: 200, exclude: ['get_weather'] };
 * ```
 */
export interface ToolResultMaskingOptions {
  /** How many of the newest maskable results stay in full (default 2). */
  keepRecent?: number;
  /** Results under this many tokens are never masked and use no keep-recent slot (default 200). */
  minTokensToMask?: number;
  /** Only results of these tools are masked (default: every tool). Not with `exclude`. */
  include?: readonly string[];
  /** Results of these tools are never masked and use no keep-recent slot. Not with `include`. */
  exclude?: readonly string[];
}

/**
 * The built-in masking plugin (a `transform`): an older, large tool result is replaced in the
 * prompt by `maskedToolResultNote(id, tokens)`, which names the retrieve tool
 * (`recall_tool_result`, built into `BaseAgent`) and the stored row to read back. The store
 * keeps the full result. Small results and excluded tools keep their text and use no
 * keep-recent slot. An agent with no masking plugin masks with `assemblerOptions`'
 * `toolResultsInFull` / `maskToolResultsOverTokens`. Given both `include` and `exclude`, it
 * throws a `RangeError`: name the tools to mask, or the tools to keep, not both.
 *
 * @example
 * ```ts
 * import { toolResultMasking } from 'colloquy';
 * agent.use(toolResultMasking({ keepRecent: 1, minTokensToMask: 100, exclude: ['get_weather'] }));
 * ```
 */
export function toolResultMasking(options: ToolResultMaskingOptions = {}): HistoryPlugin & {
  readonly retrieveTool: string;
} {
  if (options.include !== undefined && options.exclude !== undefined) {
    throw new RangeError(
      'toolResultMasking: give include (the only tools to mask) or exclude (tools never masked), not both',
    );
  }
  const keepRecent = options.keepRecent ?? 2;
  const minTokens = options.minTokensToMask ?? 200;
  const include = options.include && new Set(options.include);
  const exclude = new Set(options.exclude ?? []);
  return {
    name: 'tool-result-masking',
    retrieveTool: RECALL_TOOL_NAME,
    transform(entries, ctx) {
      const tokenizer = ctx.tokenizer ?? defaultTokenizer;
      const out = [...entries];
      let kept = 0;
      for (let i = out.length - 1; i >= 0; i--) {
        const entry = out[i];
        if (entry?.role !== 'tool') continue;
        if (exclude.has(entry.name) || (include !== undefined && !include.has(entry.name))) {
          continue;
        }
        const tokens = tokenizer.count(entry.content);
        if (tokens < minTokens) continue;
        if (++kept <= keepRecent) continue;
        out[i] = { ...entry, content: maskedToolResultNote(entry.messageId, tokens) };
      }
      return out;
    },
  };
}

/**
 * When `rollingCompression` summarises. With no trigger given, `maxEntries: 40`.
 *
 * @example
 * ```ts
 * const options: RollingCompressionOptions = { summarizer, maxTokens: 2000, keepRecent: 10 };
 * ```
 */
export interface RollingCompressionOptions {
  /** Writes the summary (a `SummarizerAgent`, or any `Summarizer`). */
  summarizer: Summarizer;
  /** Summarise once the entries not yet summarised cost more than this many tokens. */
  maxTokens?: number;
  /** Summarise once there are more than this many entries not yet summarised. */
  maxEntries?: number;
  /** Summarise the entries older than this many minutes. */
  olderThan?: number;
  /** How many of the newest entries stay verbatim when summarising (default 10). */
  keepRecent?: number;
}

/**
 * The built-in compression plugin (a `reduce`): once a trigger fires (`maxTokens`,
 * `maxEntries`, `olderThan` minutes), or on a manual `history.reduce()`, the older entries are
 * folded into one rolling summary (stored as a summary row, as `assemblerOptions`'
 * `rollingSummaryThreshold` does, which stays the default for agents without this plugin).
 * The newest `keepRecent` entries stay verbatim; a tool result is never parted from its call.
 *
 * @example
 * ```ts
 * import { rollingCompression, SummarizerAgent } from 'colloquy';
 * agent.use(rollingCompression({ summarizer: new SummarizerAgent({ model }), maxTokens: 1500 }));
 * ```
 */
export function rollingCompression(options: RollingCompressionOptions): HistoryPlugin {
  const keepRecent = Math.max(0, options.keepRecent ?? 10);
  const noTrigger =
    options.maxTokens === undefined &&
    options.maxEntries === undefined &&
    options.olderThan === undefined;
  const maxEntries = options.maxEntries ?? (noTrigger ? 40 : undefined);
  return {
    name: 'rolling-compression',
    async reduce(entries, ctx): Promise<Reduction | undefined> {
      let covers = 0;
      const fired =
        ctx.force ||
        (maxEntries !== undefined && entries.length > maxEntries) ||
        (options.maxTokens !== undefined &&
          entries.reduce((sum, e) => sum + entryTokens(e, ctx.tokenizer), 0) > options.maxTokens);
      if (fired) covers = Math.max(0, entries.length - keepRecent);
      if (options.olderThan !== undefined) {
        const cutoff = ctx.now.getTime() - options.olderThan * 60_000;
        const old = entries.findIndex((e) => Date.parse(e.timestamp) >= cutoff);
        covers = Math.max(covers, old === -1 ? entries.length : old);
      }
      // A tool result goes with its call: never start the verbatim part with a result.
      while (covers < entries.length && entries[covers]?.role === 'tool') covers++;
      if (covers === 0) return undefined;
      const turns = entries
        .slice(0, covers)
        .flatMap((entry) => entryToRows(entry, ctx.conversationId, placeOf(ctx.conversationId)))
        .map((row) => row as StoredMessage);
      const summary = await options.summarizer.summarize({
        agentId: ctx.agentId ?? 'history',
        agentName: ctx.agentId ?? 'history',
        conversationId: ctx.conversationId,
        ...(ctx.previousSummary === undefined ? {} : { previousSummary: ctx.previousSummary }),
        turns,
      });
      return { covers, summary };
    },
  };
}

function placeOf(conversationId: string) {
  return { ...defaultMetadata(conversationId), scope: 'dm' as const };
}

/** True for a plugin that masks tool results (so the assembler's default masking stands aside). */
export function isMaskingPlugin(plugin: HistoryPlugin): boolean {
  return plugin.name === 'tool-result-masking';
}
