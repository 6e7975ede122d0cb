/**
 * The drain: the one way agent work runs. `agent_runs` is the queue: intake's capture link
 * commits a turn with its pending runs and acknowledges it, and `drain(conversationId)` — in
 * one in-process queue per conversation, under the conversation's lease when the store is
 * shared — reads the conversation's unfinished runs oldest first, decides each once (run,
 * resume, settle, give up) and runs it (the rest of the inbound chain: `chain.ts`). Start-up
 * recovery, the shared sweep (a dead instance's conversations), a redelivered turn and an edit
 * answered again all come through here.
 *
 * The ledger is the authority for the work that must survive a crash; a turn this process was
 * handed comes with a hint of what it owes the turn beyond that. Interceptors run for every
 * turn, and an agent concerned with a whole thread is known only at dispatch (it takes a store
 * read), so no ledger row names that work: the hint (`Handed`) names the turn, its channel and
 * the runs intake committed with it, and the turn runs through the whole chain, its ledger rows
 * as the records of the agents that answer it. A row no hint names is resumed: only its agent
 * runs, once the turn is read back from the store. What a hint adds to the ledger
 * (interceptors, thread-concerned agents) is done at most once across a crash.
 *
 * Each conversation has at most one pass running and one waiting: what arrives while a pass
 * runs joins the waiting one, so one ledger read serves every turn queued behind a long run.
 *
 * A store read that fails for a passing reason leaves the runs it concerns as they are, and
 * the conversation is drained again after a backoff until a pass leaves none; meanwhile each
 * pass over it reads the ledger, so a later turn is answered after them once the store is back.
 * The failure is reported once per conversation (`LeftRuns`).
 */
import type { Channel } from '../channel.js';
import { ColloquyError, StoreError, mayPass, messageOf } from '../errors.js';
import type { Lease } from '../leases.js';
import { channelOf } from '../channel/place.js';
import type { AgentRun, RunStatus } from '../runs.js';
import type { NewMessage, StoredMessage } from '../types.js';
import type { Running } from './running.js';
import { settleReply } from './settle.js';
import type { HeldLease } from './shared.js';
import { LeftRuns } from './left.js';

/** A turn this process was handed: see the file's comment. */
export interface Handed {
  turn: NewMessage;
  channel: Channel;
  /** The pending runs intake committed with the turn. */
  runs: readonly AgentRun[];
  /**
   * Resolves once capture hands the turn on (the inbound chain's first link calls `next`), with
   * what became of its commit: new to the store, or one the store had already (`again`: a
   * redelivery); undefined when capture does not (the bot stopped first, or capture gave up on
   * it: a restart resumes its runs, the dead-letter file keeps it). `{ refused }`: new, stored
   * as that turn instead, with no runs (a press whose message another press used first).
   */
  committed: Promise<'new' | 'again' | { refused: NewMessage } | undefined>;
  /** An edited turn answered again (`rerunOnEdit`). */
  edited?: boolean;
}

/** What one call of `drain` asks for. */
export interface DrainWork {
  handed?: Handed;
  /** A lease on the conversation a sweep claimed: the pass runs under it. */
  taken?: Lease;
  /** Read the conversation's unfinished runs even when nothing handed needs it (recovery). */
  read?: boolean;
}

/** One pass over a conversation: everything asked for before it starts. */
interface Pass {
  handed: Handed[];
  /** Ends each handed turn's wait (`drain` resolves for it), once it has run or been dropped. */
  finished: Map<Handed, () => void>;
  taken: Lease | undefined;
  read: boolean;
  done: Promise<void>;
}

/** A handed turn once committed. */
type Committed = Handed & { as: 'new' | 'again'; finished: () => void };

/** Takes up agent work: see the file's comment. */
export class Drain {
  readonly #queues = new Map<string, { tail: Promise<void>; next: Pass | undefined }>();
  /** Handed turns not yet run (what a stop still finishes). */
  #pending = 0;
  /**
   * Alone: the turns this process has taken up, until the writes of their pass are tried. A
   * later pass may read their runs before the final status commits (a reply's confirmation
   * commits behind the next turn): they are not run twice.
   */
  readonly #inHand = new Map<string, number>();
  /** The conversations whose runs a passing store failure left (see the file's comment). */
  readonly #left: LeftRuns;
  /** Alone: recovery has not read the unfinished runs yet (retried): each pass reads them. */
  #unread = false;

  constructor(private readonly bot: Running) {
    this.#left = new LeftRuns(bot);
  }

  /** How many handed turns are queued or running. */
  get pending(): number {
    return this.#pending;
  }

  /**
   * Runs the conversation's agent work: after the pass under way, in the pass waiting (joined
   * when there is one). Resolves once the handed turn has run (else once that pass is done);
   * never rejects (failures are reported).
   *
   * @example
   * ```ts
   * await drain.drain('telegram:42', { read: true }); // what a crash left unfinished there
   * ```
   */
  drain(conversationId: string, work: DrainWork = {}): Promise<void> {
    let queue = this.#queues.get(conversationId);
    if (queue === undefined) {
      queue = { tail: Promise.resolve(), next: undefined };
      this.#queues.set(conversationId, queue);
    }
    const q = queue;
    let pass = q.next;
    if (pass === undefined) {
      const created: Pass = {
        handed: [],
        finished: new Map(),
        taken: undefined,
        read: false,
        done: q.tail,
      };
      const before = q.tail;
      // Tracked, uncounted: a stop waits for the pass (its lease released, its rows decided).
      const done: Promise<void> = this.bot.track(async () => {
        try {
          await before;
          if (q.next === created) q.next = undefined;
          await this.#retried(conversationId, created);
        } finally {
          for (const finished of created.finished.values()) finished();
          if (q.tail === created.done) this.#queues.delete(conversationId);
        }
      }, false);
      created.done = done;
      q.tail = done;
      q.next = created;
      pass = created;
    }
    let waited: Promise<void> = pass.done;
    if (work.handed !== undefined) {
      let finished!: () => void;
      waited = new Promise<void>((resolve) => {
        finished = () => {
          if (!pass.finished.delete(work.handed!)) return;
          this.#pending--;
          resolve();
        };
      });
      pass.handed.push(work.handed);
      pass.finished.set(work.handed, finished);
      this.#pending++;
    }
    if (work.read === true) pass.read = true;
    // A second claim of the lease is the same lease (one holder): the pass releases it.
    if (work.taken !== undefined) pass.taken ??= work.taken;
    // Each call is a unit of work in flight (`idle`, `stop` and a channel's `capacity` count it).
    return this.bot.track(() => waited);
  }

  /**
   * Agent work a crash or a stop left unfinished, at start (alone): each conversation with
   * unfinished runs is drained (after the turns of it already handed over). A read that fails
   * for a passing reason is tried again after a backoff (`attempt`: the retries so far).
   */
  async recover(attempt = 0): Promise<void> {
    const { ledger } = this.bot;
    if (ledger === undefined) return;
    let runs: AgentRun[];
    try {
      runs = await ledger.getRuns({ statuses: ['pending', 'running'] });
    } catch (cause) {
      // A passing failure is reported once, not at every retry.
      if (attempt === 0 || !mayPass(cause)) {
        this.bot.report(new StoreError('could not read the unfinished agent runs', { cause }));
      }
      if (!mayPass(cause)) return;
      this.#unread = true;
      this.#left.later(attempt, () => void this.bot.track(() => this.recover(attempt + 1), false));
      return;
    }
    if (attempt > 0) {
      this.bot.logger.info('the unfinished agent runs are read again', { retries: attempt });
    }
    this.#unread = false;
    for (const conversationId of new Set(runs.map((run) => run.conversationId))) {
      void this.drain(conversationId, { read: true });
    }
  }

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
      if (conversationId === undefined) await leases.release(lease);
      else void this.drain(conversationId, { taken: lease, read: true });
    }
  }

  /**
   * Runs a pass, reading the ledger when a passing failure left runs of the conversation (or
   * recovery has not read them); when the pass leaves runs, drains the conversation again after
   * a backoff, until a pass leaves none.
   */
  async #retried(conversationId: string, pass: Pass): Promise<void> {
    if (this.#left.begin(conversationId) || this.#unread) pass.read = true;
    let passed = false;
    try {
      await this.#pass(conversationId, pass);
      passed = true;
    } finally {
      this.#left.end(conversationId, passed, () => void this.drain(conversationId, { read: true }));
    }
  }

  /**
   * One pass: the handed turns' commits awaited in arrival order, then, when the ledger is to
   * be read, under the conversation's lease when shared (held until the replies sent under it
   * are confirmed: an instance that takes the conversation over would find them `sending`).
   */
  async #pass(conversationId: string, pass: Pass): Promise<void> {
    const turns: Committed[] = [];
    for (const handed of pass.handed) {
      const as = await handed.committed;
      const finished = pass.finished.get(handed) ?? (() => undefined);
      if (as === undefined) finished();
      else if (typeof as === 'object') {
        turns.push({ ...handed, turn: as.refused, runs: [], as: 'new', finished });
      } else turns.push({ ...handed, as, finished });
    }
    const leases = this.bot.leases;
    const read =
      pass.read ||
      pass.taken !== undefined ||
      turns.some((turn) => turn.as === 'again') ||
      (leases !== undefined && turns.some((turn) => turn.runs.length > 0));
    if (!read || this.bot.ledger === undefined) {
      await this.#run(conversationId, turns, undefined, undefined);
      return;
    }
    if (leases === undefined) {
      await this.#run(conversationId, turns, await this.#unfinished(conversationId), undefined);
      return;
    }
    const work = async (held: HeldLease) => {
      const open = await this.bot.ledger!.getRuns({
        conversationId,
        statuses: ['pending', 'running'],
      });
      await this.#run(conversationId, turns, open, held);
      await this.bot.runner.confirmed(conversationId);
      return true;
    };
    // A claimed lease that ran out while the pass waited is taken again (or waited for).
    const ran = pass.taken === undefined ? undefined : await leases.holding(pass.taken, work);
    // Not held when the bot stops while another instance holds it: the runs stay pending.
    if (ran === undefined) await leases.hold(conversationId, work);
  }

  /** Alone: the conversation's unfinished runs, none when they cannot be read (reported, left). */
  async #unfinished(conversationId: string): Promise<AgentRun[]> {
    try {
      return await this.bot.ledger!.getRuns({ conversationId, statuses: ['pending', 'running'] });
    } catch (cause) {
      const error = new StoreError('could not read the unfinished agent runs', {
        cause,
        conversationId,
      });
      if (mayPass(cause)) this.#left.leave(conversationId, error);
      else this.bot.report(error);
      return [];
    }
  }

  /**
   * Runs a pass's work in order: the handed turns in arrival order, each after the unfinished
   * runs of older turns no handed turn names (read from the ledger; a turn's place is that of
   * its oldest run), then the rest of those. `open`: the unfinished runs read, undefined when
   * not read.
   */
  async #run(
    conversationId: string,
    turns: readonly Committed[],
    open: readonly AgentRun[] | undefined,
    held: HeldLease | undefined,
  ): Promise<void> {
    const alone = this.bot.leases === undefined;
    const byTurn = new Map<string, AgentRun[]>();
    for (const run of open ?? []) {
      if (alone && this.#inHand.has(run.messageId)) continue;
      byTurn.set(run.messageId, [...(byTurn.get(run.messageId) ?? []), run]);
    }
    // Alone, a turn an earlier pass took up is not run again: a delivery whose retried commit
    // found the turn stored by a later delivery is handed after it.
    const earlier = alone ? new Set(turns.filter((t) => this.#inHand.has(t.turn.id))) : new Set();
    const taken = [...new Set([...byTurn.keys(), ...turns.map((handed) => handed.turn.id)])];
    if (alone) for (const id of taken) this.#inHand.set(id, (this.#inHand.get(id) ?? 0) + 1);
    try {
      const order = [...byTurn.keys()];
      const handedIds = new Set(turns.map((handed) => handed.turn.id));
      const done = new Set<string>();
      const resumeBefore = async (end: number) => {
        for (const id of order.slice(0, end)) {
          // Lost to another instance (this one paused past the expiry): it answers the rest.
          if (held?.lost === true || done.has(id) || handedIds.has(id)) continue;
          done.add(id);
          await this.#resume(conversationId, id, byTurn.get(id)!);
        }
      };
      for (const handed of turns) {
        const { id } = handed.turn;
        const at = order.indexOf(id);
        if (at > 0) await resumeBefore(at);
        if (held?.lost === true) return;
        // The same turn handed twice (a redelivery) is run once.
        if ((done.has(id) || earlier.has(handed)) && handed.edited !== true) {
          handed.finished();
          continue;
        }
        done.add(id);
        // Alone, a new turn's rows are this process's own: its hint carries them as committed.
        const read = open !== undefined && (!alone || handed.as === 'again');
        try {
          await this.#handed(handed, read ? (byTurn.get(id) ?? []) : undefined);
        } finally {
          handed.finished();
        }
      }
      await resumeBefore(order.length);
    } finally {
      if (alone) void this.#release(conversationId, taken);
    }
  }

  /** Gives back turns taken up, once the writes their pass asked for are tried. */
  async #release(conversationId: string, taken: readonly string[]): Promise<void> {
    await this.bot.runner.confirmed(conversationId);
    await this.bot.capture.settled();
    for (const id of taken) {
      const left = (this.#inHand.get(id) ?? 1) - 1;
      if (left > 0) this.#inHand.set(id, left);
      else this.#inHand.delete(id);
    }
  }

  /** Runs a handed turn. `rows`: its unfinished runs in the ledger, when it was read. */
  async #handed(handed: Committed, rows: readonly AgentRun[] | undefined): Promise<void> {
    const { runner } = this.bot;
    const { turn, channel } = handed;
    if (handed.edited === true) return runner.edited(turn, channel);
    if (handed.as === 'new' && rows === undefined) {
      return runner.inbound(turn, channel, handed.runs, false);
    }
    const resumable = await this.#resumable(rows ?? []);
    if (handed.as === 'again') {
      if (resumable.length > 0) await runner.inbound(turn, channel, resumable, true);
      return;
    }
    // Some of its runs answered by another instance meanwhile: the rest are resumed.
    if (resumable.length === handed.runs.length) {
      await runner.inbound(turn, channel, resumable, false);
    } else if (resumable.length > 0) {
      await runner.inbound(turn, channel, resumable, true);
    }
  }

  /**
   * Resumes the unfinished runs of a turn this process was not handed (read from the store).
   * A read that fails for a passing reason leaves them as they are, read again after a backoff
   * (`#retried`); only a turn or channel gone, or a turn the store can never read, ends them.
   */
  async #resume(conversationId: string, messageId: string, runs: readonly AgentRun[]) {
    const resumable = await this.#resumable(runs);
    if (resumable.length === 0) return;
    let turn: StoredMessage | undefined;
    try {
      turn = await this.bot.store.getMessage(conversationId, messageId);
    } catch (cause) {
      const where = { cause, conversationId, messageId };
      const error = new StoreError(`could not read turn ${messageId} to resume it`, where);
      if (mayPass(cause)) return this.#left.leave(conversationId, error);
      this.bot.report(error);
      for (const run of resumable) this.#end(run, 'failed', `cannot resume: ${messageOf(cause)}`);
      return;
    }
    const { channels } = this.bot.options;
    const type = turn?.metadata.channelType;
    const channel =
      type === undefined
        ? undefined
        : channelOf(channels, type, conversationId, turn?.metadata.via);
    if (turn === undefined || channel === undefined) {
      for (const run of resumable) this.#end(run, 'expired', 'cannot resume: turn or channel gone');
      return;
    }
    await this.#sayResuming(channel, turn);
    await this.bot.runner.inbound(turn, channel, resumable, true);
  }

  /** The runs of `runs` run again (as resumed: without what was read about their reply). */
  async #resumable(runs: readonly AgentRun[]): Promise<AgentRun[]> {
    const resumable: AgentRun[] = [];
    for (const run of runs) {
      if (!(await this.#resumes(run))) continue;
      const { reply: _, ...rest } = run;
      resumable.push(rest);
    }
    return resumable;
  }

  /**
   * Whether an unfinished run is run again. If not, it is ended here: a run whose reply was
   * recorded is settled (`settleReply`), the others as `#notResumed` says.
   */
  async #resumes(run: AgentRun): Promise<boolean> {
    if (run.replyId !== undefined) {
      const settled = await settleReply(this.bot.settling, run);
      if (settled !== undefined && 'again' in settled)
        this.#left.leave(run.conversationId, settled.again);
      else if (settled !== undefined) this.#end(run, settled.status, settled.error);
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
}
