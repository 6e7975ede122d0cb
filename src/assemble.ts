/**
 * Prompt assembly: an agent's LLM prompt, built from the conversation store.
 *
 * - **What is read.** With `addressedOnlyMode` (the default) the store itself returns only the
 *   turns that concern the agent (`GetOptions.concerning`): never "load the latest N, then
 *   filter", so in a busy channel the agent still sees its own last exchanges. With a
 *   `currentMessage`, only the turns up to it are read: the prompt is in chronological order.
 *   A turn that hands the conversation to the agent by @mention brings the turns it names
 *   along (`metadata.handoffTurns`: the turn that started it, the handing agent's tool rows).
 * - **The budget.** `tokenBudget` covers the whole history: the current message, the rolling
 *   summary and the turns, each message costing its text (speaker prefix included; tool calls
 *   their name and JSON input; tool results their name and output) plus
 *   `MESSAGE_OVERHEAD_TOKENS`. The `systemPrompt` sits outside it. Priority: the current
 *   message (always kept, cut down if it must be), then the summary (cut down if it must be),
 *   then turns newest to oldest until one does not fit; that one is cut down (with
 *   `TRUNCATION_MARKER`) when at least 16 tokens of it fit, and the history ends there.
 * - **Tool use.** The agent's tool-call rows (`metadata.toolRole` `call` / `result`, linked by
 *   `toolCallId`) become an assistant `tool-call` part and a `tool` message with its result,
 *   always together. Results older than the newest `toolResultsInFull` and larger than
 *   `maskToolResultsOverTokens` are replaced by `maskedToolResultNote(resultRowId, tokens)`
 *   (the `toolResultMasking` plugin; register your own to choose); a pair that does not fit
 *   is tried masked, then dropped whole.
 * - **Plugins.** `plugins` run over the turns as `HistoryEntry`s: `reduce` (compression),
 *   then `transform`; one that throws goes to `onError` as a `PluginError` and is skipped.
 * - **Rolling summaries.** When more than `rollingSummaryThreshold` loaded turns are not yet
 *   covered by the agent's summary, the older ones are summarised: all but the newest turns
 *   that fit the budget, of which at most half the threshold stay verbatim. The summary is
 *   stored as its own row (`summaryRowId`, `metadata.isSummary`, `summaryForAgentId`,
 *   `summaryThroughSequence`) and reused until the threshold is passed again. Turns older
 *   than `maxTurnsToLoad` relevant turns are never read, so never summarised. Originals are
 *   never deleted. The summary is shown whatever `scope` and `timeWindowMinutes` say: it
 *   belongs to the agent and the conversation.
 * - **Files.** Every file a turn carries reads as a placeholder in its text
 *   (`[image: box.jpg, 240 KB]`). With `attachments`, the images and text files of the
 *   people's turns in the prompt (these turns only) also go to the model as message parts,
 *   fetched through their channel, the current turn's first, within `maxCount` and the sizes.
 * - **Failures.** A store that cannot be read, or a summarizer or summary write that fails,
 *   goes to `onError` (`StoreError` / `AgentError`, with `cause`); the prompt is still built.
 */
import type { ModelMessage } from 'ai';
import { withAttachments } from './assemble/attachments.js';
import type { PromptAttachments } from './assemble/attachments.js';
import { fitCurrent, fitSummary, fitUnits } from './assemble/budget.js';
import type { FittedUnit } from './assemble/budget.js';
import { pluginPass } from './assemble/plugins.js';
import { projectTurn, projectTurns, unitTurns } from './assemble/projection.js';
import type { Unit } from './assemble/projection.js';
import { withHandoffs } from './assemble/handoffs.js';
import { loadSummary, loadTurns, upTo, withThreadParent } from './assemble/load.js';
import { readableBy } from './visibility.js';
import type { Context } from './assemble/load.js';
import { coveredThrough, storeSummary, SUMMARY_PREFIX } from './assemble/summary.js';
import type { Summarizer } from './assemble/summary.js';
import { AgentError } from './errors.js';
import type { ColloquyError } from './errors.js';
import type { HistoryPlugin } from './history/plugins.js';
import type { ConversationStore } from './store.js';
import { defaultTokenizer } from './tokenizer.js';
import type { Tokenizer } from './tokenizer.js';
import type { ConversationScope, NewMessage, StoredMessage } from './types.js';

export {
  countModelMessageTokens,
  maskedToolResultNote,
  MESSAGE_OVERHEAD_TOKENS,
  RECALL_TOOL_NAME,
} from './assemble/projection.js';
export { TRUNCATION_MARKER } from './assemble/budget.js';
export { SUMMARIZER_PARTICIPANT_ID, SUMMARY_PREFIX, summaryRowId } from './assemble/summary.js';
export type { SummarizeInput, Summarizer } from './assemble/summary.js';

/**
 * How `assemblePrompt` chooses and shapes the history. Every field is optional.
 *
 * @example
 * ```ts
 * const options: AssemblerOptions = { tokenBudget: 2000, agentAliases: ['@orders_bot'] };
 * ```
 */
export interface AssemblerOptions {
  /** Only turns of this scope. */
  scope?: ConversationScope;
  /**
   * Most tokens the history may cost: summary, turns (with speaker prefixes, tool calls and
   * results) and the current message, each plus `MESSAGE_OVERHEAD_TOKENS`. The system prompt
   * is not part of it. Default 3000; at least 16.
   */
  tokenBudget?: number;
  /** Load only the turns that concern the agent, filtered by the store (default true). */
  addressedOnlyMode?: boolean;
  /** Summarise once more than this many turns are not yet covered by a summary (default 40). */
  rollingSummaryThreshold?: number;
  /** Only turns newer than now minus this many minutes. */
  timeWindowMinutes?: number;
  /** Most turns read from the store (default 100). */
  maxTurnsToLoad?: number;
  /** Further names the agent goes by (bot user ids, @username); its id and name always count. */
  agentAliases?: readonly string[];
  /** Counts and cuts tokens (default `defaultTokenizer`). */
  tokenizer?: Tokenizer;
  /**
   * The inbound turn being answered: always included last, stored or not. The history holds
   * only the turns written before it, so a turn of a burst is answered from what preceded it.
   */
  currentMessage?: NewMessage;
  /** The clock, for the time window and summary timestamps. */
  now?: () => Date;
  /** Instructions placed first as a system message, outside the token budget. */
  systemPrompt?: string;
  /** How many of the newest tool results are always shown in full (default 2). */
  toolResultsInFull?: number;
  /** Older tool results above this many tokens are masked (default 200). */
  maskToolResultsOverTokens?: number;
  /**
   * Plugins on the history (see `HistoryPlugin`), in order: `reduce` (compression; with one,
   * `rollingSummaryThreshold` stands aside), then `transform`. Without a masking plugin the
   * default masking (`toolResultsInFull`, `maskToolResultsOverTokens`) runs first.
   */
  plugins?: readonly HistoryPlugin[];
  /**
   * Set when the agent runs a task another agent delegated to it (see `delegate`): it also
   * sees what concerns the delegating agent (the person's original request, that agent's
   * tool results), and never the rows of other delegations.
   */
  delegation?: { id: string; delegatorAliases: readonly string[] };
  /** Hears about a store, summarizer or plugin failure that assembly worked around. */
  onError?: (error: ColloquyError) => void;
  /**
   * Gives the model the images and text files of the people's turns in the prompt, fetched
   * with `fetch` within the limits (see `AttachmentOptions`); without it every file is a
   * placeholder in its turn's text. Given files are outside `tokenBudget` (their placeholders
   * are in it); a file that cannot be fetched is reported to `onError` and stays a placeholder.
   */
  attachments?: PromptAttachments;
}

/**
 * What `assemblePrompt` produced.
 *
 * @example
 * ```ts
 * const { messages, tokens, turns, summary } = await assemblePrompt(store, id, 'support', 'Support');
 * ```
 */
export interface AssembledPrompt {
  /** System prompt, summary, history and current message, ready for `generateText`. */
  messages: ModelMessage[];
  /** What the history cost against the budget (the system prompt excluded). */
  tokens: number;
  /** The turns included, oldest first, the current message last. */
  turns: StoredMessage[];
  /** The rolling summary included at the start of the history, when there was one. */
  summary?: StoredMessage;
}

/**
 * The defaults `assemblePrompt` uses for options left out.
 *
 * @example
 * ```ts
 * import { DEFAULT_ASSEMBLER_OPTIONS } from 'colloquy';
 * DEFAULT_ASSEMBLER_OPTIONS.tokenBudget; // 3000
 * ```
 */
export const DEFAULT_ASSEMBLER_OPTIONS: Readonly<Required<Pick<AssemblerOptions, Defaulted>>> = {
  tokenBudget: 3000,
  addressedOnlyMode: true,
  rollingSummaryThreshold: 40,
  maxTurnsToLoad: 100,
  toolResultsInFull: 2,
  maskToolResultsOverTokens: 200,
};

type Defaulted =
  | 'tokenBudget'
  | 'addressedOnlyMode'
  | 'rollingSummaryThreshold'
  | 'maxTurnsToLoad'
  | 'toolResultsInFull'
  | 'maskToolResultsOverTokens';
type Resolved = AssemblerOptions & Required<Pick<AssemblerOptions, Defaulted>>;

/**
 * Builds an agent's prompt from the store: the turns that concern it (filtered by the store),
 * seen from its point of view, newest first into the token budget, with a rolling summary of
 * what no longer fits. Store and summarizer failures never fail assembly: they go to
 * `options.onError` and the prompt is built from what is left (at least the current message).
 *
 * @example
 * ```ts
 * import { assemblePrompt } from 'colloquy';
 * import { generateText } from 'ai';
 * const prompt = await assemblePrompt(store, 'slack:T1:C1', 'support', 'Support', {
 *   agentAliases: ['slack:U0BOT'],
 *   currentMessage: inbound,
 *   systemPrompt: 'You answer questions about orders.',
 * });
 * const { text } = await generateText({ model, messages: prompt.messages, allowSystemInMessages: true });
 * ```
 */
export async function assemblePrompt(
  store: ConversationStore,
  conversationId: string,
  agentId: string,
  agentName: string,
  options: AssemblerOptions = {},
  summarizer?: Summarizer,
): Promise<AssembledPrompt> {
  const o: Resolved = {
    ...DEFAULT_ASSEMBLER_OPTIONS,
    ...budgetFromEnv(),
    ...withoutUndefined(options),
  };
  validate(o);
  const ctx: Context = {
    store,
    conversationId,
    agentId,
    agentName,
    tokenizer: o.tokenizer ?? defaultTokenizer,
    now: o.now ?? (() => new Date()),
    report: (error) => o.onError?.(error),
  };
  const aliases = new Set([agentId, agentName, ...(o.agentAliases ?? [])]);
  const current = o.currentMessage;

  const delegators = new Set(o.delegation?.delegatorAliases ?? []);
  const readFor = new Set([...aliases, ...delegators]);
  const [read, existing] = await Promise.all([loadTurns(ctx, readFor, o), loadSummary(ctx)]);
  const withParent = await withThreadParent(ctx, read, current);
  const chains = await withHandoffs(ctx, withParent, current, aliases);
  // A turn shown to one person only is read only when answering that person.
  const loaded = upTo(current, chains.turns).filter((turn) =>
    readableBy(turn, current?.participant),
  );
  const through = coveredThrough(existing.summary);
  const seen = seesDelegation(aliases, o.delegation?.id);
  const pending = loaded.filter(
    (turn) =>
      turn.metadata.isSummary !== true &&
      turn.id !== current?.id &&
      !coveredBy(through, turn) &&
      seen(turn),
  );
  const passed = await pluginPass({
    store,
    conversationId,
    agentId,
    rows: pending,
    plugins: o.plugins ?? [],
    masking: { keepRecent: o.toolResultsInFull, overTokens: o.maskToolResultsOverTokens },
    previousSummary: existing.summary,
    tokenizer: ctx.tokenizer,
    now: ctx.now(),
    report: ctx.report,
  });
  let units = projectTurns(passed.rows, aliases, (row) => {
    if (chains.handed.has(row.id)) return true;
    const delegatedBy = row.metadata['delegatedBy'];
    const inDelegation = row.metadata['delegationId'] !== undefined;
    if (inDelegation) return typeof delegatedBy === 'string' && aliases.has(delegatedBy);
    return delegators.has(row.participant.id);
  });

  const currentFit =
    current === undefined
      ? undefined
      : fitCurrent(projectTurn(current, aliases), o.tokenBudget, ctx.tokenizer);
  const room = o.tokenBudget - (currentFit?.tokens ?? 0);
  let summary = passed.summary ?? existing.summary;
  let plan = fitHistory(summary, units, room, ctx.tokenizer);

  const pendingTurns = units.reduce((n, unit) => n + unitTurns(unit).length, 0);
  const summaryDue = pendingTurns > o.rollingSummaryThreshold && !passed.reduces;
  if (summarizer !== undefined && existing.ok && summaryDue) {
    const split = splitForSummary(units, plan.fitted, Math.floor(o.rollingSummaryThreshold / 2));
    const created = split && (await summarize(ctx, summarizer, summary, split.older));
    if (split && created) {
      summary = created;
      units = split.newer;
      plan = fitHistory(summary, units, room, ctx.tokenizer);
    }
  }

  const history = [...(plan.summary ? [plan.summary] : []), ...plan.fitted];
  const currentTurn = current && (loaded.find((turn) => turn.id === current.id) ?? current);
  const shown = [...history, ...(currentFit ? [currentFit] : [])];
  const given = o.attachments ? await withAttachments(shown, o.attachments, ctx.report) : shown;
  return {
    messages: [
      ...(o.systemPrompt === undefined
        ? []
        : [{ role: 'system', content: o.systemPrompt } as const]),
      ...given.flatMap((fitted) => fitted.messages),
    ],
    tokens: o.tokenBudget - room + history.reduce((n, fitted) => n + fitted.tokens, 0),
    turns: [
      ...plan.fitted.flatMap((fitted) => unitTurns(fitted.unit)),
      ...(currentTurn ? [currentTurn] : []),
    ],
    ...(plan.summary && summary ? { summary } : {}),
  };
}

/**
 * Which rows of delegations an agent sees: a delegate (running `delegationId`) sees its own
 * task's rows and none of other delegations'; the agent that delegated sees its delegates'
 * rows, except an answer it already has as its `delegate` tool's result.
 */
function seesDelegation(aliases: ReadonlySet<string>, delegationId: string | undefined) {
  return (turn: StoredMessage): boolean => {
    const { metadata } = turn;
    const id = metadata['delegationId'];
    if (id === undefined || aliases.has(turn.participant.id)) return true;
    const delegatedBy = metadata['delegatedBy'];
    const mine = typeof delegatedBy === 'string' && aliases.has(delegatedBy);
    if (mine) return !(metadata['delegationAnswer'] === true && metadata['delegateCallId']);
    return delegationId === undefined ? true : id === delegationId;
  };
}

/**
 * `COLLOQUY_HISTORY_MAX_TOKENS`, when set: the token budget of every prompt that does not
 * set `tokenBudget` itself (the default stays 3000).
 */
function budgetFromEnv(env = process.env): { tokenBudget?: number } {
  const raw = env['COLLOQUY_HISTORY_MAX_TOKENS']?.trim();
  if (raw === undefined || raw === '') return {};
  const tokens = Number(raw);
  if (!Number.isInteger(tokens) || tokens < 16) {
    throw new RangeError(
      `COLLOQUY_HISTORY_MAX_TOKENS must be a whole number of at least 16, got ${JSON.stringify(raw)}`,
    );
  }
  return { tokenBudget: tokens };
}

function withoutUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function validate(o: Resolved): void {
  const check = (name: string, value: number, min: number, integer = true) => {
    if (!(value >= min) || (integer && !Number.isInteger(value))) {
      throw new RangeError(
        `assemblePrompt: ${name} must be ${integer ? 'an integer ' : ''}of at least ${min}, got ${value}`,
      );
    }
  };
  check('tokenBudget', o.tokenBudget, 16);
  check('maxTurnsToLoad', o.maxTurnsToLoad, 1);
  check('rollingSummaryThreshold', o.rollingSummaryThreshold, 1, false);
  check('toolResultsInFull', o.toolResultsInFull, 0);
  check('maskToolResultsOverTokens', o.maskToolResultsOverTokens, 0, false);
  if (o.timeWindowMinutes !== undefined) check('timeWindowMinutes', o.timeWindowMinutes, 0, false);
}

/** The summary (when any) first, then as many recent units as fit what is left. */
function fitHistory(
  summary: StoredMessage | undefined,
  units: readonly Unit[],
  room: number,
  tokenizer: Tokenizer,
): { summary?: FittedUnit; fitted: FittedUnit[] } {
  const summaryFit =
    summary &&
    fitSummary(
      {
        kind: 'text',
        turn: summary,
        role: 'system',
        prefix: SUMMARY_PREFIX,
        content: summary.content,
      },
      room,
      tokenizer,
    );
  const { fitted } = fitUnits(units, room - (summaryFit?.tokens ?? 0), tokenizer);
  return summaryFit ? { summary: summaryFit, fitted } : { fitted };
}

/**
 * True for a turn the stored summary stands for. A summary is read by everyone, so it folds in
 * only turns everyone may read: a turn shown to one person only stays a row, which the
 * per-reader filter lets into the prompts answering that person.
 */
function coveredBy(through: number, turn: StoredMessage): boolean {
  return turn.sequence !== undefined && turn.sequence <= through && readableBy(turn, undefined);
}

/**
 * Which units a new summary covers: all but the newest ones that fit the budget, of which at
 * most `keepTurns` turns stay verbatim (so each summary covers a good stretch and the next is
 * due only after about half the threshold), and none with a turn shown to one person only
 * (see {@link coveredBy}). `undefined` when nothing could be summarised.
 */
function splitForSummary(
  units: readonly Unit[],
  fitted: readonly FittedUnit[],
  keepTurns: number,
): { older: StoredMessage[]; newer: Unit[] } | undefined {
  let keep = 0;
  let kept = 0;
  for (let i = fitted.length - 1; i >= 0; i--) {
    const size = unitTurns((fitted[i] as FittedUnit).unit).length;
    if (kept + size > keepTurns) break;
    kept += size;
    keep += 1;
  }
  const open = (unit: Unit) => unitTurns(unit).every((turn) => readableBy(turn, undefined));
  const candidates = units
    .slice(0, units.length - keep)
    .filter(open)
    .flatMap(unitTurns);
  const sequences = candidates.flatMap((turn) =>
    turn.sequence === undefined ? [] : [turn.sequence],
  );
  if (sequences.length === 0) return undefined;
  const through = Math.max(...sequences);
  // Everything everyone may read at or before `through` is covered by the summary, so it
  // must be summarised too.
  const isOlder = (unit: Unit) =>
    open(unit) && unitTurns(unit).some((turn) => (turn.sequence ?? Infinity) <= through);
  return {
    older: units.filter(isOlder).flatMap(unitTurns),
    newer: units.filter((unit) => !isOlder(unit)),
  };
}

/** Asks the summarizer for a new summary and stores it; `undefined` when that failed. */
async function summarize(
  ctx: Context,
  summarizer: Summarizer,
  previous: StoredMessage | undefined,
  turns: StoredMessage[],
): Promise<StoredMessage | undefined> {
  const last = turns.reduce((a, b) =>
    (b.sequence ?? -Infinity) > (a.sequence ?? -Infinity) ? b : a,
  );
  let content: string;
  try {
    content = await summarizer.summarize({
      agentId: ctx.agentId,
      agentName: ctx.agentName,
      conversationId: ctx.conversationId,
      ...(previous ? { previousSummary: previous.content } : {}),
      turns,
    });
  } catch (cause) {
    ctx.report(
      new AgentError('The summarizer failed; the prompt was built without a new summary', {
        cause,
        conversationId: ctx.conversationId,
      }),
    );
    return undefined;
  }
  return storeSummary(ctx, content, last, ctx.now().toISOString());
}
