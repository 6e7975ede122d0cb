import { jsonSchema, tool } from 'ai';
import type { Tool } from 'ai';
import type { PostReceipt, SendPostOptions } from '../../src/posts.js';
import { validateObject } from './validate.js';

/** What the follow-up tool takes from the model. */
export interface FollowUpInput {
  /** What to say then. */
  text: string;
  /** In how many minutes (1 to 30 days' worth). */
  inMinutes: number;
}

/** What posts the follow-up: `bot.send`, bound by the caller. */
export type SendPost = (
  conversationId: string,
  message: string,
  options: SendPostOptions,
) => Promise<PostReceipt>;

/**
 * The `schedule_follow_up` tool: the agent posts `text` into the conversation being answered
 * `inMinutes` from now, through `bot.send` with `at` (stored: it goes out after a restart too).
 * Bound to one conversation and one agent, who is the post's author.
 *
 * @example
 * ```ts
 * class Support extends BaseAgent {
 *   protected override builtInTools(ctx: AgentRunContext, input?: NewMessage) {
 *     const follow = followUpTool((...args) => bot.send(...args), ctx.conversationId, this);
 *     return { ...super.builtInTools(ctx, input), schedule_follow_up: follow };
 *   }
 * }
 * ```
 */
export function followUpTool(
  send: SendPost,
  conversationId: string,
  agent: { id: string; name?: string },
): Tool<FollowUpInput, string> {
  return tool({
    description:
      'Schedule a message to this conversation later (a reminder or a check-in), in minutes.',
    inputSchema: jsonSchema<FollowUpInput>(
      {
        type: 'object',
        properties: {
          text: { type: 'string', description: 'What to say then' },
          inMinutes: { type: 'integer', minimum: 1, maximum: 43_200 },
        },
        required: ['text', 'inMinutes'],
        additionalProperties: false,
      },
      {
        validate: (value) =>
          validateObject<FollowUpInput>(value, {
            text: { type: 'string', required: true },
            inMinutes: { type: 'integer', required: true, min: 1, max: 43_200 },
          }),
      },
    ),
    execute: async ({ text, inMinutes }) => {
      const at = new Date(Date.now() + inMinutes * 60_000);
      const from = { id: agent.id, ...(agent.name !== undefined && { name: agent.name }) };
      const post = await send(conversationId, text, { at, from });
      return `Scheduled for ${post.dueAt}.`;
    },
  });
}
