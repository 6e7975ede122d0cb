import { jsonSchema, tool } from 'ai';
import type { Tool } from 'ai';
import { speakerLabel } from '../../src/assemble/projection.js';
import type { ConversationStore } from '../../src/store.js';
import type { Participant, StoredMessage } from '../../src/types.js';
import { readableBy } from '../../src/visibility.js';
import { validateObject } from './validate.js';

/** The name models call it by. */
export const CONVERSATION_SEARCH_TOOL = 'conversation_search';

/** What the model may pass: words to look for and how many matches (default 5, at most 20). */
export interface ConversationSearchInput {
  query: string;
  limit?: number;
}

/**
 * The `conversation_search` tool, bound to ONE conversation. The conversation id lives in
 * this closure, not in the input: the schema has no conversation parameter and unknown
 * properties are rejected, so a prompt-injected "search telegram:999" can only ever search
 * the conversation the agent is answering in. A turn shown to one person only (`visibleTo`)
 * is found only when `reader` (the author of the turn answered) is that person.
 *
 * @example
 * ```ts
 * const tools = { conversation_search: conversationSearchTool(store, 'telegram:42') };
 * await generateText({ model, tools, prompt: 'What did Alice order?' });
 * ```
 */
export function conversationSearchTool(
  store: ConversationStore,
  conversationId: string,
  reader?: Pick<Participant, 'id'>,
): Tool<ConversationSearchInput, string> {
  return tool({
    description:
      'Search earlier messages of this conversation (plain words). Returns the best matches with speaker and time.',
    inputSchema: jsonSchema<ConversationSearchInput>(
      {
        type: 'object',
        properties: {
          query: { type: 'string', description: 'Words to look for' },
          limit: {
            type: 'integer',
            minimum: 1,
            maximum: 20,
            description: 'Most matches (default 5)',
          },
        },
        required: ['query'],
        additionalProperties: false,
      },
      {
        validate: (value) =>
          validateObject<ConversationSearchInput>(value, {
            query: { type: 'string', required: true },
            limit: { type: 'integer', min: 1, max: 20 },
          }),
      },
    ),
    execute: async ({ query, limit = 5 }) => {
      const found = await store.search(conversationId, query, { limit });
      const matches = found.filter(
        (turn) => turn.conversationId === conversationId && readableBy(turn, reader),
      );
      if (matches.length === 0) return `No messages in this conversation match "${query}".`;
      return matches.map(formatMatch).join('\n');
    },
  });
}

/**
 * One search hit as the model reads it: `[time] speaker: text` (`name (agent)` for agents).
 *
 * @example
 * ```ts
 * formatMatch(turn); // '[2026-11-21T09:30:00.000Z] Alice: where is order 42?'
 * ```
 */
export function formatMatch(turn: StoredMessage): string {
  return `[${turn.timestamp}] ${speakerLabel(turn.participant)}: ${turn.content}`;
}
