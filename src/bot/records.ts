/**
 * The rows an agent run writes besides its reply: its `agent_runs` row as it goes (pending,
 * running, answered…), and the tool turns the agent records. A failed write is reported with
 * its turn, never thrown into the run.
 */
import { ColloquyError, StoreError, messageOf } from '../errors.js';
import { runId } from '../runs.js';
import type { AgentRun, RunStatus } from '../runs.js';
import { isoTimestamp } from '../types.js';
import type { NewMessage } from '../types.js';
import type { Write } from './outbox.js';

/** A run not started yet. */
export function newRun(turn: NewMessage, agentId: string, createdAt: string): AgentRun {
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

/** Writes a runner's run rows and tool turns: see the file's comment. */
export class RunRecords {
  constructor(private readonly deps: { write: Write; report(error: ColloquyError): void }) {}

  /** Writes a run row (a copy: the run goes on changing); a failure is reported, not thrown. */
  save(run: AgentRun): Promise<void> {
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

  /** Ends `run` with `status`, now. */
  finish(run: AgentRun, status: RunStatus): void {
    run.status = status;
    run.finishedAt = isoTimestamp();
    void this.save(run);
  }

  /**
   * A sent reply whose confirmation was not committed: the platform has it, the record says
   * `sending`, and its run, answered in that commit, is `unconfirmed`.
   */
  unconfirmed(reply: NewMessage, run: AgentRun | undefined, cause: unknown): void {
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
    this.finish(run, 'unconfirmed');
  }

  /** Records a turn the agent wrote while it ran (a tool call or its result). */
  async tool(turn: NewMessage): Promise<void> {
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
}
