import { APICallError, stepCountIs, UnsupportedFunctionalityError } from 'ai';
import type { LanguageModel, LanguageModelUsage, StepResult, ToolSet } from 'ai';
import type { Agent, AgentResult, AgentRunContext } from '../src/agent.js';
import { DELEGATE_TOOL_NAME, delegateTool } from './delegation.js';
import { assemblePrompt, DEFAULT_ASSEMBLER_OPTIONS, RECALL_TOOL_NAME } from '../src/assemble.js';
import type { AssemblerOptions, Summarizer } from '../src/assemble.js';
import { withoutAttachments } from '../src/assemble/attachments.js';
import type { AttachmentOptions } from '../src/assemble/attachments.js';
import { messageOf } from '../src/errors.js';
import { AgentError, ColloquyError } from '../src/errors.js';
import { consoleLogger, redactError, redactingLogger } from '../src/logger.js';
import type { Logger } from '../src/logger.js';
import type { ConversationStore } from '../src/store.js';
import { rowsToEntries } from '../src/history/entries.js';
import { PluginError, PluginHost } from '../src/history/plugins.js';
import type { HistoryPlugin } from '../src/history/plugins.js';
import { isoTimestamp, samePlace, withMetadata } from '../src/types.js';
import type { NewMessage, Participant } from '../src/types.js';
import { callModel } from './model-call.js';
import { describeModel, modelFromEnv } from './models.js';
import {
  approvalActions,
  approvalAnswerOf,
  approvalMessages,
  approvalQuestion,
  approvalRequestsOf,
  waitingCalls,
} from './approval.js';
import { isOfflineModel } from './offline-model.js';
import { filesOf } from './files.js';
import { sourcesOf } from './provenance.js';
import { conversationSearchTool, CONVERSATION_SEARCH_TOOL } from './tools/conversation-search.js';
import { recallToolResultTool } from './tools/recall-tool-result.js';

/**
 * The class agents extend. Give it a name, a description and instructions; everything else
 * has a default: the model comes from `COLLOQUY_MODEL` (the offline model without it), the
 * history from the runtime's store, and the built-in `conversation_search` and
 * `recall_tool_result` tools are bound to the conversation being answered.
 *
 * Each turn, `run` assembles the prompt from the store (only the turns that concern this
 * agent), calls the model with the tools (at most `maxSteps` steps), records every tool call
 * and tool result as its own turn, and returns the answer with `{ model, usage, reasoning }` metadata (`reasoning` when the model gave any: stored on the reply, so `History` and SQL keep it).
 * The reply's `traceId` is the model's response id; its `sources` are those its tools'
 * results carry (`{ sources: [{ documentId, name, chunk, score }] }`) and those the model's
 * provider cites; its `files` those its tools' results carry (`{ files: [replyFile(…)] }`).
 *
 * With `noImplicitOverride`, optional members are set with `override` (`override model = …`).
 *
 * @example
 * ```ts
 * import { BaseAgent } from 'colloquy';
 * import { openai } from '@ai-sdk/openai';
 *
 * class SupportAgent extends BaseAgent {
 *   name = 'support-agent';
 *   description = 'Answers questions about orders';
 *   instructions = 'You are a helpful support agent.';
 *   override model = openai('gpt-4o-mini');
 * }
 * ```
 */
export abstract class BaseAgent implements Agent {
  abstract name: string;
  abstract description: string;
  /** The system prompt. */
  abstract instructions: string;
  /** Stable id, used as the participant id of this agent's turns; defaults to `name`. */
  declare readonly id: string;
  /** The AI SDK model; defaults to `modelFromEnv()`, resolved on the first run. */
  model?: LanguageModel;
  /** Further names the agent answers to; the runtime adds its bot identities. */
  agentAliases: readonly string[] = [];
  /**
   * Where history is read from, when not the runtime's store. The `Bot` copies every turn it
   * captures into it before the agent reads (`new InMemoryConversationStore({
   * maxMessagesPerConversation: 200 })` gives the agent its own capacity).
   */
  conversationHistory?: ConversationStore;
  /** How the prompt is assembled (token budget, summaries, time window…). */
  assemblerOptions: AssemblerOptions = {};
  /** Extra AI SDK tools; merged over the built-ins (a tool of the same name replaces one). */
  tools: ToolSet = {};
  /** Writes rolling summaries when the history outgrows `assemblerOptions.rollingSummaryThreshold`. */
  summarizer?: Summarizer;
  /**
   * Show the answer as the model writes it, where the channel can (default true); false sends
   * it whole once the model is done.
   */
  stream = true;
  /**
   * The files people share, given to the model: images (and text files, inlined) of the turns
   * in the prompt, fetched through their channel within these limits (by default at most four
   * files, images of at most 1 MiB, text files of at most 8 KiB; see docs/attachments.md). `false` for a model that takes text only: every file is then a placeholder
   * (`[image: box.jpg, 240 KB]`), as it always is with the offline model. A model that refuses
   * the files (an unsupported-content error, an HTTP 4xx) is asked again once with the
   * placeholders only.
   *
   * @example
   * ```ts
   * override attachments = { maxCount: 2, kinds: ['image', 'pdf'] } as const;
   * ```
   */
  attachments: AttachmentOptions | false = {};
  /** Most model steps per turn (each tool round trip is one). */
  maxSteps = 5;
  /** Where assembly problems the agent worked around are reported, with secrets masked. */
  logger: Logger = consoleLogger;
  /**
   * Agents this one may hand tasks to: with any, it gets the built-in `delegate` tool (see
   * `delegate` for the API and what each agent sees).
   */
  delegates: Agent[] = [];
  /** Plugins on prompt assembly, in registration order (see `use`). */
  readonly plugins: HistoryPlugin[] = [];

  /**
   * Registers a plugin on this agent's prompt assembly (masking, compression, your own; see
   * `HistoryPlugin`). `onRegistered` runs now; `afterAdd` gets each turn the agent answers;
   * `reduce` and `transform` run on every prompt. A plugin that throws is reported (`bot.catch`
   * as a `PluginError`) and skipped: the turn is answered.
   *
   * @example
   * ```ts
   * agent.use(toolResultMasking({ keepRecent: 1, exclude: ['get_weather'] }));
   * ```
   */
  use(plugin: HistoryPlugin): this {
    this.plugins.push(plugin);
    const host = new PluginHost((error) =>
      redactingLogger(this.logger).warn(error.message, { agentId: this.id, error }),
    );
    host.use(plugin, { conversationId: '', agentId: this.id });
    return this;
  }

  constructor() {
    // `id` follows `name` until a subclass sets its own (`override id = 'support'`).
    let own: string | undefined;
    Object.defineProperty(this, 'id', {
      get: () => own ?? this.name,
      set: (value: string) => void (own = value),
      enumerable: true,
      configurable: true,
    });
  }

  /** The model this agent calls, resolving the default once. */
  resolveModel(): LanguageModel {
    this.model ??= modelFromEnv();
    return this.model;
  }

  /** Resolves the model at start, so a bad `COLLOQUY_MODEL` setting stops `Bot.start`. */
  prepare(): void {
    this.resolveModel();
  }

  /** How this agent appears on the turns it writes. */
  get participant(): Participant {
    return { kind: 'agent', id: this.id, displayName: this.name };
  }

  async run(input: NewMessage, ctx: AgentRunContext): Promise<AgentResult> {
    const fail = (what: string, cause: unknown) =>
      new AgentError(`${this.name}: ${what}: ${messageOf(cause)}`, {
        // The provider's error can quote the key it was sent (and hold the request): keep a copy.
        cause: redactError(cause),
        conversationId: ctx.conversationId,
        messageId: input.id,
      });
    const report = (error: ColloquyError) =>
      error instanceof PluginError && ctx.report !== undefined
        ? ctx.report(error)
        : redactingLogger(this.logger).warn(error.message, { agentId: this.id, error });
    await this.#afterAdd(input, ctx, report);
    let model: LanguageModel;
    try {
      model = this.resolveModel();
    } catch (cause) {
      throw fail('no model', cause);
    }
    const prompt = await assemblePrompt(
      ctx.store,
      ctx.conversationId,
      this.id,
      this.name,
      {
        ...this.assemblerOptions,
        agentAliases: [
          ...new Set([
            ...(this.assemblerOptions.agentAliases ?? []),
            ...this.agentAliases,
            ...ctx.aliases,
          ]),
        ],
        currentMessage: input,
        systemPrompt: this.instructions.trim() === '' ? undefined : this.instructions,
        plugins: [...(this.assemblerOptions.plugins ?? []), ...this.plugins],
        ...(ctx.delegation === undefined
          ? {}
          : { delegation: { id: ctx.delegation.id, delegatorAliases: ctx.delegation.byAliases } }),
        onError: this.assemblerOptions.onError ?? report,
        ...(this.attachments !== false &&
          ctx.fetchAttachment !== undefined &&
          !isOfflineModel(model) && {
            attachments: { ...this.attachments, fetch: ctx.fetchAttachment, signal: ctx.signal },
          }),
      },
      this.summarizer,
    );
    // The recorded prompt names its files by their placeholders: their bytes and inlined text
    // are for the run only.
    const textOnly = withoutAttachments(prompt.messages);
    const withFiles = textOnly.some((message, i) => message !== prompt.messages[i]);
    ctx.recordPrompt?.({
      messages: textOnly,
      tokens: prompt.tokens,
      tokenBudget: this.assemblerOptions.tokenBudget ?? DEFAULT_ASSEMBLER_OPTIONS.tokenBudget,
    });
    // A press of Approve / Deny continues the model call that stopped for it (see `approval.ts`).
    const answer = approvalAnswerOf(input);
    const waiting =
      answer === undefined
        ? []
        : await waitingCalls(ctx.store, ctx.conversationId, this.id, answer);
    if (answer?.approved === false) {
      for (const row of waiting)
        await ctx.record(this.approvedTurn(input, row, `Denied by ${answer.by}.`));
    }
    const continued = answer === undefined ? [] : approvalMessages(waiting, answer);
    const waitingIds = new Set(waiting.map((row) => row.metadata.toolCallId));
    let shown = false;
    let stepped = false;
    const stream = this.stream ? ctx.stream?.bind(ctx) : undefined;
    const call = (messages: typeof prompt.messages) =>
      callModel(
        {
          model,
          messages: waiting.length === 0 ? messages : [...messages, ...continued],
          allowSystemInMessages: true,
          tools: { ...this.builtInTools(ctx, input), ...this.tools },
          stopWhen: stepCountIs(this.maxSteps),
          abortSignal: ctx.signal,
          onStepFinish: (step) => {
            stepped = true;
            return this.recordToolUse(step, input, ctx);
          },
          experimental_onToolCallFinish: async (event) => {
            const row = waiting.find((w) => w.metadata.toolCallId === event.toolCall.toolCallId);
            if (row === undefined || !waitingIds.delete(row.metadata.toolCallId)) return;
            // An approved tool has run: the call is not asked again (with or without files).
            stepped = true;
            const text = event.success ? textOf(event.output) : `Error: ${messageOf(event.error)}`;
            await ctx.record(this.approvedTurn(input, row, text));
          },
        },
        stream &&
          ((text) => {
            shown = true;
            stream(text);
          }),
      );
    try {
      const result = await call(prompt.messages).catch((cause: unknown) => {
        // Asked again only when the first step failed: after a step its tools have run.
        if (!withFiles || shown || stepped || !refusesFiles(cause)) throw cause;
        report(fail('the model refused the files; asked again with placeholders', cause));
        return call(textOnly);
      });
      const reasoning = reasoningOf(result.steps);
      const sources = sourcesOf(result.steps);
      const files = filesOf(result.steps);
      const last = result.steps.at(-1);
      const requests = last === undefined ? [] : approvalRequestsOf(last);
      return {
        output:
          requests.length > 0 && result.text.trim() === ''
            ? approvalQuestion(requests)
            : result.text,
        traceId: result.response.id,
        ...(sources.length === 0 ? {} : { sources }),
        ...(files.length === 0 ? {} : { files }),
        metadata: {
          model: describeModel(model),
          ...(isOfflineModel(model) ? { offline: true } : {}),
          usage: usageOf(result.totalUsage),
          ...(reasoning === undefined ? {} : { reasoning }),
          ...(requests.length > 0 && { actions: approvalActions(requests) }),
        },
      };
    } catch (cause) {
      if (cause instanceof ColloquyError) throw cause;
      throw fail('the model failed', cause);
    }
  }

  /** Tells the plugins with `afterAdd` about the turn being answered. */
  async #afterAdd(
    input: NewMessage,
    ctx: AgentRunContext,
    report: (error: ColloquyError) => void,
  ): Promise<void> {
    if (!this.plugins.some((plugin) => plugin.afterAdd !== undefined)) return;
    const [entry] = rowsToEntries([{ ...withMetadata(input), sequence: 0 }]);
    if (entry === undefined) return;
    const host = new PluginHost(report);
    host.plugins.push(...this.plugins);
    await host.afterAdd(entry, { conversationId: ctx.conversationId, agentId: this.id });
  }

  /**
   * The tools every run gets, bound to the conversation being answered. Override to remove
   * or add some (return `{}` for none).
   */
  protected builtInTools(ctx: AgentRunContext, input?: NewMessage): ToolSet {
    const delegates = this.delegates.filter((agent) => agent.id !== this.id);
    return {
      [CONVERSATION_SEARCH_TOOL]: conversationSearchTool(
        ctx.store,
        ctx.conversationId,
        input?.participant,
      ),
      [RECALL_TOOL_NAME]: recallToolResultTool(ctx.store, ctx.conversationId, this.id),
      ...(delegates.length > 0 && input !== undefined
        ? { [DELEGATE_TOOL_NAME]: delegateTool(this, delegates, input, ctx) }
        : {}),
    };
  }

  private async recordToolUse(
    step: StepResult<ToolSet>,
    input: NewMessage,
    ctx: AgentRunContext,
  ): Promise<void> {
    const at = step.stepNumber;
    const approvals = approvalRequestsOf(step);
    for (const part of step.content) {
      if (part.type === 'tool-call') {
        const json = JSON.stringify(part.input) ?? 'null';
        const turn = this.toolTurn(input, at, part, 'call', json);
        // A call that waits for approval says which: the press that answers it finds it by this.
        const approval = approvals.find((a) => a.toolCallId === part.toolCallId);
        await ctx.record(
          approval === undefined
            ? turn
            : { ...turn, metadata: { ...turn.metadata, approvalId: approval.approvalId } },
        );
      } else if (part.type === 'tool-result') {
        await ctx.record(this.toolTurn(input, at, part, 'result', textOf(part.output)));
      } else if (part.type === 'tool-error') {
        const turn = this.toolTurn(input, at, part, 'result', `Error: ${messageOf(part.error)}`);
        await ctx.record({ ...turn, metadata: { ...turn.metadata, toolError: true } });
      }
    }
  }

  /**
   * The result row of a call that waited for approval, written by the run of the press that
   * answered it (`<press id>:tool:approval:<call id>:result`), in the step of its call.
   */
  private approvedTurn(input: NewMessage, call: NewMessage, content: string): NewMessage {
    const { toolCallId, toolName } = call.metadata;
    const step = call.metadata['toolStep'] as number;
    const part = { toolCallId: toolCallId as string, toolName: toolName ?? 'unknown' };
    const turn = this.toolTurn(input, step, part, 'result', content);
    return { ...turn, id: `${input.id}${rerun(input)}:tool:approval:${part.toolCallId}:result` };
  }

  /**
   * One tool row. Its id holds the turn answered and the step as well as the model's call id
   * (`<turn id>:tool:<step>:<call id>:call|result`): some servers say `call_0` in every step.
   * A turn answered again after an edit adds which time (`<turn id>:edit:<n>:tool:…`), or its
   * rows would repeat the first run's ids and be dropped as repeats.
   */
  private toolTurn(
    input: NewMessage,
    step: number,
    part: { toolCallId: string; toolName: string },
    role: 'call' | 'result',
    content: string,
  ): NewMessage {
    return {
      id: `${input.id}${rerun(input)}:tool:${step}:${part.toolCallId}:${role}`,
      conversationId: input.conversationId,
      participant: this.participant,
      content,
      timestamp: isoTimestamp(),
      scope: input.scope,
      metadata: {
        ...samePlace(input),
        toolRole: role,
        toolCallId: part.toolCallId,
        toolName: part.toolName,
        toolStep: step,
      },
    };
  }
}

/** True when a model's error says it takes no such content (not a failure any call would have). */
function refusesFiles(cause: unknown): boolean {
  if (UnsupportedFunctionalityError.isInstance(cause)) return true;
  if (!APICallError.isInstance(cause) || cause.statusCode === undefined) return false;
  return (
    cause.statusCode >= 400 &&
    cause.statusCode < 500 &&
    ![401, 403, 408, 429].includes(cause.statusCode)
  );
}

function rerun(input: NewMessage): string {
  const n = input.metadata.rerunForEdit;
  return typeof n === 'number' ? `:edit:${n}` : '';
}

function textOf(output: unknown): string {
  return typeof output === 'string' ? output : (JSON.stringify(output) ?? String(output));
}

/** The model's reasoning over every step, when it gave any (stored as `metadata.reasoning`). */
function reasoningOf(steps: readonly { reasoningText: string | undefined }[]): string | undefined {
  const parts = steps.flatMap((step) => (step.reasoningText ? [step.reasoningText] : []));
  return parts.length === 0 ? undefined : parts.join('\n\n');
}

function usageOf(usage: LanguageModelUsage): Record<string, number> {
  const out: Record<string, number> = {};
  if (usage.inputTokens !== undefined) out.inputTokens = usage.inputTokens;
  if (usage.outputTokens !== undefined) out.outputTokens = usage.outputTokens;
  if (usage.totalTokens !== undefined) out.totalTokens = usage.totalTokens;
  return out;
}
