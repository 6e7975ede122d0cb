import { generateText } from 'ai';
import type { LanguageModel } from 'ai';
import type { SummarizeInput, Summarizer } from '../src/assemble.js';
import { speakerLabel } from '../src/assemble/projection.js';
import type { StoredMessage } from '../src/types.js';

/** Tool results are clipped to this many characters in the transcript a summary is made from. */
const TOOL_RESULT_CHARS = 500;

/**
 * What the summarizer is told to do; replace it with `instructions`.
 *
 * @example
 * ```ts
 * new SummarizerAgent({ model, instructions: `${DEFAULT_SUMMARY_INSTRUCTIONS} Write in German.` });
 * ```
 */
export const DEFAULT_SUMMARY_INSTRUCTIONS = [
  'You keep a rolling summary of a chat conversation for the assistant named in it.',
  'Write a concise summary, in plain prose or short bullet points, of at most 200 words.',
  'Keep the names of the people and agents, what each asked for, the facts that were',
  'established, the decisions made and who made them, promises the assistant made, and',
  'the questions that are still open. Drop greetings, small talk and repetition.',
  'When a previous summary is given, fold the new turns into it: keep what still matters',
  'and return one updated summary. Answer with the summary only.',
].join(' ');

/**
 * How a `SummarizerAgent` writes.
 *
 * @example
 * ```ts
 * const options: SummarizerAgentOptions = { model, maxOutputTokens: 300 };
 * ```
 */
export interface SummarizerAgentOptions {
  /** Any AI SDK language model; a small, cheap one is usually enough. */
  model: LanguageModel;
  /** System instructions (default {@link DEFAULT_SUMMARY_INSTRUCTIONS}). */
  instructions?: string;
  /** Most tokens the model may write (default 400). */
  maxOutputTokens?: number;
}

/**
 * Writes the rolling summaries prompt assembly stores: a `Summarizer` backed by an AI SDK
 * language model. Give it to an agent (or to `assemblePrompt`) and turns that no longer fit
 * the budget are folded into one summary row per agent and conversation.
 *
 * @example
 * ```ts
 * import { assemblePrompt, SummarizerAgent } from 'colloquy';
 * import { openai } from '@ai-sdk/openai';
 * const summarizer = new SummarizerAgent({ model: openai('gpt-4o-mini') });
 * const prompt = await assemblePrompt(store, conversationId, 'support', 'Support', {}, summarizer);
 * ```
 */
export class SummarizerAgent implements Summarizer {
  readonly #model: LanguageModel;
  readonly #instructions: string;
  readonly #maxOutputTokens: number;

  constructor(options: SummarizerAgentOptions) {
    this.#model = options.model;
    this.#instructions = options.instructions ?? DEFAULT_SUMMARY_INSTRUCTIONS;
    this.#maxOutputTokens = options.maxOutputTokens ?? 400;
  }

  async summarize(input: SummarizeInput): Promise<string> {
    const { text } = await generateText({
      model: this.#model,
      system: this.#instructions,
      prompt: summaryPrompt(input),
      maxOutputTokens: this.#maxOutputTokens,
    });
    return text.trim();
  }
}

/**
 * The prompt a summary is written from: who the assistant is, the previous summary and a
 * transcript of the new turns with their speakers.
 *
 * @example
 * ```ts
 * summaryPrompt({ agentId: 'support', agentName: 'Support', conversationId: 'dm', turns });
 * ```
 */
export function summaryPrompt(input: SummarizeInput): string {
  const transcript = input.turns.map((turn) => transcriptLine(turn, input)).join('\n');
  return [
    `The assistant is "${input.agentName}" (id ${input.agentId}).`,
    `Previous summary:\n${input.previousSummary?.trim() || '(none yet)'}`,
    `New turns, oldest first:\n${transcript}`,
    'Write the updated summary.',
  ].join('\n\n');
}

function transcriptLine(turn: StoredMessage, input: SummarizeInput): string {
  const { participant, metadata } = turn;
  const own = participant.id === input.agentId;
  const speaker = own ? `${input.agentName} (assistant)` : speakerLabel(participant);
  const when = turn.timestamp.slice(0, 16).replace('T', ' ');
  if (metadata['toolRole'] === 'call') {
    return `[${when}] ${speaker} called tool ${metadata.toolName ?? 'unknown'} with ${turn.content}`;
  }
  if (metadata['toolRole'] === 'result') {
    const clipped =
      turn.content.length > TOOL_RESULT_CHARS
        ? `${turn.content.slice(0, TOOL_RESULT_CHARS)}…`
        : turn.content;
    return `[${when}] tool ${metadata.toolName ?? 'unknown'} returned: ${clipped}`;
  }
  return `[${when}] ${speaker}: ${turn.content}`;
}
