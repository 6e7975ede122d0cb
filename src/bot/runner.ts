import { concerns, threadConcerns } from '../agent.js';
import type { Agent, AgentResult } from '../agent.js';
import type { Capture } from '../capture.js';
import { compose } from '../chain.js';
import type { Interceptor } from '../chain.js';
import type { BotIdentity, Channel, SentMessage } from '../channel.js';
import type { TurnContext } from '../context.js';
import { AgentError, ColloquyError, StoreError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ConversationStore } from '../store.js';
import type { NewMessage, Participant } from '../types.js';
import { outboundFor, sentIdsOf, sentTurn, trailingAgentRun, withAgentMentions } from './turn.js';
import { messageOf } from '../error-message.js';

/** Most rows the loop guard reads back through, however many tool rows there are. */
const LOOP_GUARD_MAX_ROWS = 5000;

/** What the runner needs from the bot. */
export interface RunnerDeps {
  store: ConversationStore;
  capture: Capture;
  /** The store an agent reads (its own, when it has one). */
  storeFor(agent: Agent): ConversationStore;
  interceptors: readonly Interceptor<TurnContext>[];
  agentsOn(channel: Channel): readonly Agent[];
  aliasesOf(agent: Agent): readonly string[];
  identities(): readonly BotIdentity[];
  logger: Logger;
  report(error: ColloquyError): void;
  maxAgentDepth: number;
  answerBots: boolean;
  signal: AbortSignal;
}

/**
 * Runs committed turns through the chain `[...interceptors, dispatch]`. Dispatch asks every
 * agent of the channel whether it answers, runs it, sends its output, and hands a reply that
 * mentions another of the bot's agents to that agent as a new turn (depth + 1), until
 * `maxAgentDepth` agent turns in a row.
 */
export class TurnRunner {
  /** What the agent said about the reply being sent as this participant (metadata, provenance). */
  readonly #replyMetadata = new WeakMap<Participant, Omit<AgentResult, 'output'>>();
  /** How many agent runs are in flight, by conversation. */
  readonly #answering = new Map<string, number>();

  constructor(private readonly deps: RunnerDeps) {}

  /** True while an agent is answering in the conversation. */
  answering(conversationId: string): boolean {
    return (this.#answering.get(conversationId) ?? 0) > 0;
  }

  /** A turn a channel delivered, already committed: interceptors, then agents. */
  async inbound(turn: NewMessage, channel: Channel): Promise<void> {
    await this.#run(turn, channel, await this.#inboundDepth(turn));
  }

  /** An edited turn, answered again (the edit itself is already recorded). */
  async edited(message: NewMessage, channel: Channel): Promise<void> {
    await this.again(withAgentMentions(message, this.deps.agentsOn(channel)), channel, 0);
  }

  /** A turn already stored (an edit to re-answer, an agent's reply). */
  async again(message: NewMessage, channel: Channel, depth: number): Promise<void> {
    await this.#run(message, channel, depth);
  }

  async #run(message: NewMessage, channel: Channel, depth: number) {
    const ctx = this.#context(message, channel, depth);
    const chain = compose<TurnContext>([...this.deps.interceptors, this.#dispatch]);
    try {
      await chain(ctx, async () => {});
    } catch (cause) {
      this.deps.report(
        cause instanceof ColloquyError
          ? cause
          : new ColloquyError(`turn failed: ${messageOf(cause)}`, {
              cause,
              conversationId: message.conversationId,
              messageId: message.id,
            }),
      );
    }
  }

  #context(message: NewMessage, channel: Channel, depth: number): TurnContext {
    return {
      message,
      channel,
      store: this.deps.store,
      depth,
      identities: this.deps.identities(),
      send: async (content, from) => {
        const others = this.deps.agentsOn(channel).filter((agent) => agent.id !== from.id);
        const { metadata: extra, ...provenance } = this.#replyMetadata.get(from) ?? {};
        const place = channel.replyPlace?.(message);
        const turnFor = (sent: SentMessage, partial: boolean) =>
          withAgentMentions(
            sentTurn({
              inbound: message,
              channelType: channel.type,
              content,
              from,
              sent,
              extra: partial ? { ...extra, partial: true } : extra,
              provenance,
              ...(place !== undefined && { place }),
            }),
            others,
          );
        let sent: SentMessage;
        try {
          sent = await channel.send(outboundFor(message, content, place));
        } catch (error) {
          // A split reply failed part way: the parts that went out are the reply, stored.
          const messageIds = sentIdsOf(error);
          if (messageIds.length > 0) await this.#record(turnFor({ messageIds }, true), 'reply');
          throw error;
        }
        const reply = turnFor(sent, false);
        await this.#record(reply, 'reply');
        return reply;
      },
    };
  }

  readonly #dispatch: Interceptor<TurnContext> = async (ctx, next) => {
    const { message, channel } = ctx;
    const author = message.participant;
    const agents = this.deps.agentsOn(channel);
    const ours = agents.some((agent) => agent.id === author.id);
    if (author.kind === 'agent' && ctx.depth >= this.deps.maxAgentDepth) {
      this.deps.logger.warn('loop guard: not answering, too many agent turns in a row', {
        conversationId: message.conversationId,
        messageId: message.id,
        depth: ctx.depth,
        maxAgentDepth: this.deps.maxAgentDepth,
      });
      return next();
    }
    if (author.kind === 'agent' && !ours && !this.deps.answerBots) return next();
    if (author.kind === 'system') return next(); // platform notices are recorded, never answered
    for (const agent of agents) {
      if (agent.id === author.id) continue;
      const aliases = this.deps.aliasesOf(agent);
      if (await this.#wants(agent, message, aliases, ours)) await this.#answer(agent, ctx, aliases);
    }
    await next();
  };

  async #wants(
    agent: Agent,
    message: NewMessage,
    aliases: readonly string[],
    ours: boolean,
  ): Promise<boolean> {
    try {
      if (ours && !(message.metadata.mentions ?? []).some((id) => aliases.includes(id)))
        return false;
      if (agent.shouldRespond !== undefined) return agent.shouldRespond(message, aliases);
      if (concerns(message, aliases)) return true;
      // A thread the agent opened by answering its first message concerns it as a whole.
      return (
        message.scope === 'thread' &&
        (await threadConcerns(this.deps.storeFor(agent), message.conversationId, aliases))
      );
    } catch (cause) {
      this.deps.report(agentError(agent, message, 'shouldRespond threw', cause));
      return false;
    }
  }

  async #answer(agent: Agent, ctx: TurnContext, aliases: readonly string[]): Promise<void> {
    const { message } = ctx;
    const id = message.conversationId;
    this.#answering.set(id, (this.#answering.get(id) ?? 0) + 1);
    try {
      const result = await agent.run(message, {
        conversationId: message.conversationId,
        store: this.deps.storeFor(agent),
        aliases,
        record: (turn) => this.#record(turn, 'tool turn'),
        report: (error) => this.deps.report(error),
        depth: ctx.depth,
        signal: this.deps.signal,
      });
      if (result.output.trim() === '') return;
      const from: Participant = { kind: 'agent', id: agent.id, displayName: agent.name };
      const { output: _, ...about } = result;
      this.#replyMetadata.set(from, about);
      const reply = await ctx.send(result.output, from);
      await this.#followUp(reply, ctx);
    } catch (cause) {
      this.deps.report(
        cause instanceof ColloquyError ? cause : agentError(agent, message, 'failed', cause),
      );
    } finally {
      const left = (this.#answering.get(id) ?? 1) - 1;
      if (left > 0) this.#answering.set(id, left);
      else this.#answering.delete(id);
    }
  }

  /** An agent's reply that mentions another agent of this channel is that agent's next turn. */
  async #followUp(reply: NewMessage, ctx: TurnContext): Promise<void> {
    const addressed = this.deps
      .agentsOn(ctx.channel)
      .some(
        (agent) =>
          agent.id !== reply.participant.id &&
          (reply.metadata.mentions ?? []).some((id) => this.deps.aliasesOf(agent).includes(id)),
      );
    if (addressed) await this.again(reply, ctx.channel, ctx.depth + 1);
  }

  /** Commits a turn the bot made; a failure is reported (capture keeps a transient one queued). */
  async #record(turn: NewMessage, what: string): Promise<void> {
    try {
      await this.deps.capture.write({ kind: 'append', message: turn });
    } catch (cause) {
      this.deps.report(
        new StoreError(`could not record a ${what}: ${messageOf(cause)}`, {
          cause,
          conversationId: turn.conversationId,
          messageId: turn.id,
          transient: (cause as StoreError).transient,
        }),
      );
    }
  }

  /**
   * A person's turn starts at depth 0. Another bot's turn is as deep as the run of agent turns
   * it ends, counted in the store: two bots on different platforms cannot bounce forever.
   */
  async #inboundDepth(message: NewMessage): Promise<number> {
    if (message.participant.kind !== 'agent' || !this.deps.answerBots) return 0;
    const { maxAgentDepth } = this.deps;
    try {
      // Tool rows do not count but fill the window: read further back until the run ends.
      for (let limit = maxAgentDepth * 4 + 4; ; limit *= 4) {
        const rows = await this.deps.store.get(message.conversationId, { limit });
        const run = trailingAgentRun(rows.filter((turn) => turn.id !== message.id));
        const whole = run.ended || rows.length < limit || limit >= LOOP_GUARD_MAX_ROWS;
        if (whole || run.count >= maxAgentDepth) return run.count + 1;
      }
    } catch (cause) {
      this.deps.report(
        new StoreError('could not read the conversation for the loop guard', {
          cause,
          conversationId: message.conversationId,
          messageId: message.id,
        }),
      );
      return maxAgentDepth;
    }
  }
}

function agentError(agent: Agent, message: NewMessage, what: string, cause: unknown): AgentError {
  return new AgentError(`agent ${agent.id} ${what}: ${messageOf(cause)}`, {
    cause,
    conversationId: message.conversationId,
    messageId: message.id,
  });
}
