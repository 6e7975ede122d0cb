import { messageOf } from '../errors.js';
import { ColloquyError } from '../errors.js';
import type { Tokenizer } from '../tokenizer.js';
import type { HistoryEntry } from './entries.js';

/**
 * What a plugin is told about where it runs.
 *
 * @example
 * ```ts
 * const plugin: HistoryPlugin = { name: 'log', afterAdd: (entry, ctx) => console.log(ctx.conversationId, entry.role) };
 * ```
 */
export interface PluginContext {
  conversationId: string;
  /** Counts tokens as prompt assembly does. */
  tokenizer?: Tokenizer;
  /** The agent whose prompt is being assembled (absent on a `History`). */
  agentId?: string;
}

/** What `reduce` is told besides the context. */
export interface ReduceContext extends PluginContext {
  tokenizer: Tokenizer;
  /** True for a manual `reduce()`: act whatever the triggers say. */
  force: boolean;
  /** The summary stored so far, to fold into the new one. */
  previousSummary?: string;
  /** The clock. */
  now: Date;
}

/**
 * What a `reduce` did: `summary` replaces the oldest `covers` entries (the originals stay
 * stored; the summary is stored as a rolling-summary row).
 *
 * @example
 * ```ts
 * const reduction: Reduction = { covers: 30, summary: 'Alice asked about order 42…' };
 * ```
 */
export interface Reduction {
  covers: number;
  summary: string;
}

/**
 * A plugin on prompt assembly, registered with `agent.use(plugin)` or `history.use(plugin)`.
 * Every hook is optional; plugins run in registration order; a hook that throws is reported
 * (a `PluginError`: `pluginError` on a History, `bot.catch` for an agent) and skipped, so it
 * never breaks a turn.
 *
 * - `onRegistered`: once, when registered.
 * - `afterAdd`: after an entry comes in (a History: every new entry; an agent: the turn it
 *   answers).
 * - `transform`: read-time and lossless (the store is untouched): returns the entries the
 *   prompt shows, e.g. with large tool results masked. It may drop entries, change their
 *   `content`, or add new ones.
 * - `reduce`: may fold the oldest entries into a stored summary (compression). The first
 *   plugin that returns a `Reduction` wins.
 *
 * @example
 * ```ts
 * const redact: HistoryPlugin = {
 *   name: 'redact-card-numbers',
 *   transform: (entries) =>
 *     entries.map((e) => ({ ...e, content: e.content.replace(/\d{16}/g, '[card]') })),
 * };
 * agent.use(redact);
 * ```
 */
export interface HistoryPlugin {
  readonly name: string;
  onRegistered?(ctx: PluginContext): void | Promise<void>;
  afterAdd?(entry: HistoryEntry, ctx: PluginContext): void | Promise<void>;
  transform?(entries: HistoryEntry[], ctx: PluginContext): HistoryEntry[] | Promise<HistoryEntry[]>;
  reduce?(
    entries: HistoryEntry[],
    ctx: ReduceContext,
  ): Reduction | undefined | Promise<Reduction | undefined>;
}

/**
 * A plugin's hook threw: reported with the plugin's name and the hook, the turn goes on.
 *
 * @example
 * ```ts
 * bot.catch((err) => { if (err instanceof PluginError) console.warn(err.plugin, err.hook); });
 * ```
 */
export class PluginError extends ColloquyError {
  override name = 'PluginError';
  constructor(
    readonly plugin: string,
    readonly hook: string,
    options: { cause: unknown; conversationId?: string },
  ) {
    super(`plugin ${plugin} failed in ${hook}: ${messageOf(options.cause)}`, options);
  }
}

/** Runs a list of plugins' hooks in order, each failure reported and skipped. */
export class PluginHost {
  readonly plugins: HistoryPlugin[] = [];

  constructor(private readonly report: (error: PluginError) => void) {}

  use(plugin: HistoryPlugin, ctx: PluginContext): void {
    this.plugins.push(plugin);
    void this.#call(plugin, 'onRegistered', ctx, () => plugin.onRegistered?.(ctx));
  }

  async afterAdd(entry: HistoryEntry, ctx: PluginContext): Promise<void> {
    for (const plugin of this.plugins) {
      if (plugin.afterAdd === undefined) continue;
      await this.#call(plugin, 'afterAdd', ctx, () => plugin.afterAdd?.(entry, ctx));
    }
  }

  async transform(entries: HistoryEntry[], ctx: PluginContext): Promise<HistoryEntry[]> {
    let out = entries;
    for (const plugin of this.plugins) {
      if (plugin.transform === undefined) continue;
      const next = await this.#call(plugin, 'transform', ctx, () => plugin.transform?.(out, ctx));
      if (Array.isArray(next)) out = next;
    }
    return out;
  }

  /** The first reduction a plugin makes; `undefined` when none did. */
  async reduce(
    entries: HistoryEntry[],
    ctx: Omit<ReduceContext, 'force' | 'now'> & { now?: Date },
    force: boolean,
  ): Promise<Reduction | undefined> {
    const full: ReduceContext = { ...ctx, force, now: ctx.now ?? new Date() };
    for (const plugin of this.plugins) {
      if (plugin.reduce === undefined) continue;
      const made = await this.#call(plugin, 'reduce', ctx, () => plugin.reduce?.(entries, full));
      if (made !== undefined && made.covers > 0) return made;
    }
    return undefined;
  }

  get reduces(): boolean {
    return this.plugins.some((plugin) => plugin.reduce !== undefined);
  }

  async #call<T>(
    plugin: HistoryPlugin,
    hook: string,
    ctx: PluginContext,
    run: () => T | Promise<T>,
  ): Promise<T | undefined> {
    try {
      return await run();
    } catch (cause) {
      this.report(
        new PluginError(plugin.name, hook, { cause, conversationId: ctx.conversationId }),
      );
      return undefined;
    }
  }
}
