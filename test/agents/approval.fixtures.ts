import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { jsonSchema, tool } from 'ai';
import type { LanguageModelV3GenerateResult, LanguageModelV3Prompt } from '@ai-sdk/provider';
import { MockLanguageModelV3 } from 'ai/test';
import { BaseAgent } from 'colloquy';
import { SqliteConversationStore } from 'colloquy/sqlite';
import { answer } from '../fixtures/model-answer.js';

/** The refunds `refund_order` made, by order id. */
export type Refunds = string[];

/** A model that asks to refund order 4242, then says what the tool answered. */
export function refundModel(): MockLanguageModelV3 & { prompts: LanguageModelV3Prompt[] } {
  const prompts: LanguageModelV3Prompt[] = [];
  const model = new MockLanguageModelV3({
    doGenerate: async ({ prompt }): Promise<LanguageModelV3GenerateResult> => {
      prompts.push(prompt);
      const last = prompt.at(-1);
      const result =
        last?.role === 'tool' ? last.content.find((p) => p.type === 'tool-result') : undefined;
      if (result !== undefined) {
        const output = result.output;
        return answer(
          output.type === 'execution-denied'
            ? `Not refunded (${output.reason ?? 'denied'}).`
            : `Done: ${output.type === 'json' || output.type === 'text' ? JSON.stringify(output.value) : '?'}`,
        );
      }
      return {
        content: [
          {
            type: 'tool-call',
            toolCallId: 'call_1',
            toolName: 'refund_order',
            input: JSON.stringify({ orderId: '4242' }),
          },
        ],
        finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
        usage: answer('').usage,
        warnings: [],
      };
    },
  });
  return Object.assign(model, { prompts });
}

/** `billing`: refunds orders with `refund_order`, which needs a person's approval. */
export function refundAgent(model: MockLanguageModelV3, refunds: Refunds): BaseAgent {
  return new (class extends BaseAgent {
    name = 'billing';
    description = 'Refunds orders';
    instructions = 'Refund orders when asked.';
    override model = model;
    override stream = false;
    override tools = {
      refund_order: tool({
        description: 'Refunds an order',
        inputSchema: jsonSchema<{ orderId: string }>({
          type: 'object',
          properties: { orderId: { type: 'string' } },
          required: ['orderId'],
        }),
        needsApproval: true,
        execute: async ({ orderId }) => {
          refunds.push(orderId);
          return { refunded: orderId };
        },
      }),
    };
  })();
}

/**
 * A bot's SQLite file in a scratch folder, and what each process on it starts with: its own
 * store on the file and its own `billing` (`open`), so a restart keeps only what is stored.
 */
export class ApprovalScene {
  readonly dir = mkdtempSync(join(tmpdir(), 'colloquy-approval-'));
  readonly refunds: Refunds = [];
  store!: SqliteConversationStore;

  open() {
    this.store = new SqliteConversationStore({ path: join(this.dir, 'colloquy.db') });
    return { store: this.store, agents: [refundAgent(refundModel(), this.refunds)] };
  }

  async close(): Promise<void> {
    await this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
