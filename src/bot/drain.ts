/**
 * Agent work left unfinished in `agent_runs`: taken up at start, by the shared sweep (a dead
 * instance's conversations), under a conversation's lease, and when a turn is delivered again.
 * Each unfinished run is decided once: settled (its reply was recorded), expired, given up
 * (`maxRunAttempts`), or run again through the runner.
 */
import type { Channel } from '../channel.js';
import { ColloquyError, StoreError } from '../errors.js';
import { isUnfinished } from '../runs.js';
import type { AgentRun, RunStatus } from '../runs.js';
import type { NewMessage } from '../types.js';
import type { RunPlan } from './runner.js';
import type { Running } from './running.js';
import { settleReply } from './settle.js';
import type { HeldLease } from './shared.js';

/** The turn this instance was handed, run with the plan it keeps in hand. */
export interface LocalTurn {
  turn: NewMessage;
  channel: Channel;
  plan: RunPlan;
}

/** Takes up unfinished agent runs: see the file's comment. */
export class Drain {
  constructor(
    private readonly bot: Running,
    /** Runs a turn this instance was handed (its runs planned at commit). */
    private readonly onMessage: (
      turn: NewMessage,
      channel: Channel,
      plan: RunPlan,
    ) => Promise<void>,
  ) {}

  /**
   * Takes up the unfinished runs of conversations nobody holds (at start, and then every
   * `claimEveryMs`): each conversation is drained under the lease the claim took.
   */
  async sweep(): Promise<void> {
    const leases = this.bot.leases!;
    let claimed;
    try {
      claimed = await leases.claim();
    } catch (cause) {
      this.bot.report(new StoreError('could not claim unfinished agent runs', { cause }));
      return;
    }
    for (const { lease, runs } of claimed) {
      const conversationId = runs[0]?.conversationId;
      if (conversationId === undefined) {
        await leases.release(lease);
        continue;
      }
      void this.bot.track(() =>
        this.bot.order.conversation(conversationId, async () => {
          await leases.holding(lease, (held) => this.drain(conversationId, held));
        }),
      );
    }
  }

  /**
   * Answers a conversation's unfinished runs, oldest turn first, while holding its lease: the
   * holder answers every instance's turns in order, and an instance that gets the lease after
   * finds its own turns answered. `local` is the turn this instance was handed (it keeps its
   * plan and channel).
   */
  async drain(conversationId: string, held: HeldLease, local?: LocalTurn): Promise<void> {
    const { store, ledger, runner } = this.bot;
    const open =
      (await ledger?.getRuns({ conversationId, statuses: ['pending', 'running'] })) ?? [];
    const byTurn = new Map<string, AgentRun[]>();
    for (const run of open) byTurn.set(run.messageId, [...(byTurn.get(run.messageId) ?? []), run]);
    for (const [messageId, runs] of byTurn) {
      // Lost to another instance (this one paused past the expiry): it answers the rest.
      if (held.lost) return;
      const resumable: AgentRun[] = [];
      for (const run of runs) if (await this.#resumes(run)) resumable.push(run);
      if (resumable.length === 0) continue;
      const plan = planOf(resumable);
      if (local !== undefined && local.turn.id === messageId) {
        const whole = resumable.length === local.plan.runs.size;
        await this.onMessage(local.turn, local.channel, whole ? local.plan : plan);
        continue;
      }
      const turn = await store.getMessage(conversationId, messageId).catch(() => undefined);
      const channel = this.#channelOf(turn);
      if (turn === undefined || channel === undefined) {
        for (const run of resumable)
          this.#end(run, 'expired', 'cannot resume: turn or channel gone');
        continue;
      }
      await this.#sayResuming(channel, turn);
      await runner.inbound(turn, channel, plan);
    }
    // The lease is held until the replies sent under it are confirmed: an instance that takes
    // the conversation over would find them `sending` and mark their runs unconfirmed.
    await runner.confirmed(conversationId);
  }

  /**
   * Agent work a crash or a stop left unfinished: a run whose reply was recorded but never
   * confirmed is marked `unconfirmed` (that reply is not sent again), one recorded more than
   * `resumeWithinMs` ago is marked `expired`, one started `maxRunAttempts` times `failed`, and
   * the others are run again (after the turns of their conversation already queued).
   */
  async recover(): Promise<void> {
    const { store, ledger, order, handling } = this.bot;
    if (ledger === undefined) return;
    let runs: AgentRun[];
    try {
      runs = await ledger.getRuns({ statuses: ['pending', 'running'] });
    } catch (cause) {
      this.bot.report(new StoreError('could not read the unfinished agent runs', { cause }));
      return;
    }
    const byTurn = new Map<string, AgentRun[]>();
    for (const run of runs) {
      if (handling.has(run.messageId)) continue; // delivered again since start
      if (run.replyId !== undefined) {
        // Settled in its conversation's order: the start does not wait for the platform.
        const settle = () => this.settleReply(run);
        void this.bot.track(() => order.conversation(run.conversationId, settle));
      } else if (await this.#resumes(run)) {
        byTurn.set(run.messageId, [...(byTurn.get(run.messageId) ?? []), run]);
      }
    }
    for (const open of byTurn.values()) {
      const { conversationId, messageId } = open[0]!;
      const turn = await store.getMessage(conversationId, messageId).catch(() => undefined);
      const channel = this.#channelOf(turn);
      if (turn === undefined || channel === undefined) {
        for (const run of open) this.#end(run, 'expired', 'cannot resume: turn or channel gone');
        continue;
      }
      await this.#sayResuming(channel, turn);
      this.#resume(turn, channel, open);
    }
  }

  /**
   * A turn delivered again that the store already had: its unfinished runs to resume (no
   * reply recorded, and not ended by `#notResumed`), if any. Alone, a run whose reply was
   * recorded is settled here (shared, under the conversation's lease).
   */
  async resumable(turn: NewMessage): Promise<RunPlan | undefined> {
    const runs = await this.bot.ledger?.getRuns({ messageId: turn.id }).catch(() => []);
    const open: AgentRun[] = [];
    for (const run of runs ?? []) {
      if (!isUnfinished(run)) continue;
      if (run.replyId !== undefined) {
        if (this.bot.leases === undefined) await this.settleReply(run);
        continue;
      }
      // Ended here as the recovery at start would have (it leaves a turn delivered again alone).
      const stop = this.#notResumed(run);
      if (stop === undefined) open.push(run);
      else this.#end(run, stop.status, stop.error);
    }
    return open.length === 0 ? undefined : planOf(open);
  }

  /** A run whose reply was recorded before a crash: settled (`settleReply`), then ended. */
  async settleReply(run: AgentRun): Promise<void> {
    const settled = await settleReply(this.bot.settling, run);
    if (settled !== undefined) this.#end(run, settled.status, settled.error);
  }

  /**
   * Whether an unfinished run is run again. If not, it is ended here: a run whose reply was
   * recorded is settled, the others as `#notResumed` says.
   */
  async #resumes(run: AgentRun): Promise<boolean> {
    if (run.replyId !== undefined) {
      await this.settleReply(run);
      return false;
    }
    const stop = this.#notResumed(run);
    if (stop !== undefined) this.#end(run, stop.status, stop.error);
    return stop === undefined;
  }

  /**
   * Why an unfinished run is not run again, if it is not: recorded too long ago, or started
   * `maxRunAttempts` times already (each start ended by the process stopping).
   */
  #notResumed(run: AgentRun): { status: 'expired' | 'failed'; error?: string } | undefined {
    const { resumeWithinMs = 600_000, maxRunAttempts: most = 3 } = this.bot.options;
    const age = Date.now() - Date.parse(run.createdAt);
    if (!(age <= resumeWithinMs)) return { status: 'expired' };
    if (!(run.attempts >= most)) return undefined; // a store that kept no count resumes it
    return {
      status: 'failed',
      error:
        `not resumed: the agent was started ${run.attempts} times on this turn and the bot ` +
        `stopped each time (maxRunAttempts ${most})`,
    };
  }

  #end(run: AgentRun, status: RunStatus, error?: string): void {
    const ended = { ...run, status, finishedAt: new Date().toISOString() };
    delete ended.reply;
    if (error !== undefined) ended.error = error;
    this.bot.write({ kind: 'run', run: ended }).catch((cause: unknown) => this.bot.report(cause));
  }

  #channelOf(turn: NewMessage | undefined): Channel | undefined {
    return this.bot.options.channels.find((c) => c.type === turn?.metadata.channelType);
  }

  /** Lets `channel` say that `turn`, left unanswered when the bot last stopped, is answered. */
  async #sayResuming(channel: Channel, turn: NewMessage): Promise<void> {
    try {
      await channel.resuming?.(turn);
    } catch (cause) {
      this.bot.report(
        new ColloquyError(`the ${channel.type} channel could not say it resumes`, { cause }),
      );
    }
  }

  /** Runs `open` (unfinished runs of `turn`) again, queued in the turn's conversation. */
  #resume(turn: NewMessage, channel: Channel, open: readonly AgentRun[]): Promise<void> {
    const { order, runner, handling } = this.bot;
    const work = this.bot.track(() =>
      order.message(turn, () => runner.inbound(turn, channel, planOf(open))),
    );
    const handled = work.finally(() => handling.delete(turn.id));
    handling.set(turn.id, handled);
    return handled;
  }
}

/** The plan that resumes `open` (unfinished runs of one turn) and runs nothing else. */
function planOf(open: readonly AgentRun[]): RunPlan {
  return {
    runs: new Map(open.map((run) => [run.agentId, withoutReply(run)])),
    only: new Set(open.map((run) => run.agentId)),
  };
}

/** A run as resumed: without what was read about its reply. */
function withoutReply(run: AgentRun): AgentRun {
  const { reply: _, ...rest } = run;
  return rest;
}
