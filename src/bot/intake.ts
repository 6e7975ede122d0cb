/**
 * Intake: what a channel hands the bot. Every event is committed through capture in the order
 * it arrived (a turn a channel is still completing holds back the later events of its
 * conversation), and its handler resolves once it is committed, so the channel acknowledges
 * only what is stored. A new turn passes the inbound chain's first link, capture
 * (`captureLink` in `chain.ts`): committed with its pending runs, acknowledged, then handed to
 * the drain (`drain.ts`), which runs the rest of the chain in its conversation's order; edits,
 * deletions and reactions are recorded, and an edit answered again (`rerunOnEdit`) is handed to
 * the drain too, as is a reaction answered (`answerReactions`: a turn of its own, passing
 * capture like any new turn).
 */
import { inboundChain } from '../chain.js';
import type { Arriving } from '../chain.js';
import type { Channel, ChannelHandlers, ChannelState, Delivery } from '../channel.js';
import { receivedVia } from '../channel/place.js';
import { StoreError } from '../errors.js';
import { RecentPresses, UsedMessages, resolveInteraction } from '../interactions.js';
import type { AgentRun } from '../runs.js';
import { takesRuns } from '../uses.js';
import type { AppendResult, RunLedger, StoreOperation } from '../store.js';
import { TurnOrder, refKey } from '../turn-order.js';
import type { MessageDeletion, MessageEdit, NewMessage } from '../types.js';
import type { Drain } from './drain.js';
import { eventually } from './eventually.js';
import { isBefore } from '../timestamp.js';
import { handleReaction } from './reactions.js';
import type { Running } from './running.js';
import { withAgentMentions } from './turn.js';

/** How many recent turns are kept to answer their edits again (`rerunOnEdit`). */
const RECENT_TURNS = 1000;

/** What became of an event's write: see `Intake.commit`. */
type CaptureOutcome = 'stored' | 'duplicate' | 'buffered' | 'rejected';

/** A new turn once capture hands it on: see `Handed.committed`. */
type Entered = 'new' | 'again' | { refused: NewMessage } | undefined;

const noop = () => {};

/** A bot's intake: see the file's comment. */
export class Intake {
  /** False before start and once stop has stopped the channels: events are refused. */
  accepting = false;
  readonly #recent = new Map<
    string,
    { message: NewMessage; channel: Channel; editedAt?: string }
  >();
  readonly #presses = new RecentPresses();
  readonly #used = new UsedMessages();
  /**
   * New turns whose append capture holds, with their delivery: a delivery of one of them
   * again gets the first delivery's answer instead of queueing another copy (a platform that
   * redelivers every few hundred milliseconds while the store is away would fill capture's
   * buffer with copies). Once the append is committed, a delivery again passes capture as
   * usual (found stored, its runs written again), and is answered once they are.
   */
  readonly #uncommitted = new Map<string, Promise<Delivery>>();
  /**
   * The order events are committed in: a turn a channel is still completing holds back the
   * later turns of its conversation (and changes of it), and nothing else.
   */
  readonly #intake: TurnOrder;

  constructor(
    private readonly bot: Running,
    private readonly drain: Drain,
    private readonly capacity: (limit: number) => Promise<void>,
  ) {
    this.#intake = new TurnOrder((error) => bot.report(error));
  }

  /** The handlers `channel` hands its events to. */
  handlers(channel: Channel): ChannelHandlers {
    const { ledger, leases } = this.bot;
    return {
      message: (message, given) => this.message(message, channel, given),
      edit: (edit, complete) =>
        this.#inOrder(
          { waiting: this.#intake.hasRef(edit), complete: complete && (() => complete) },
          (work) => this.#intake.change(edit, work),
          (whole) => this.#edited(whole),
          edit,
        ),
      delete: (deletion: MessageDeletion) =>
        this.#inOrder(
          { waiting: this.#intake.hasRef(deletion) },
          (work) => this.#intake.change(deletion, work),
          (event) =>
            this.#change(
              this.commit({ kind: 'delete', deletion: event }),
              async (committed) => void (await committed),
            ),
          deletion,
        ),
      reaction: (change, complete) =>
        handleReaction(this.bot, change, channel, (turn) => this.message(turn, channel), complete),
      capacity: (limit) => this.capacity(limit),
      error: (error) => this.bot.report(error),
      botIds: () => siblingsOf(this.bot.options.channels, channel),
      ...(ledger !== undefined && { state: this.#state(ledger) }),
      ...(leases !== undefined && {
        lead: (name, work, signal) =>
          leases.lead(name, work, signal, (error) => this.bot.report(error)),
      }),
    };
  }

  /**
   * A turn `channel` hands over (`given`: the turn made whole, when the channel completes it).
   * An interaction is resolved in its conversation's order, once the turns before it are
   * handed to capture: of two presses of a `once` button's message, the later sees the first.
   */
  message(message: NewMessage, channel: Channel, given?: Promise<NewMessage>): Promise<Delivery> {
    const complete = this.#interaction(message, given, channel);
    return this.#inOrder(
      { waiting: this.#intake.has(message.conversationId), complete },
      (work) => this.#intake.message(message, work),
      (turn) => this.#inbound(turn, channel),
      message,
    );
  }

  /**
   * A new turn (with the bot it came `via`, where the bot has several of its platform:
   * `receivedVia`), through the inbound chain's first link (`inboundChain.arriving`): capture
   * commits it at once (in arrival order, with whatever else waits: group commit) with its
   * pending runs, answers the delivery, and hands the turn on to its place in its
   * conversation's queue, taken as it arrived (its order); the drain runs it from there.
   * Resolves when committed; rejects with a `StoreError` when not, so the channel does not
   * acknowledge it. The turn is run once per process however often it is delivered; a turn the
   * store had before this process saw it has only its unfinished runs resumed.
   */
  #inbound(message: NewMessage, channel: Channel): Promise<Delivery> {
    const queued = this.#uncommitted.get(message.id);
    if (queued !== undefined) return queued;
    const received = receivedVia(this.bot.options.channels, channel, message);
    const turn = withAgentMentions(received, this.bot.agentsOn(channel));
    const runs = this.bot.runner.planned(turn, channel);
    const { conversationId } = turn;
    // Its place in the conversation's queue is taken now (the conversation's order is the
    // order of arrival); the turn enters it once capture hands it on.
    let handOn!: (as: Entered) => void;
    const committed = new Promise<Entered>((resolve) => (handOn = resolve));
    const drained = this.drain.drain(conversationId, {
      handed: { turn, channel, runs, committed },
    });
    // The conversation's next turn went on once the replies were sent; this delivery is
    // handled once their confirmations are committed too (`idle` and `stop` wait for them).
    const handled = drained.then(() => this.bot.runner.confirmed(conversationId));
    // The channel's answer, which capture gives once the first try is known.
    let answer!: (delivery: Promise<Delivery>) => void;
    const delivery = new Promise<Delivery>((resolve) => (answer = resolve));
    let stored: Promise<Entered> = Promise.resolve(undefined);
    const arriving: Arriving<CaptureOutcome> = {
      turn,
      commit: () => {
        const writes = this.#commitTurn(turn, channel, runs, delivery);
        stored = writes.stored;
        return { tried: writes.tried, committed: stored.then((as) => as !== undefined) };
      },
      acknowledge: (tried) => {
        answer(acknowledged(tried, turn.id, conversationId, handled));
        return delivery.then(noop, noop);
      },
    };
    const queue = async () => {
      handOn(await stored);
      await handled;
    };
    void inboundChain
      .arriving(queue)(arriving)
      .catch((error: unknown) => {
        answer(Promise.reject(error));
        this.bot.report(error);
      })
      .finally(() => handOn(undefined));
    return delivery;
  }

  /**
   * Capture's writes for a new turn: the turn and its pending runs, handed over together (one
   * commit, most of the time). `tried`: what became of the first try; `stored`: the turn once
   * committed (new, `again`: found stored, or `{ refused }`: a press the store recorded refused
   * `used`, with no runs, as another press used its message first), undefined when it never is
   * here (the bot stops first or capture gives up on it: a restart resumes its pending runs,
   * and a turn given up on is in the dead-letter file). Until then a delivery of it again gets
   * `delivery`.
   */
  #commitTurn(
    turn: NewMessage,
    channel: Channel,
    runs: readonly AgentRun[],
    delivery: Promise<Delivery>,
  ): { tried: Promise<CaptureOutcome>; stored: Promise<Entered> } {
    const tracked = this.bot.capture.track({ kind: 'append', message: turn });
    const appended = tracked.answered as Promise<AppendResult>;
    const committed = tracked.committed as Promise<AppendResult>;
    committed.catch(() => {}); // awaited only when the first try failed: never left unhandled
    const written = runs.map((run) => this.bot.write({ kind: 'run', run, create: true }));
    const tried: Promise<CaptureOutcome> = Promise.all([appended, ...written]).then(
      ([result]) => (result.inserted ? 'stored' : 'duplicate'),
      (error: unknown) =>
        error instanceof StoreError && error.transient === false ? 'rejected' : 'buffered',
    );
    // Not committed at the first try: capture tries again, and the turn goes on once it is.
    const stored = appended
      .catch(() => eventually(committed, this.bot.stopping))
      .then(async (result) => {
        if (result === undefined) return undefined;
        this.#remember(turn, channel);
        await Promise.allSettled(written);
        if (!result.inserted) return 'again' as const;
        // The store refused the press: another press (of any instance) used its message first.
        const refused = !takesRuns(result.message) && takesRuns(turn);
        return refused ? { refused: result.message } : ('new' as const);
      });
    this.#uncommitted.set(turn.id, delivery);
    const forget = () => this.#uncommitted.delete(turn.id);
    void committed.then(forget, forget);
    const settled = () => this.#used.settled(turn);
    void stored.then(settled, settled);
    return { tried, stored };
  }

  /**
   * Hands `event` (or what `complete` makes of it, called in its place) over in intake order:
   * at once when it is whole and nothing of its conversation (or message) is `waiting`, else
   * through `queue`, which runs it after what waits. An event that arrived before stop began is
   * handed over even if stop begins meanwhile (stop waits for it). Rejects when the channel
   * could not complete it.
   */
  #inOrder<T>(
    place: { waiting: boolean; complete?: (() => Promise<T>) | undefined },
    queue: (work: () => Promise<void>) => Promise<void>,
    handOver: (event: T) => Promise<Delivery>,
    event: T,
  ): Promise<Delivery> {
    if (!this.accepting) return Promise.reject(notAccepting());
    const { waiting, complete } = place;
    if (!waiting && complete === undefined) return handOver(event);
    return new Promise((resolve, reject) => {
      void this.bot.track(() =>
        queue(async () => {
          try {
            resolve(handOver(complete === undefined ? event : await complete()));
          } catch (error) {
            reject(error);
          }
        }),
      );
    });
  }

  /**
   * A turn made whole, and an interaction turn resolved: who answers it (see
   * `resolveInteraction`); called in the turn's place in its conversation's order.
   */
  #interaction(
    message: NewMessage,
    complete: Promise<NewMessage> | undefined,
    channel: Channel,
  ): (() => Promise<NewMessage>) | undefined {
    if (message.metadata.interaction === undefined) return complete && (() => complete);
    const agentIds = this.bot.agentsOn(channel).map((agent) => agent.id);
    const { commands } = this.bot.options;
    const presses = { repeated: this.#presses.repeats(message), used: this.#used };
    return () =>
      (complete ?? Promise.resolve(message)).then((turn) =>
        resolveInteraction(turn, commands, this.bot.store, agentIds, presses),
      );
  }

  #edited(edit: MessageEdit): Promise<Delivery> {
    return this.#change(this.commit({ kind: 'edit', edit }), async (committed) => {
      await committed;
      const recent = this.#recent.get(refKey(edit));
      // A redelivered edit changes nothing, nor does one older than the edit answered last:
      // neither is answered again.
      if (recent === undefined || recent.message.content === edit.content) return;
      if (isBefore(edit.editedAt, recent.editedAt)) return;
      const { metadata, conversationId } = recent.message;
      const turn: NewMessage = {
        ...recent.message,
        content: edit.content,
        metadata: { ...metadata, rerunForEdit: (metadata.rerunForEdit ?? 0) + 1 },
      };
      recent.message = turn;
      recent.editedAt = edit.editedAt;
      // An edit answered again is a turn of its conversation: drained in its order.
      const { channel } = recent;
      const committedTurn = Promise.resolve('new' as const);
      await this.drain.drain(conversationId, {
        handed: { turn, channel, runs: [], committed: committedTurn, edited: true },
      });
      await this.bot.runner.confirmed(conversationId);
    });
  }

  /** Hands `op` to capture; what became of it, never a rejection. */
  commit(op: StoreOperation): Promise<CaptureOutcome> {
    return this.bot.capture.write(op).then(
      (value) =>
        op.kind === 'append' && !(value as { inserted: boolean }).inserted ? 'duplicate' : 'stored',
      (error: unknown) =>
        error instanceof StoreError && error.transient === false ? 'rejected' : 'buffered',
    );
  }

  /** An edit or deletion: committed in arrival order, then `then` runs in its turn's order. */
  #change(
    committed: Promise<CaptureOutcome>,
    then: (committed: Promise<CaptureOutcome>) => Promise<void>,
  ): Promise<Delivery> {
    const handled = this.bot.track(() => then(committed));
    return acknowledged(committed, undefined, undefined, handled);
  }

  /** Channels' small values, read from the store and written through capture. */
  #state(ledger: RunLedger): ChannelState {
    return {
      get: (key) => ledger.getState(key),
      set: async (key, value) => void (await this.bot.write({ kind: 'state', key, value })),
    };
  }

  /**
   * Remembers a turn handed over, to answer its edits again (`rerunOnEdit`). A turn delivered
   * again keeps what its edits made of it: its text and their count, which numbers the runs
   * that answer the next edit.
   */
  #remember(message: NewMessage, channel: Channel): void {
    if (this.bot.options.rerunOnEdit !== true || message.metadata.messageId === undefined) return;
    const { channelType, channelId, messageId } = message.metadata;
    const key = refKey({ channelType, channelId, messageId });
    if (this.#recent.has(key)) return;
    this.#recent.set(key, { message, channel });
    if (this.#recent.size > RECENT_TURNS) this.#recent.delete(this.#recent.keys().next().value!);
  }
}

/**
 * The handler's answer for an event whose commit is `committed`: a `Delivery` once stored (or
 * found stored), a `StoreError` when the store failed (it is retried behind, but the platform
 * must not take the event as received).
 */
async function acknowledged(
  committed: CaptureOutcome | Promise<CaptureOutcome>,
  messageId: string | undefined,
  conversationId: string | undefined,
  handled: Promise<void>,
): Promise<Delivery> {
  const outcome = await committed;
  if (outcome === 'stored' || outcome === 'duplicate') return { handled };
  throw new StoreError(
    outcome === 'buffered'
      ? 'the event is not committed yet (the store is failing; capture retries it)'
      : 'the store rejected the event',
    { conversationId, messageId, transient: outcome === 'buffered' },
  );
}

/** The bot identity ids of the other channels of `channel`'s type (`ChannelHandlers.botIds`). */
function siblingsOf(channels: readonly Channel[], channel: Channel): string[] {
  return channels.flatMap((c) =>
    c !== channel && c.type === channel.type ? (c.botIdentity?.id ?? []) : [],
  );
}

/** Why an event handed over before start or after stop is refused (the platform sends it again). */
export function notAccepting(): StoreError {
  return new StoreError('the bot is not running; the event was not committed', {
    transient: true,
  });
}
