import type { ModelMessage, StepResult, ToolSet } from 'ai';
import type { Action } from '../src/channel.js';
import { interactionOf } from '../src/interactions.js';
import type { ConversationStore } from '../src/store.js';
import type { NewMessage, StoredMessage } from '../src/types.js';

/** Most recent turns of the agent searched for the tool calls a press answers. */
const WAITING_SEARCH_LIMIT = 500;

/** A tool call the model made that waits for a person's approval. */
export interface ApprovalRequest {
  approvalId: string;
  toolCallId: string;
  toolName: string;
  input: unknown;
}

/** What a press of an approval button says: approve or deny the calls `approvalIds` name. */
export interface ApprovalAnswer {
  approved: boolean;
  approvalIds: string[];
  /** Who pressed, as the model is told when they deny. */
  by: string;
}

/** The approval requests a step ended with (tools marked `needsApproval`). */
export function approvalRequestsOf(step: StepResult<ToolSet>): ApprovalRequest[] {
  return step.content.flatMap((part) =>
    part.type === 'tool-approval-request'
      ? [
          {
            approvalId: part.approvalId,
            toolCallId: part.toolCall.toolCallId,
            toolName: part.toolCall.toolName,
            input: part.toolCall.input,
          },
        ]
      : [],
  );
}

/**
 * The Approve / Deny buttons under a reply that asks for `requests`: their ids name the
 * approval ids (`approve:<id>,<id>`), so the press says which calls it answers.
 *
 * @example
 * ```ts
 * approvalActions([request]); // [{ id: 'approve:aitxt-1', label: 'Approve', … }, { id: 'deny:aitxt-1', … }]
 * ```
 */
export function approvalActions(requests: readonly ApprovalRequest[]): Action[] {
  const ids = requests.map((r) => r.approvalId).join(',');
  return [
    { id: `approve:${ids}`, label: 'Approve', style: 'primary' },
    { id: `deny:${ids}`, label: 'Deny', style: 'danger' },
  ];
}

/** The question a reply asks when the model said nothing but asked to call tools. */
export function approvalQuestion(requests: readonly ApprovalRequest[]): string {
  const calls = requests.map((r) => `${r.toolName} ${JSON.stringify(r.input) ?? ''}`.trim());
  return `May I run ${calls.join(' and ')}?`;
}

/** The approval a turn answers, when it is a press of an Approve / Deny button. */
export function approvalAnswerOf(turn: NewMessage): ApprovalAnswer | undefined {
  const interaction = interactionOf(turn);
  if (interaction?.type !== 'button' || interaction.refused !== undefined) return undefined;
  const match = /^(approve|deny):(.+)$/s.exec(interaction.id);
  if (match === null) return undefined;
  return {
    approved: match[1] === 'approve',
    approvalIds: match[2]!.split(','),
    by: turn.participant.displayName ?? turn.participant.id,
  };
}

/**
 * The tool-call rows of `agentId` that `answer` approves or denies and that have no result
 * yet: what the agent recorded when the model asked (`metadata.approvalId`), read from the
 * store, so a press after a restart finds them.
 */
export async function waitingCalls(
  store: ConversationStore,
  conversationId: string,
  agentId: string,
  answer: ApprovalAnswer,
): Promise<StoredMessage[]> {
  const rows = await store.get(conversationId, {
    participantIds: [agentId],
    limit: WAITING_SEARCH_LIMIT,
  });
  const step = (row: StoredMessage) =>
    JSON.stringify([row.metadata.toolCallId, row.metadata['toolStep'] ?? null]);
  const answered = new Set(
    rows.filter((row) => row.metadata['toolRole'] === 'result').map((row) => step(row)),
  );
  return rows.filter(
    (row) =>
      row.metadata['toolRole'] === 'call' &&
      answer.approvalIds.includes(row.metadata['approvalId'] as string) &&
      !answered.has(step(row)),
  );
}

/**
 * The messages that continue the model call where it stopped: the tool calls with their
 * approval requests, then the person's answer (`tool-approval-response`). The AI SDK then runs
 * the approved tools, or tells the model they were denied.
 */
export function approvalMessages(
  calls: readonly StoredMessage[],
  answer: ApprovalAnswer,
): ModelMessage[] {
  const parts = calls.map((row) => {
    const toolCallId = row.metadata.toolCallId as string;
    const approvalId = row.metadata['approvalId'] as string;
    return { toolCallId, approvalId, toolName: row.metadata.toolName ?? 'unknown', row };
  });
  return [
    {
      role: 'assistant',
      content: parts.flatMap(({ toolCallId, approvalId, toolName, row }) => [
        { type: 'tool-call' as const, toolCallId, toolName, input: parseInput(row.content) },
        { type: 'tool-approval-request' as const, approvalId, toolCallId },
      ]),
    },
    {
      role: 'tool',
      content: parts.map(({ approvalId }) => ({
        type: 'tool-approval-response' as const,
        approvalId,
        approved: answer.approved,
        ...(!answer.approved && { reason: `denied by ${answer.by}` }),
      })),
    },
  ];
}

function parseInput(content: string): unknown {
  try {
    return JSON.parse(content);
  } catch {
    return content;
  }
}
