/** Reading what a prompt is built from: the turns, the thread's opening turn, the summary. */
import { threadConcerns } from '../agent.js';
import { StoreError } from '../errors.js';
import type { ColloquyError } from '../errors.js';
import type { ConversationStore, GetOptions } from '../store.js';
import type { Tokenizer } from '../tokenizer.js';
import type { ConversationScope, NewMessage, StoredMessage } from '../types.js';

/** What assembly reads with, and where it reports what it worked around. */
export interface Context {
  store: ConversationStore;
  conversationId: string;
  agentId: string;
  agentName: string;
  tokenizer: Tokenizer;
  now: () => Date;
  report: (error: ColloquyError) => void;
}

/** The options `loadTurns` reads (see `AssemblerOptions`). */
export interface LoadOptions {
  addressedOnlyMode: boolean;
  maxTurnsToLoad: number;
  scope?: ConversationScope;
  timeWindowMinutes?: number;
  currentMessage?: NewMessage;
}

/**
 * The turns assembly may use, oldest first: filtered by the store when addressed-only, and up
 * to the current message's millisecond; a store failure is reported and reads as none.
 */
export async function loadTurns(
  ctx: Context,
  aliases: ReadonlySet<string>,
  o: LoadOptions,
): Promise<StoredMessage[]> {
  const query: GetOptions = { limit: o.maxTurnsToLoad };
  if (o.addressedOnlyMode && !(await ownThread(ctx, aliases))) {
    query.concerning = { aliases: [...aliases] };
  }
  if (o.scope !== undefined) query.scope = o.scope;
  const at = o.currentMessage && Date.parse(o.currentMessage.timestamp);
  // The current turn's millisecond included: `upTo` orders the turns written within it.
  if (at !== undefined && !Number.isNaN(at)) query.before = new Date(at + 1).toISOString();
  if (o.timeWindowMinutes !== undefined) {
    query.sinceTimestamp = new Date(
      ctx.now().getTime() - o.timeWindowMinutes * 60_000,
    ).toISOString();
  }
  try {
    return await ctx.store.get(ctx.conversationId, query);
  } catch (cause) {
    ctx.report(
      new StoreError('Could not load the history for prompt assembly', {
        cause,
        conversationId: ctx.conversationId,
      }),
    );
    return [];
  }
}

/**
 * The turns up to and including `current`, in the store's order (timestamp, then sequence):
 * a turn's prompt never holds what was written after it, such as the next turns of a burst
 * or a reply to an earlier turn that came in while this one waited.
 */
export function upTo(current: NewMessage | undefined, turns: StoredMessage[]): StoredMessage[] {
  if (current === undefined) return turns;
  const at = turns.findIndex((turn) => turn.id === current.id);
  if (at >= 0) return turns.slice(0, at + 1);
  const time = Date.parse(current.timestamp);
  return turns.filter((turn) => !(Date.parse(turn.timestamp) > time));
}

/** True when the conversation is a thread the agent opened: all of it concerns the agent. */
async function ownThread(ctx: Context, aliases: ReadonlySet<string>): Promise<boolean> {
  try {
    return await threadConcerns(ctx.store, ctx.conversationId, [...aliases]);
  } catch {
    return false; // the history read that follows reports the store failure
  }
}

/**
 * A thread's turns, preceded by the turn that opened it when that one lives in another
 * conversation (`metadata.threadParent`): the question a thread answers stays in view.
 */
export async function withThreadParent(
  ctx: Context,
  turns: StoredMessage[],
  current: NewMessage | undefined,
): Promise<StoredMessage[]> {
  const ref = [current, ...turns].find((turn) => turn?.metadata.threadParent)?.metadata
    .threadParent;
  if (ref === undefined || turns.some((turn) => turn.id === ref.id)) return turns;
  try {
    const parent = await ctx.store.getMessage(ref.conversationId, ref.id);
    return parent === undefined || parent.deletedAt !== undefined ? turns : [parent, ...turns];
  } catch (cause) {
    ctx.report(
      new StoreError('Could not load the turn that opened the thread', {
        cause,
        conversationId: ref.conversationId,
        messageId: ref.id,
      }),
    );
    return turns;
  }
}

export async function loadSummary(ctx: Context): Promise<{ ok: boolean; summary?: StoredMessage }> {
  try {
    return { ok: true, summary: await ctx.store.getSummary(ctx.conversationId, ctx.agentId) };
  } catch (cause) {
    ctx.report(
      new StoreError('Could not load the rolling summary for prompt assembly', {
        cause,
        conversationId: ctx.conversationId,
      }),
    );
    return { ok: false };
  }
}
