/**
 * The runner: runs one committed turn through the inbound chain after capture
 * (`[...interceptors, interactions, loop guard, dispatch]`), runs each agent that answers it
 * (its run recorded in `agent_runs`), and sends the answers through the outbound chain
 * (`[...sendHooks, outbox]`).
 */
import { setTimeout as delay } from 'node:timers/promises';
import type { Agent, AgentResult } from '../agent.js';
import { inboundChain, outboundChain } from '../chain.js';
import type { Interceptor, SendHook } from '../chain.js';
import type { BotIdentity, Channel } from '../channel.js';
import type { TurnContext } from '../chain.js';
import { ColloquyError, StoreError, deliveryAfterFailure } from '../errors.js';
import type { Logger } from '../logger.js';
import type { ConversationStore } from '../store.js';
import type { NewMessage, Participant } from '../types.js';
import { cappedJson, runId, usageOf } from '../runs.js';
import type { Bursts } from './bursts.js';
import type { AgentRun, RunStatus } from '../runs.js';
import { isoTimestamp } from '../types.js';
import { RecordedElsewhere, replyTurn, sendThroughOutbox } from './outbox.js';
import type { Write } from './outbox.js';
import { withAgentMentions, withHandoff } from './turn.js';
import { typingFor } from './typing.js';
import { liveReplyFor } from './stream.js';
import type { LiveReply } from './stream.js';
import { messageOf } from '../errors.js';
import { reactTo } from '../reactions.js';
import { Confirmations } from './confirmations.js';
import { newRun, RunRecords } from './records.js';
import { inboundDepth } from './depth.js';
import { agentError, handedTo, wants, wantsNow } from './wants.js';

/** What the runner needs from the bot. */
export interface RunnerDeps {
  store: ConversationStore;
  /** The store an agent reads (its own, when it has one, behind the same wait for captures). */
  storeFor(agent: Agent): ConversationStore;
  /**
   * Commits a run row, a reply record or its confirmation, a reaction of the bot's; rejects
   * when it was not committed.
   */
  write: Write;
  /** Keeps `work` (a reply's confirmation, never rejecting) in flight: `idle` and `stop` wait for it. */
  track(work: Promise<void>): void;
  /** Keep each run's assembled prompt (JSON, at most this many bytes); off when undefined. */
  promptBytes?: number;
  interceptors: readonly Interceptor<TurnContext>[];
  /** The interactions link, after the interceptors: commands with a handler, refusals. */
  interactions: Interceptor<TurnContext>;
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
 * The runs a turn has in the ledger, by agent, and the only agents to run (when resuming, or
 * those a hand-off names).
 */
interface Recorded {
  runs: ReadonlyMap<string, AgentRun>;
  only?: ReadonlySet<string>;
}

/**
 * Runs committed turns through the chain's links after capture (`inboundChain.queued`:
 * `[...interceptors, interactions, loop guard, dispatch]`). Dispatch asks every agent of the
 * channel whether it answers, records its run (`agent_runs`), runs it, sends its output through the outbound
 * chain (the send hooks, then the outbox: recorded before the platform call, confirmed after),
 * and hands a reply that mentions another of the bot's agents to that agent as a new turn
 * (depth + 1), until `maxAgentDepth` agent turns in a row.
 */
export class TurnRunner {
  /** How many agent runs are in flight, by conversation. */
  readonly #answering = new Map<string, number>();
  /** The confirmations of replies sent and not committed yet. */
  readonly #confirming: Confirmations;
  readonly #records: RunRecords;

  constructor(private readonly deps: RunnerDeps) {
    this.#confirming = new Confirmations(deps.track);
    this.#records = new RunRecords(deps);
  }

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
    await this.#confirming.settled(conversationId);
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
      .filter((agent) => wantsNow(this.deps, agent, turn, this.deps.aliasesOf(agent), false))
      .map((agent) => {
        this.deps.bursts.arrived(turn, agent.id);
        return newRun(turn, agent.id, createdAt);
      });
  }

  /**
   * A committed turn: interceptors, then the agents that answer it, `runs` (its unfinished
   * runs in the ledger) as their records. `resume`: only the agents of `runs` run.
   */
  async inbound(
    turn: NewMessage,
    channel: Channel,
    runs: readonly AgentRun[],
    resume: boolean,
  ): Promise<void> {
    const depth = await inboundDepth(this.deps, turn);
    const recorded = new Map(runs.map((run) => [run.agentId, run]));
    const only = resume ? { only: new Set(recorded.keys()) } : {};
    await this.#run(turn, channel, depth, { runs: recorded, ...only });
  }

  /** An edited turn, answered again (the edit itself is already recorded). */
  async edited(message: NewMessage, channel: Channel): Promise<void> {
    await this.#run(withAgentMentions(message, this.deps.agentsOn(channel)), channel, 0);
  }

  async #run(message: NewMessage, channel: Channel, depth: number, plan?: Recorded) {
    const send = this.#replier(message, channel);
    const ctx = this.#context(message, channel, depth, send);
    const started = new Set<string>();
    const dispatch = this.#dispatcher(plan, started, send);
    const { interceptors, interactions, maxAgentDepth, logger } = this.deps;
    const links = { interactions, maxAgentDepth, logger };
    const chain = inboundChain.queued(interceptors, links, dispatch);
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
      this.#records.save({
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
          channel,
          content,
          from,
          ...(extra !== undefined && { extra }),
          provenance,
        }),
        others,
      );
      const turn =
        answering !== undefined && handedTo(this.deps, mentioning, message, channel).length > 0
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
          void this.#records.save(run);
        }
        // The run is answered in the confirmation's commit.
        const onSent = run === undefined ? undefined : () => this.#records.finish(run, 'answered');
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
        this.#confirming.add(
          message.conversationId,
          confirmed.then(
            () => undefined,
            (cause: unknown) => this.#records.unconfirmed(reply, run, cause),
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
        react: (emoji: string) => reactTo(channel, this.deps.write, message, emoji),
      }),
    };
  }

  /** Dispatch for one turn: `plan` says which runs exist already; `started` collects the agents run. */
  #dispatcher(
    plan: Recorded | undefined,
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
      if (!(resumed || (await wants(this.deps, agent, message, aliases, ours))) || !admit(agent)) {
        continue;
      }
      await this.#answer(agent, ctx, aliases, recorded(agent), send, resumed);
    }
    await next();
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
    const saved = this.#records.save(run);
    // A resumed run's start is committed before the agent runs again, so that a turn that
    // brings the bot down every time has each start counted (`maxRunAttempts`).
    if (resumed) await saved;
    this.#answering.set(id, (this.#answering.get(id) ?? 0) + 1);
    let status: RunStatus = 'answered';
    let elsewhere = false;
    const rows: string[] = [];
    const typing = typingFor(ctx, this.deps.signal, this.deps.logger);
    const from: Participant = { kind: 'agent', id: agent.id, displayName: agent.name };
    const { write } = this.deps;
    const save = () => void this.#records.save(run);
    const showing = () => typing.stop();
    const report = (error: ColloquyError) => this.deps.report(error);
    const live = liveReplyFor({ ctx, run, from, write, save, showing, report });
    try {
      // Nothing of the run is out yet (no tool ran, no reply started): run it again.
      const untouched = () => rows.length === 0 && live?.started !== true;
      const result = await this.#whileStoreAway(untouched, () =>
        agent.run(message, {
          conversationId: message.conversationId,
          store: this.deps.storeFor(agent),
          aliases,
          record: (turn) => {
            rows.push(turn.id);
            return this.#records.tool(turn);
          },
          report: (error) => this.deps.report(error),
          ...(this.deps.promptBytes !== undefined && {
            recordPrompt: (prompt: unknown) =>
              (run.prompt = cappedJson(prompt, this.deps.promptBytes!)),
          }),
          depth: ctx.depth,
          signal:
            live === undefined
              ? this.deps.signal
              : AbortSignal.any([this.deps.signal, live.signal]),
          ...(live !== undefined && { stream: (text: string) => live.update(text) }),
          fetchAttachment: ctx.channel.fetchAttachment?.bind(ctx.channel),
          ...(ctx.react !== undefined && { react: ctx.react }),
        }),
      );
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
      if (run.finishedAt === undefined) this.#records.finish(run, status);
      await this.#followUp(reply, ctx);
    } catch (cause) {
      if (cause instanceof RecordedElsewhere) {
        // The attempt that recorded the reply sends it and ends the run.
        this.deps.logger.info(cause.message);
        elsewhere = true;
        return;
      }
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
      if (run.finishedAt === undefined && !elsewhere) this.#records.finish(run, status);
      const left = (this.#answering.get(id) ?? 1) - 1;
      if (left > 0) this.#answering.set(id, left);
      else this.#answering.delete(id);
    }
  }

  /**
   * Runs `work` (an agent's run) again, after a pause that doubles from 100 ms to 5 s, while it
   * fails on a passing store failure (a read during an outage, a lost connection) and
   * `untouched()` says nothing of it went out, until it succeeds or the bot stops: a store that
   * is away delays a turn's answer instead of ending its run.
   */
  async #whileStoreAway<T>(untouched: () => boolean, work: () => Promise<T>): Promise<T> {
    for (let pause = 100; ; pause = Math.min(pause * 2, 5000)) {
      try {
        return await work();
      } catch (cause) {
        const { signal, logger } = this.deps;
        if (!passingStoreFailure(cause) || !untouched() || signal.aborted) throw cause;
        logger.warn(`an agent run met a passing store failure, run again: ${messageOf(cause)}`);
        await delay(pause, undefined, { signal }).catch(() => undefined); // the stop ends it
      }
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
    await this.#records.save({
      ...(recorded ?? newRun(message, agent.id, now)),
      status: 'answered',
      finishedAt: now,
      error: `answered with the later turn ${newer}`,
    });
    return true;
  }

  /**
   * An agent's reply that mentions other agents of this channel is their next turn (a
   * hand-off), for those that do not answer the turn it answers themselves.
   */
  async #followUp(reply: NewMessage, ctx: TurnContext): Promise<void> {
    const to = handedTo(this.deps, reply, ctx.message, ctx.channel);
    if (to.length === 0) return;
    const only = new Set(to.map((agent) => agent.id));
    await this.#run(reply, ctx.channel, ctx.depth + 1, { runs: new Map(), only });
  }
}

/** Whether `error`, or an error it was caused by, is a store failure the store says may pass. */
function passingStoreFailure(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 5; depth++) {
    if (at instanceof StoreError) return at.transient === true;
    at = at.cause;
  }
  return false;
}
