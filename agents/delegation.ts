import { jsonSchema, tool } from 'ai';
import type { Tool } from 'ai';
import type { Agent, AgentRunContext } from '../src/agent.js';
import { messageOf } from '../src/errors.js';
import { isoTimestamp, samePlace } from '../src/types.js';
import type { NewMessage, Participant } from '../src/types.js';
import { validateObject } from './tools/validate.js';

/**
 * The name of the built-in tool an agent hands a task to another agent with.
 *
 * @example
 * ```ts
 * class Planner extends BaseAgent { override delegates = [hotels]; } // gets a `delegate` tool
 * ```
 */
export const DELEGATE_TOOL_NAME = 'delegate';

/** Most delegations in a chain (an agent delegating to one that delegates again…). */
const MAX_DELEGATION_DEPTH = 3;

/**
 * One task handed to another agent.
 *
 * @example
 * ```ts
 * const request: DelegationRequest = { from: planner, to: hotels, task: 'Book a hotel in Lyon', input, ctx };
 * ```
 */
export interface DelegationRequest {
  /** The agent handing the task over. */
  from: Pick<Agent, 'id' | 'name'>;
  /** The agent that does it. */
  to: Agent;
  task: string;
  /** The turn the delegating agent is answering. */
  input: NewMessage;
  /** The delegating agent's run context (store, record, depth…). */
  ctx: AgentRunContext;
  /** The delegating tool call's id, when the `delegate` tool made the request. */
  toolCallId?: string;
}

/**
 * What came back: the delegated agent's answer and the id of the delegation (its task row).
 *
 * @example
 * ```ts
 * const { answer, id } = await delegate(request);
 * ```
 */
export interface DelegationResult {
  id: string;
  agentId: string;
  answer: string;
}

/**
 * Hands a task to another agent and returns its answer. Stored as turns, so SQL shows who
 * delegated what: the task (a turn by the delegating agent, mentioning the delegate,
 * `metadata.delegatedTo` / `delegatedBy` / `delegationId` = its own id), the delegate's tool
 * rows and its answer (`metadata.delegationId`, `delegatedBy`, `delegationAnswer` on the
 * answer; each a reply to the delegating agent, `replyToParticipantId`). The delegate sees the person's original request, the delegating agent's tool
 * results and its own, never other delegations' tool results; the delegating agent sees the
 * delegate's tool results and answer in its later prompts.
 *
 * @example
 * ```ts
 * import { delegate } from 'colloquy';
 * class Planner extends BaseAgent {
 *   override async run(input: NewMessage, ctx: AgentRunContext) {
 *     const { answer } = await delegate({ from: this, to: hotels, task: 'Find a hotel', input, ctx });
 *     return { output: `Hotels says: ${answer}` };
 *   }
 * }
 * ```
 */
export async function delegate(request: DelegationRequest): Promise<DelegationResult> {
  const { from, to, task, input, ctx } = request;
  const chain = (ctx.delegation?.chain ?? 0) + 1;
  if (chain > MAX_DELEGATION_DEPTH) {
    throw new Error(`delegation is nested ${chain} deep; at most ${MAX_DELEGATION_DEPTH}`);
  }
  const id = `${input.id}:delegation:${request.toolCallId ?? Date.now().toString(36)}:${to.id}`;
  const author: Participant = { kind: 'agent', id: from.id, displayName: from.name };
  const place = samePlace(input);
  const taskTurn: NewMessage = {
    id,
    conversationId: input.conversationId,
    participant: author,
    content: task,
    timestamp: isoTimestamp(),
    scope: input.scope,
    metadata: {
      ...place,
      mentions: [to.id],
      delegationId: id,
      delegatedBy: from.id,
      delegatedTo: to.id,
      ...(request.toolCallId === undefined ? {} : { delegateCallId: request.toolCallId }),
    },
  };
  await ctx.record(taskTurn);
  const tag = (turn: NewMessage): NewMessage => ({
    ...turn,
    metadata: {
      ...turn.metadata,
      // A reply to the delegating agent: its addressed-only reads find these rows.
      replyToParticipantId: from.id,
      delegationId: id,
      delegatedBy: from.id,
    },
  });
  // The delegate answers the delegating agent, not the person: nothing of it streams into the
  // person's live reply.
  const { stream: _personsReply, ...own } = ctx;
  const result = await to.run(taskTurn, {
    ...own,
    aliases: [...new Set([to.id, to.name, ...(to.agentAliases ?? [])])],
    record: (turn) => ctx.record(tag(turn)),
    depth: ctx.depth + 1,
    delegation: { id, by: from.id, byAliases: ctx.aliases, chain },
  });
  const answerTurn = tag({
    id: `${id}:answer`,
    conversationId: input.conversationId,
    participant: { kind: 'agent', id: to.id, displayName: to.name },
    content: result.output,
    timestamp: isoTimestamp(),
    scope: input.scope,
    metadata: {
      ...place,
      ...result.metadata,
      delegationAnswer: true,
      ...(request.toolCallId === undefined ? {} : { delegateCallId: request.toolCallId }),
    },
  });
  await ctx.record(answerTurn);
  return { id, agentId: to.id, answer: result.output };
}

/**
 * The built-in `delegate` tool of an agent with `delegates`: the model names one of them and
 * the task, and gets its answer back.
 *
 * @example
 * ```ts
 * const tools = { delegate: delegateTool(planner, [hotels, cars], input, ctx) };
 * ```
 */
export function delegateTool(
  from: Pick<Agent, 'id' | 'name'>,
  delegates: readonly Agent[],
  input: NewMessage,
  ctx: AgentRunContext,
): Tool<{ agent: string; task: string }, string> {
  const names = delegates.map((agent) => agent.name);
  const find = (name: string) =>
    delegates.find((agent) => agent.name === name || agent.id === name);
  return tool({
    description:
      'Hand a task to another agent and get its answer. Agents: ' +
      delegates.map((agent) => agent.name).join(', '),
    inputSchema: jsonSchema<{ agent: string; task: string }>(
      {
        type: 'object',
        properties: {
          agent: { type: 'string', enum: names, description: 'Which agent does the task' },
          task: { type: 'string', description: 'What to do, with everything it needs to know' },
        },
        required: ['agent', 'task'],
        additionalProperties: false,
      },
      {
        validate: (value) =>
          validateObject<{ agent: string; task: string }>(value, {
            agent: { type: 'string', required: true },
            task: { type: 'string', required: true },
          }),
      },
    ),
    execute: async ({ agent, task }, { toolCallId }) => {
      const to = find(agent);
      if (to === undefined) return `No agent called "${agent}"; choose one of ${names.join(', ')}.`;
      try {
        return (await delegate({ from, to, task, input, ctx, toolCallId })).answer;
      } catch (error) {
        return `The delegation to ${agent} failed: ${messageOf(error)}`;
      }
    },
  });
}
