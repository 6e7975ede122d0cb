import { randomUUID } from 'node:crypto';
import type { CapturedChange } from '../store.js';
import { ColloquyError, StoreError } from '../errors.js';
import { InMemoryConversationStore } from '../memory-store.js';
import type { ConversationStore } from '../store.js';
import { defaultTokenizer } from '../tokenizer.js';
import type { Tokenizer } from '../tokenizer.js';
import { defaultMetadata, isoTimestamp, type StoredMessage } from '../types.js';
import { coveredThrough, summaryRow } from '../assemble/summary.js';
import { completeEntry, entryToRows, entryTokens, frozenEntry } from './entries.js';
import { rowsToEntries, sourcedEntries, summaryEntry } from './entries.js';
import type {
  HistoryEntry,
  HistoryEntryInput,
  HistoryPlace,
  SourcedEntry,
  ToolEntry,
} from './entries.js';
import type { HistoryEvents, HistoryJSON, HistoryOptions } from './options.js';
export type { HistoryEvents, HistoryJSON, HistoryOptions } from './options.js';
import { PluginHost } from './plugins.js';
import type { HistoryPlugin } from './plugins.js';

const DEFAULT_LIMIT = 10_000;
const DEFAULT_POLL_MS = 1000;

/**
 * One conversation as a live object, over any store: an immutable snapshot of its entries
 * that changes reference only when the conversation changes, listeners told after every
 * captured turn (live from a `Bot`, and from other processes on a shared database by
 * polling), and `reset` / `restore` / JSON to manage it. Get one with `bot.history(id)` or
 * `new History(store, id)`; `await history.ready` before the first snapshot.
 *
 * @example
 * ```ts
 * import { History, InMemoryConversationStore } from 'colloquy';
 * const history = new History(new InMemoryConversationStore(), 'console:demo');
 * await history.restore([{ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' }]);
 * const unsubscribe = history.subscribe(() => console.log(history.length));
 * const copy = History.fromJSON(history.toJSON());
 * unsubscribe();
 * ```
 */
export class History {
  readonly store: ConversationStore;
  readonly conversationId: string;
  /** Resolves once the conversation has been read the first time. */
  readonly ready: Promise<void>;
  readonly #options: HistoryOptions;
  readonly #tokenizer: Tokenizer;
  readonly #subscribers = new Set<() => void>();
  readonly #listeners = new Map<keyof HistoryEvents, Set<(...args: never[]) => void>>();
  readonly #plugins: PluginHost;
  #rows: StoredMessage[] = [];
  #ids = new Set<string>();
  #snapshot: readonly HistoryEntry[] = Object.freeze([]);
  #place: HistoryPlace | undefined;
  #stamp = '';
  #stopWatching: (() => void) | undefined;
  #timer: ReturnType<typeof setInterval> | undefined;
  #polling: Promise<void> | undefined;
  /** Writes and reads run one after another. */
  #queue: Promise<unknown> = Promise.resolve();
  /** Entries `fromJSON` hands the history it is making, instead of a first read. */
  static #seed: readonly HistoryEntry[] | undefined;

  constructor(store: ConversationStore, conversationId: string, options: HistoryOptions = {}) {
    this.store = store;
    this.conversationId = conversationId;
    this.#options = options;
    this.#tokenizer = options.tokenizer ?? defaultTokenizer;
    this.#place = options.place;
    this.#plugins = new PluginHost((error) => this.#emit('pluginError', error));
    const seed = History.#seed;
    History.#seed = undefined;
    if (seed === undefined) this.ready = this.#serial(() => this.#reload());
    else {
      this.#setSnapshot(seed.map(frozenEntry));
      this.ready = this.restore(seed);
    }
  }

  /**
   * A history in a new in-memory store, holding the entries of `json` (from `toJSON`); its
   * snapshot holds them at once.
   */
  static fromJSON(json: HistoryJSON | string, options: HistoryOptions = {}): History {
    const data = (typeof json === 'string' ? JSON.parse(json) : json) as HistoryJSON;
    const store = new InMemoryConversationStore({ maxMessagesPerConversation: DEFAULT_LIMIT });
    const place = data.place ?? options.place;
    History.#seed = data.entries;
    return new History(store, data.conversationId, { ...options, ...(place ? { place } : {}) });
  }

  /** The entries, oldest first: the same frozen array until the conversation changes. */
  getSnapshot(): readonly HistoryEntry[] {
    return this.#snapshot;
  }

  get length(): number {
    return this.#snapshot.length;
  }

  lastEntry(): HistoryEntry | undefined {
    return this.#snapshot[this.#snapshot.length - 1];
  }

  /** What the entries cost in a prompt, counted as assembly counts. */
  get totalTokens(): number {
    return this.#snapshot.reduce((sum, entry) => sum + entryTokens(entry, this.#tokenizer), 0);
  }

  /** The result of a tool call, by the call id (or the result row's id). */
  getToolResult(id: string): ToolEntry | undefined {
    return this.#snapshot.find(
      (entry): entry is ToolEntry =>
        entry.role === 'tool' && (entry.id === id || entry.messageId === id),
    );
  }

  /**
   * Calls `listener` after every turn captured into the conversation, and after `reset` and
   * `restore`. Returns the function that unsubscribes.
   */
  subscribe(listener: () => void): () => void {
    this.#subscribers.add(listener);
    this.#watch();
    return () => {
      this.#subscribers.delete(listener);
      if (this.#subscribers.size === 0 && this.#listenerCount() === 0) this.#unwatch();
    };
  }

  /** Listens to `entry`, `clear` or `pluginError`; returns the function that stops it. */
  on<E extends keyof HistoryEvents>(event: E, listener: HistoryEvents[E]): () => void {
    const set = this.#listeners.get(event) ?? new Set();
    set.add(listener as (...args: never[]) => void);
    this.#listeners.set(event, set);
    if (event !== 'pluginError') this.#watch();
    return () => {
      set.delete(listener as (...args: never[]) => void);
    };
  }

  /**
   * Registers a plugin (see `HistoryPlugin`): `onRegistered` runs now, `afterAdd` on every
   * new entry, and `transform` / `reduce` shape `view()`. Plugins run in registration order;
   * one that throws is reported as `pluginError` and skipped.
   */
  use(plugin: HistoryPlugin): this {
    this.#plugins.use(plugin, this.#pluginContext());
    return this;
  }

  /**
   * The entries as a prompt would show them: the stored summary first (a `user` entry from
   * the summarizer, when a `reduce` wrote one), then the entries it does not cover, through
   * every plugin's `transform` in order. The snapshot and the store are untouched.
   */
  async view(): Promise<HistoryEntry[]> {
    await this.ready;
    const { summary, pending } = await this.#pending();
    const shown = await this.#plugins.transform(
      pending.map((s) => s.entry),
      this.#pluginContext(),
    );
    return summary === undefined ? shown : [summaryEntry(summary), ...shown];
  }

  /**
   * Runs the plugins' `reduce` now, whatever their triggers say (compression: summarise the
   * older entries), and stores the summary it makes. Resolves to what `view()` shows then.
   */
  async reduce(): Promise<HistoryEntry[]> {
    await this.ready;
    const { summary, pending } = await this.#pending();
    const made = await this.#plugins.reduce(
      pending.map((s) => s.entry),
      {
        ...this.#pluginContext(),
        ...(summary === undefined ? {} : { previousSummary: summary.content }),
      },
      true,
    );
    const covered = made && pending.slice(0, made.covers).flatMap((s) => s.rows);
    const last = covered?.reduce<StoredMessage | undefined>(
      (a, b) => ((b.sequence ?? -1) > (a?.sequence ?? -1) ? b : a),
      undefined,
    );
    if (made !== undefined && last?.sequence !== undefined) {
      await this.store.append(summaryRow(this.#summaryFor, made.summary, last, isoTimestamp()));
    }
    return this.view();
  }

  /** The stored summary of this history's reductions, and the entries it does not cover. */
  async #pending(): Promise<{ summary?: StoredMessage; pending: SourcedEntry[] }> {
    const summary = await this.store.getSummary(this.conversationId, this.#summaryFor);
    const through = coveredThrough(summary);
    const rows = this.#rows.filter((row) => (row.sequence ?? Infinity) > through);
    const pending = sourcedEntries(rows);
    return summary === undefined ? { pending } : { summary, pending };
  }

  get #summaryFor(): string {
    return this.#options.summaryFor ?? 'history';
  }

  /** Clears the conversation in the store. Refused while an agent answers in it. */
  async reset(): Promise<void> {
    this.#refuseWhileBusy('reset');
    await this.#serial(async () => {
      await this.#place_();
      await this.store.deleteConversation(this.conversationId);
      this.#rows = [];
      this.#ids = new Set();
      this.#stamp = '';
      this.#setSnapshot([]);
      this.#emit('clear');
      this.#notify();
    });
  }

  /**
   * Adds one entry at the end of the conversation (stored as its turns, like a captured one):
   * subscribers, `entry` listeners and plugins' `afterAdd` hear of it. Left out, `id` is new,
   * `timestamp` now, `participant` by role. Resolves to the entry as the snapshot holds it;
   * a failed write rejects, and the snapshot shows the entry's turns stored before it.
   *
   * @example
   * ```ts
   * const calls = [{ id: 'call_1', name: 'lookup_order', arguments: { orderId: '42' } }];
   * await history.addEntry({ role: 'assistant', content: 'Let me look.', calls });
   * await history.addEntry({ role: 'tool', id: 'call_1', name: 'lookup_order', content: 'shipped' });
   * ```
   */
  async addEntry(input: HistoryEntryInput): Promise<HistoryEntry> {
    return this.#serial(async () => {
      const place = await this.#place_();
      const entry = completeEntry(input, this.conversationId, randomUUID());
      const stored: StoredMessage[] = [];
      try {
        for (const row of entryToRows(entry, this.conversationId, place)) {
          stored.push((await this.store.append(row)).message);
        }
      } finally {
        this.#add(...stored);
      }
      const key = entry.role === 'tool' ? entry.messageId : entry.id;
      return (
        this.#snapshot.findLast((e) => (e.role === 'tool' ? e.messageId : e.id) === key) ??
        frozenEntry(entry)
      );
    });
  }

  /**
   * Adds one text entry: a person's (`user`), the assistant's, or a `system` one (an
   * instruction or notice; prompts show it as a system message). See `addEntry`.
   *
   * @example
   * ```ts
   * await history.addText('system', 'The customer is on the premium plan.');
   * await history.addText('user', 'Can I change my delivery address?');
   * ```
   */
  addText(role: 'user' | 'assistant' | 'system', content: string): Promise<HistoryEntry> {
    return this.addEntry({ role, content });
  }

  /** Replaces the conversation with `entries` (stored as turns). Refused while an agent answers. */
  async restore(entries: readonly HistoryEntryInput[]): Promise<void> {
    this.#refuseWhileBusy('restore');
    await this.#serial(async () => {
      const place = await this.#place_();
      await this.store.deleteConversation(this.conversationId);
      this.#emit('clear');
      let n = 0;
      for (const input of entries) {
        const entry = completeEntry(input, this.conversationId, ++n);
        for (const row of entryToRows(entry, this.conversationId, place)) {
          await this.store.append(row);
        }
      }
      this.#rows = [];
      this.#ids = new Set();
      await this.#reload();
      for (const entry of this.#snapshot) {
        this.#emit('entry', entry);
        await this.#plugins.afterAdd(entry, this.#pluginContext());
      }
      this.#notify();
    });
  }

  /** A copy in a new in-memory store (see `fromJSON`). */
  clone(): History {
    return History.fromJSON(this.toJSON(), { ...this.#options, changes: undefined });
  }

  toJSON(): HistoryJSON {
    return {
      conversationId: this.conversationId,
      ...(this.#place ? { place: this.#place } : {}),
      entries: this.#snapshot.map((entry) => structuredClone(entry) as HistoryEntry),
    };
  }

  /** Reads the conversation again now (what polling does when it sees a change). */
  refresh(): Promise<void> {
    return this.#serial(() => this.#catchUp());
  }

  /** Stops watching the bot and the store. */
  close(): void {
    this.#subscribers.clear();
    this.#listeners.clear();
    this.#unwatch();
  }

  #pluginContext() {
    return { conversationId: this.conversationId, tokenizer: this.#tokenizer };
  }

  #refuseWhileBusy(what: string): void {
    if (this.#options.busy?.() === true) {
      throw new ColloquyError(
        `History.${what}: an agent is answering in ${this.conversationId}; try again once it has`,
        { conversationId: this.conversationId },
      );
    }
  }

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work, work);
    this.#queue = run.catch(() => undefined);
    return run;
  }

  async #place_(): Promise<HistoryPlace> {
    if (this.#place) return this.#place;
    const first = this.#rows[0];
    const meta = first?.metadata ?? defaultMetadata(this.conversationId);
    this.#place = {
      channelType: meta.channelType,
      channelId: meta.channelId,
      ...(meta.threadId === undefined ? {} : { threadId: meta.threadId }),
      scope: first?.scope ?? 'dm',
    };
    return this.#place;
  }

  async #read(): Promise<StoredMessage[]> {
    return this.store.get(this.conversationId, {
      limit: this.#options.limit ?? DEFAULT_LIMIT,
    });
  }

  async #reload(): Promise<void> {
    const rows = await this.#read();
    this.#rows = rows;
    this.#ids = new Set(rows.map((row) => row.id));
    if (this.#place === undefined && rows[0] !== undefined) await this.#place_();
    this.#stamp = await this.#conversationStamp();
    this.#setSnapshot(rowsToEntries(rows).map(frozenEntry));
  }

  /** Reads again; each turn not seen before is added and told, one at a time, in order. */
  async #catchUp(): Promise<void> {
    const rows = await this.#read();
    this.#stamp = await this.#conversationStamp();
    const fresh = rows.filter((row) => !this.#ids.has(row.id));
    const now = new Set(rows.map((row) => row.id));
    const gone = this.#rows.some((row) => !now.has(row.id));
    if (gone) {
      this.#rows = rows;
      this.#ids = now;
      this.#setSnapshot(rowsToEntries(rows).map(frozenEntry));
      this.#notify();
      return;
    }
    for (const row of fresh) this.#add(row);
  }

  /** New stored turns (one, or an entry's): into the snapshot, to plugins, and told. */
  #add(...rows: StoredMessage[]): void {
    const fresh = rows.filter((row) => !this.#ids.has(row.id));
    for (const row of fresh) {
      this.#ids.add(row.id);
      this.#rows.push(row);
    }
    if (fresh.every((row) => row.metadata.isSummary === true)) return;
    const before = this.#snapshot.length;
    this.#setSnapshot(rowsToEntries(this.#rows).map(frozenEntry));
    const entry = this.#snapshot[this.#snapshot.length - 1];
    if (entry !== undefined) {
      if (this.#snapshot.length > before) this.#emit('entry', entry);
      void this.#plugins.afterAdd(entry, this.#pluginContext());
    }
    this.#notify();
  }

  #setSnapshot(entries: HistoryEntry[]): void {
    this.#snapshot = Object.freeze(entries);
  }

  async #conversationStamp(): Promise<string> {
    const summary = await this.store.getConversation(this.conversationId);
    return summary === undefined ? '' : `${summary.messageCount}|${summary.lastMessageAt}`;
  }

  #onChange(change: CapturedChange): void {
    if (change.kind === 'append') {
      if (change.message.conversationId !== this.conversationId) return;
      const row = change.message;
      void this.#serial(async () => this.#add(row));
      return;
    }
    // An edit or a deletion: read again (it may be of another conversation; then nothing moves).
    void this.#serial(async () => {
      const before = this.#rows;
      const rows = await this.#read();
      const same =
        rows.length === before.length &&
        rows.every((row, i) => {
          const old = before[i];
          return (
            old?.id === row.id && old.content === row.content && old.deletedAt === row.deletedAt
          );
        });
      if (same) return;
      this.#rows = rows;
      this.#ids = new Set(rows.map((r) => r.id));
      this.#setSnapshot(rowsToEntries(rows).map(frozenEntry));
      this.#notify();
    });
  }

  #watch(): void {
    if (this.#stopWatching === undefined && this.#options.changes !== undefined) {
      this.#stopWatching = this.#options.changes((change) => this.#onChange(change));
    }
    const every = this.#options.pollIntervalMs ?? DEFAULT_POLL_MS;
    if (this.#timer === undefined && every > 0) {
      this.#timer = setInterval(() => this.#poll(), every);
      this.#timer.unref?.();
    }
  }

  #unwatch(): void {
    this.#stopWatching?.();
    this.#stopWatching = undefined;
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** One cheap look (the conversation's count and last time); reads the turns only if moved. */
  #poll(): void {
    if (this.#polling !== undefined) return;
    this.#polling = this.#serial(async () => {
      try {
        if ((await this.#conversationStamp()) !== this.#stamp) await this.#catchUp();
      } catch (cause) {
        this.#emit(
          'pluginError',
          new StoreError('History: could not look for new turns', {
            cause,
            conversationId: this.conversationId,
          }),
        );
      }
    }).finally(() => (this.#polling = undefined));
  }

  #listenerCount(): number {
    let n = 0;
    for (const [event, set] of this.#listeners) if (event !== 'pluginError') n += set.size;
    return n;
  }

  #notify(): void {
    for (const listener of [...this.#subscribers]) {
      try {
        listener();
      } catch {
        // A subscriber's failure is its own; the others are still told.
      }
    }
  }

  #emit<E extends keyof HistoryEvents>(event: E, ...args: Parameters<HistoryEvents[E]>): void {
    for (const listener of [...(this.#listeners.get(event) ?? [])]) {
      try {
        (listener as (...a: Parameters<HistoryEvents[E]>) => void)(...args);
      } catch {
        // As for subscribers.
      }
    }
  }
}
