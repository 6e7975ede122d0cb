import { jsonSchema, tool } from 'ai';
import type { Tool } from 'ai';
import type { ConversationStore } from '../../src/store.js';
import { validateObject } from './validate.js';

/** How many recent turns `recall_tool_result` looks through for the id. */
const RECALL_WINDOW = 1000;

/**
 * The `recall_tool_result` tool: returns the full text of a tool result that prompt assembly
 * masked (`call recall_tool_result with id "<message id>"`). Bound to one conversation: a row
 * of any other conversation is "not found".
 *
 * @example
 * ```ts
 * const tools = { recall_tool_result: recallToolResultTool(store, 'telegram:42') };
 * ```
 */
export function recallToolResultTool(
  store: ConversationStore,
  conversationId: string,
): Tool<{ id: string }, string> {
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
      const turns = await store.get(conversationId, {
        limit: RECALL_WINDOW,
        includeDeleted: false,
      });
      const row = turns.find(
        (turn) =>
          turn.id === id &&
          turn.conversationId === conversationId &&
          turn.metadata['toolRole'] === 'result',
      );
      return row?.content ?? `No tool result with id "${id}" in this conversation.`;
    },
  });
}
