import { concerns, threadConcerns } from '../agent.js';
import type { Agent, AgentResult } from '../agent.js';
import { inboundChain, loopGuard, outboundChain } from '../chain.js';
import type { Interceptor, SendHook } from '../chain.js';
import type { BotIdentity, Channel } from '../channel.js';
import type { TurnContext } from '../chain.js';
import { AgentError, ColloquyError, StoreError } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ConversationStore } from '../store.js';
import type { NewMessage, Participant } from '../types.js';
import { cappedJson, runId, usageOf } from '../runs.js';
import type { Bursts } from './bursts.js';
import type { AgentRun, RunStatus } from '../runs.js';
import { isoTimestamp } from '../types.js';
import { deliveryAfterFailure, replyTurn, sendThroughOutbox } from './outbox.js';
import type { Write } from './outbox.js';
import { trailingAgentRun, withAgentMentions, withHandoff } from './turn.js';
import { typingFor } from './typing.js';
import { liveReplyFor } from './stream.js';
import type { LiveReply } from './stream.js';
import { messageOf } from '../errors.js';
import { answeredBy } from '../interactions.js';
import { reactTo } from '../reactions.js';

/** Most rows the loop guard reads back through, however many tool rows there are. */
const LOOP_GUARD_MAX_ROWS = 5000;

/** What the runner needs from the bot. */
export interface RunnerDeps {
  store: ConversationStore;
  /** The store an agent reads (its own, when it has one, behind the same wait for captures). */
  storeFor(agent: Agent): ConversationStore;
  /** Commits a run row, a reply record or its confirmation; rejects when it was not committed. */
  write: Write;
  /** Keeps `work` (a reply's confirmation, never rejecting) in flight: `idle` and `stop` wait for it. */
  track(work: Promise<void>): void;
  /** Keep each run's assembled prompt (JSON, at most this many bytes); off when undefined. */
  promptBytes?: number;
  interceptors: readonly Interceptor<TurnContext>[];
  sendHooks: readonly SendHook[];
  agentsOn(channel: Channel): readonly Agent[];
  aliasesOf(agent: Agent): readonly string[];
  identities(): readonly BotIdentity[];
  logger: Logger;
  report(error: ColloquyError): void;
  maxAgentDepth: number;
  answerBots: boolean;
  signal: AbortSignal;
  /** Which turns of a person's burst are answered. */
  bursts: Bursts;
}

/**
 * Sends one reply to the turn as `from`; an agent's answer names its run, its result and the
 * ids of the rows it recorded (what a hand-off by @mention shows the next agent).
 */
type SendReply = (
  content: string,
  from: Participant,
  answering?: {
    run: AgentRun;
    about: Omit<AgentResult, 'output'>;
    recorded: readonly string[];
    live?: LiveReply | undefined;
  },
) => Promise<NewMessage>;

/**
 * What the bot already knows about a turn's agent work: the runs recorded for it (pending ones
 * written with the turn, or unfinished ones found after a restart), and the only agents to
 * run (when resuming, or those a hand-off names).
 */
export interface RunPlan {
  runs: ReadonlyMap<string, AgentRun>;
  only?: ReadonlySet<string>;
}

/**
 * Runs committed turns through the chain `[...interceptors, dispatch]`. Dispatch asks every
 * agent of the channel whether it answers, records its run (`agent_runs`), runs it, sends its
 * output through the outbox (recorded before the platform call, confirmed after), and hands a
 * reply that mentions another of the bot's agents to that agent as a new turn (depth + 1),
 * until `maxAgentDepth` agent turns in a row.
 */
export class TurnRunner {
  /** How many agent runs are in flight, by conversation. */
  readonly #answering = new Map<string, number>();
  /** The confirmations of replies sent and not committed yet, by conversation. */
  readonly #confirming = new Map<string, Set<Promise<void>>>();

  constructor(private readonly deps: RunnerDeps) {}

  /** True while an agent is answering in the conversation. */
  answering(conversationId: string): boolean {
    return (this.#answering.get(conversationId) ?? 0) > 0;
  }

  /**
   * Resolves once the replies sent so far in the conversation are confirmed (or their
   * confirmation failed and was reported). A turn's work is done, for the turns after it, once
   * its replies are on the platform: their confirmations commit behind, in capture's order.
   */
  async confirmed(conversationId: string): Promise<void> {
    await Promise.all(this.#confirming.get(conversationId) ?? []);
  }

  /**
   * The runs to record as `pending` with a person's turn, committed with it: one per agent the
   * turn concerns. Turns of agents and bots get theirs when dispatched.
   */
  planned(turn: NewMessage, channel: Channel): AgentRun[] {
    if (turn.participant.kind !== 'user') return [];
    const createdAt = isoTimestamp();
    return this.deps
      .agentsOn(channel)
      .filter((agent) => this.#wantsNow(agent, turn, this.deps.aliasesOf(agent), false))
      .map((agent) => {
        this.deps.bursts.arrived(turn, agent.id);
        return newRun(turn, agent.id, createdAt);
      });
  }

  /** A turn a channel delivered, already committed: interceptors, then agents. */
  async inbound(turn: NewMessage, channel: Channel, plan?: RunPlan): Promise<void> {
    const depth = await this.#inboundDepth(turn);
    await this.#run(turn, channel, depth, plan);
  }

  /** An edited turn, answered again (the edit itself is already recorded). */
  async edited(message: NewMessage, channel: Channel): Promise<void> {
    await this.again(withAgentMentions(message, this.deps.agentsOn(channel)), channel, 0);
  }

  /** A turn already stored (an edit to re-answer). */
  async again(message: NewMessage, channel: Channel, depth: number): Promise<void> {
    await this.#run(message, channel, depth);
  }

  async #run(message: NewMessage, channel: Channel, depth: number, plan?: RunPlan) {
    const send = this.#replier(message, channel);
    const ctx = this.#context(message, channel, depth, send);
    const started = new Set<string>();
    const dispatch = this.#dispatcher(plan, started, send);
    const guard = loopGuard(this.deps.maxAgentDepth, this.deps.logger);
    const chain = inboundChain(this.deps.interceptors, guard, dispatch);
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
    for (const run of plan?.runs.values() ?? []) {
      if (started.has(run.agentId) || (plan?.only !== undefined && !plan.only.has(run.agentId)))
        continue;
      this.#save({
        ...run,
        status: 'failed',
        finishedAt: isoTimestamp(),
        error: 'not answered: the turn stopped before the agent ran',
      });
    }
  }

  /**
   * Sends the turn's replies through the outbox, numbering them per author. An agent's answer
   * passes its run and what the agent said about it (metadata, provenance); `ctx.send` passes
   * neither.
   */
  #replier(message: NewMessage, channel: Channel): SendReply {
    const sends = new Map<string, number>();
    return async (content, from, answering) => {
      const others = this.deps.agentsOn(channel).filter((agent) => agent.id !== from.id);
      const { metadata: extra, files, ...provenance } = answering?.about ?? {};
      const run = answering?.run;
      const count = (sends.get(from.id) ?? 0) + 1;
      sends.set(from.id, count);
      const live = answering?.live?.started === true ? answering.live : undefined;
      const id =
        live?.id ?? `${run?.id ?? runId(message, from.id)}:reply${count > 1 ? `:${count}` : ''}`;
      const place = channel.replyPlace?.(message);
      const mentioning = withAgentMentions(
        replyTurn({
          id,
          inbound: message,
          channelType: channel.type,
          content,
          from,
          ...(extra !== undefined && { extra }),
          provenance,
          ...(place !== undefined && { place }),
        }),
        others,
      );
      const turn =
        answering !== undefined && this.#handedTo(mentioning, message, channel).length > 0
          ? withHandoff(mentioning, message, answering.recorded)
          : mentioning;
      const post = async (reply: NewMessage) => {
        if (reply.id !== id || reply.conversationId !== turn.conversationId) {
          throw new ColloquyError("a send hook changed a reply's id or conversation", {
            conversationId: message.conversationId,
            messageId: message.id,
          });
        }
        if (run !== undefined) {
          run.replyId = id;
          void this.#save(run);
        }
        // The run is answered in the confirmation's commit.
        const onSent = run === undefined ? undefined : () => this.#finish(run, 'answered');
        const { sent, confirmed } =
          live !== undefined
            ? await live.finish(reply, onSent, files)
            : await sendThroughOutbox(this.deps.write, {
                channel,
                inbound: message,
                turn: reply,
                ...(place !== undefined && { place }),
                ...(onSent !== undefined && { onSent }),
                ...(files?.length && { files }),
              });
        // Kept under the conversation of the turn answered (its runs'), wherever the reply went.
        this.#behind(
          message.conversationId,
          confirmed.then(
            () => undefined,
            (cause: unknown) => this.#unconfirmed(reply, run, cause),
          ),
        );
        return sent;
      };
      return outboundChain(this.deps.sendHooks, post, { inbound: message, channel })(turn);
    };
  }

  #context(message: NewMessage, channel: Channel, depth: number, send: SendReply): TurnContext {
    return {
      message,
      channel,
      store: this.deps.store,
      depth,
      identities: this.deps.identities(),
      send: (content, from) => send(content, from),
      ...(channel.react !== undefined && {
        react: (emoji: string) => reactTo(channel, this.deps.store, message, emoji),
      }),
    };
  }

  /** Dispatch for one turn: `plan` says which runs exist already; `started` collects the agents run. */
  #dispatcher(
    plan: RunPlan | undefined,
    started: Set<string>,
    send: SendReply,
  ): Interceptor<TurnContext> {
    return async (ctx, next) => {
      const runs = (agent: Agent) => {
        if (plan?.only !== undefined && !plan.only.has(agent.id)) return false;
        started.add(agent.id);
        return true;
      };
      await this.#dispatch(
        ctx,
        next,
        runs,
        (agent) => plan?.runs.get(agent.id),
        plan?.only !== undefined,
        send,
      );
    };
  }

  async #dispatch(
    ctx: TurnContext,
    next: () => Promise<void>,
    admit: (agent: Agent) => boolean,
    recorded: (agent: Agent) => AgentRun | undefined,
    resuming: boolean,
    send: SendReply,
  ): Promise<void> {
    const { message, channel } = ctx;
    const author = message.participant;
    const agents = this.deps.agentsOn(channel);
    const ours = agents.some((agent) => agent.id === author.id);
    if (author.kind === 'agent' && !ours && !this.deps.answerBots) return next();
    if (author.kind === 'system') return next(); // platform notices are recorded, never answered
    for (const agent of agents) {
      if (agent.id === author.id) continue;
      const aliases = this.deps.aliasesOf(agent);
      // A resumed run is answered: the agent wanted the turn when it was recorded.
      const resumed = recorded(agent) !== undefined && resuming;
      if (!(resumed || (await this.#wants(agent, message, aliases, ours))) || !admit(agent)) {
        continue;
      }
      await this.#answer(agent, ctx, aliases, recorded(agent), send, resumed);
    }
    await next();
  }

  /** Whether `agent` answers `message`, from the turn alone (the runs planned at commit). */
  #wantsNow(agent: Agent, message: NewMessage, aliases: readonly string[], ours: boolean): boolean {
    const target = answeredBy(message);
    if (target !== undefined) return target === agent.id;
    try {
      if (ours && !(message.metadata.mentions ?? []).some((id) => aliases.includes(id)))
        return false;
      return agent.shouldRespond?.(message, aliases) ?? concerns(message, aliases);
    } catch (cause) {
      this.deps.report(agentError(agent, message, 'shouldRespond threw', cause));
      return false;
    }
  }

  /** `#wantsNow`, or a turn in a thread the agent opened (which concerns it as a whole). */
  async #wants(
    agent: Agent,
    message: NewMessage,
    aliases: readonly string[],
    ours: boolean,
  ): Promise<boolean> {
    if (this.#wantsNow(agent, message, aliases, ours)) return true;
    if (ours || agent.shouldRespond !== undefined || message.scope !== 'thread') return false;
    try {
      return await threadConcerns(this.deps.storeFor(agent), message.conversationId, aliases);
    } catch (cause) {
      this.deps.report(
        new StoreError('could not read whether the agent opened this thread', {
          cause,
          conversationId: message.conversationId,
          messageId: message.id,
        }),
      );
      return false;
    }
  }

  async #answer(
    agent: Agent,
    ctx: TurnContext,
    aliases: readonly string[],
    recorded: AgentRun | undefined,
    send: SendReply,
    resumed: boolean,
  ): Promise<void> {
    const { message } = ctx;
    const id = message.conversationId;
    if (await this.#answeredLater(agent, message, recorded)) return;
    // A resumed run was taken up before and interrupted, even when the bot went down before
    // that start was recorded: it counts as one.
    const before = resumed ? Math.max(recorded?.attempts ?? 0, 1) : (recorded?.attempts ?? 0);
    const run: AgentRun = {
      ...(recorded ?? newRun(message, agent.id, isoTimestamp())),
      status: 'running',
      startedAt: isoTimestamp(),
      attempts: before + 1,
    };
    const saved = this.#save(run);
    // A resumed run's start is committed before the agent runs again, so that a turn that
    // brings the bot down every time has each start counted (`maxRunAttempts`).
    if (resumed) await saved;
    this.#answering.set(id, (this.#answering.get(id) ?? 0) + 1);
    let status: RunStatus = 'answered';
    const rows: string[] = [];
    const typing = typingFor(ctx, this.deps.signal, this.deps.logger);
    const from: Participant = { kind: 'agent', id: agent.id, displayName: agent.name };
    const { write } = this.deps;
    const save = () => void this.#save(run);
    const showing = () => typing.stop();
    const report = (cause: unknown) =>
      this.deps.report(new ColloquyError("could not show a streamed reply's buttons", { cause }));
    const live = liveReplyFor({ ctx, run, from, write, save, showing, report });
    try {
      const result = await agent.run(message, {
        conversationId: message.conversationId,
        store: this.deps.storeFor(agent),
        aliases,
        record: (turn) => {
          rows.push(turn.id);
          return this.#record(turn);
        },
        report: (error) => this.deps.report(error),
        ...(this.deps.promptBytes !== undefined && {
          recordPrompt: (prompt: unknown) =>
            (run.prompt = cappedJson(prompt, this.deps.promptBytes!)),
        }),
        depth: ctx.depth,
        signal:
          live === undefined ? this.deps.signal : AbortSignal.any([this.deps.signal, live.signal]),
        ...(live !== undefined && { stream: (text: string) => live.update(text) }),
        fetchAttachment: ctx.channel.fetchAttachment?.bind(ctx.channel),
        ...(ctx.react !== undefined && { react: ctx.react }),
      });
      Object.assign(run, usageOf(result.metadata));
      if (result.output.trim() === '') return;
      const { output: _, ...about } = result;
      // The answer is the sign of life from here on: the indicator never outlives it.
      typing.stop();
      let reply: NewMessage;
      try {
        reply = await send(result.output, from, { run, about, recorded: rows, live });
      } catch (cause) {
        if (run.replyId !== undefined && deliveryAfterFailure(cause) === 'unconfirmed') {
          status = 'unconfirmed';
        }
        // Finished as answered once the platform took it, then a send hook threw after it.
        delete run.finishedAt;
        throw cause;
      }
      if (run.finishedAt === undefined) this.#finish(run, status);
      await this.#followUp(reply, ctx);
    } catch (cause) {
      if (live?.stopped === true) {
        // The person stopped the reply: what was shown is the answer (see `LiveReply.abandon`).
        run.error = 'stopped by the person';
        return;
      }
      if (status === 'answered') status = 'failed';
      run.error = messageOf(cause);
      this.deps.report(
        cause instanceof ColloquyError ? cause : agentError(agent, message, 'failed', cause),
      );
    } finally {
      typing.stop();
      await live?.abandon();
      if (run.finishedAt === undefined) this.#finish(run, status);
      const left = (this.#answering.get(id) ?? 1) - 1;
      if (left > 0) this.#answering.set(id, left);
      else this.#answering.delete(id);
    }
  }

  /**
   * True when a later turn of the person's burst is answered instead of `message` (see
   * `Bursts`): its run is then settled as answered by that turn, and never resumed.
   */
  async #answeredLater(
    agent: Agent,
    message: NewMessage,
    recorded: AgentRun | undefined,
  ): Promise<boolean> {
    if (message.participant.kind !== 'user' || message.metadata.rerunForEdit !== undefined) {
      return false;
    }
    const newer = await this.deps.bursts.newer(message, agent.id);
    if (newer === undefined) return false;
    const now = isoTimestamp();
    await this.#save({
      ...(recorded ?? newRun(message, agent.id, now)),
      status: 'answered',
      finishedAt: now,
      error: `answered with the later turn ${newer}`,
    });
    return true;
  }

  /** Keeps a reply's confirmation until it is committed or failed. */
  #behind(conversationId: string, confirmation: Promise<void>): void {
    const pending = this.#confirming.get(conversationId) ?? new Set<Promise<void>>();
    this.#confirming.set(conversationId, pending);
    const tracked = confirmation.finally(() => {
      pending.delete(tracked);
      if (pending.size === 0 && this.#confirming.get(conversationId) === pending)
        this.#confirming.delete(conversationId);
    });
    pending.add(tracked);
    this.deps.track(tracked);
  }

  /**
   * A sent reply whose confirmation was not committed: the platform has it, the record says
   * `sending`, and its run, answered in that commit, is `unconfirmed`.
   */
  #unconfirmed(reply: NewMessage, run: AgentRun | undefined, cause: unknown): void {
    this.deps.report(
      cause instanceof ColloquyError
        ? cause
        : new StoreError(`could not confirm reply ${reply.id}: ${messageOf(cause)}`, {
            cause,
            conversationId: reply.conversationId,
            messageId: reply.id,
          }),
    );
    if (run === undefined || run.status !== 'answered') return;
    run.error = messageOf(cause);
    this.#finish(run, 'unconfirmed');
  }

  #finish(run: AgentRun, status: RunStatus): void {
    run.status = status;
    run.finishedAt = isoTimestamp();
    void this.#save(run);
  }

  /** Writes a run row (a copy: the run goes on changing); a failure is reported, not thrown. */
  #save(run: AgentRun): Promise<void> {
    return this.deps.write({ kind: 'run', run: { ...run } }).then(
      () => undefined,
      (cause: unknown) =>
        this.deps.report(
          new StoreError(`could not record run ${run.id} (${run.status})`, {
            cause,
            conversationId: run.conversationId,
            messageId: run.messageId,
          }),
        ),
    );
  }

  /**
   * An agent's reply that mentions other agents of this channel is their next turn (a
   * hand-off), for those that do not answer the turn it answers themselves.
   */
  async #followUp(reply: NewMessage, ctx: TurnContext): Promise<void> {
    const to = this.#handedTo(reply, ctx.message, ctx.channel);
    if (to.length === 0) return;
    const only = new Set(to.map((agent) => agent.id));
    await this.#run(reply, ctx.channel, ctx.depth + 1, { runs: new Map(), only });
  }

  /** The agents `reply` (answering `answered`) mentions, other than those `answered` is for. */
  #handedTo(reply: NewMessage, answered: NewMessage, channel: Channel): Agent[] {
    const agents = this.deps.agentsOn(channel);
    const ours = agents.some((agent) => agent.id === answered.participant.id);
    return agents.filter((agent) => {
      const aliases = this.deps.aliasesOf(agent);
      return (
        agent.id !== reply.participant.id &&
        (reply.metadata.mentions ?? []).some((id) => aliases.includes(id)) &&
        !this.#wantsNow(agent, answered, aliases, ours)
      );
    });
  }

  async #record(turn: NewMessage): Promise<void> {
    try {
      await this.deps.write({ kind: 'append', message: turn });
    } catch (cause) {
      this.deps.report(
        new StoreError('could not record a tool turn', {
          cause,
          conversationId: turn.conversationId,
          messageId: turn.id,
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

/** A run not started yet. */
function newRun(turn: NewMessage, agentId: string, createdAt: string): AgentRun {
  return {
    id: runId(turn, agentId),
    messageId: turn.id,
    conversationId: turn.conversationId,
    agentId,
    status: 'pending',
    createdAt,
    attempts: 0,
  };
}
