import { jsonSchema, tool } from 'ai';
import type { Tool } from 'ai';
import type { ConversationStore } from '../../src/store.js';
import type { StoredMessage } from '../../src/types.js';
import { validateObject } from './validate.js';

/**
 * The `recall_tool_result` tool: returns the full text of a tool result that prompt assembly
 * masked (`call recall_tool_result with id "<message id>"`). Bound to one conversation and
 * one agent: a row of another conversation, a row another agent wrote, or a row that is not
 * a tool result is "not found". The row is read by id (`store.getMessage`).
 *
 * @example
 * ```ts
 * const tools = { recall_tool_result: recallToolResultTool(store, 'telegram:42', 'support-agent') };
 * ```
 */
export function recallToolResultTool(
  store: ConversationStore,
  conversationId: string,
  agentId: string,
): Tool<{ id: string }, string> {
  const find = (id: string): Promise<StoredMessage | undefined> =>
    store.getMessage(conversationId, id);
  return tool({
    description:
      'Read the full output of an earlier tool result that was masked in the conversation history.',
    inputSchema: jsonSchema<{ id: string }>(
      {
        type: 'object',
        properties: { id: { type: 'string', description: 'The id quoted in the masked note' } },
        required: ['id'],
        additionalProperties: false,
      },
      {
        validate: (value) =>
          validateObject<{ id: string }>(value, { id: { type: 'string', required: true } }),
      },
    ),
    execute: async ({ id }) => {
      const row = await find(id);
      const readable =
        row !== undefined &&
        row.conversationId === conversationId &&
        row.participant.id === agentId &&
        row.metadata['toolRole'] === 'result' &&
        row.deletedAt === undefined;
      return readable ? row.content : `No tool result with id "${id}" in this conversation.`;
    },
  });
}
