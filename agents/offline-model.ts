import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
} from '@ai-sdk/provider';
import { defaultTokenizer } from '../src/tokenizer.js';

/** The provider name of the offline model (`model.provider`). */
export const OFFLINE_PROVIDER = 'colloquy.offline';

/**
 * A language model that needs no network and no key: it answers deterministically with a
 * clearly labelled echo of the last user message, so a fresh checkout runs end to end.
 * `modelFromEnv()` returns it when `COLLOQUY_MODEL` is not set; replies carry
 * `metadata.offline: true`.
 *
 * @example
 * ```ts
 * import { generateText } from 'ai';
 * import { offlineModel } from 'colloquy';
 * const { text } = await generateText({ model: offlineModel(), prompt: 'hello' });
 * // [offline model] I heard: "hello" — set COLLOQUY_MODEL to use a real model.
 * ```
 */
export function offlineModel(): LanguageModelV3 {
  return {
    specificationVersion: 'v3',
    provider: OFFLINE_PROVIDER,
    modelId: 'offline',
    supportedUrls: {},
    doGenerate: async (options) => generate(options),
    doStream: async (options) => stream(generate(options)),
  };
}

/**
 * True for a model made by `offlineModel()`.
 *
 * @example
 * ```ts
 * if (isOfflineModel(modelFromEnv())) console.log('no COLLOQUY_MODEL set');
 * ```
 */
export function isOfflineModel(model: unknown): boolean {
  return (
    typeof model === 'object' &&
    model !== null &&
    (model as { provider?: unknown }).provider === OFFLINE_PROVIDER
  );
}

/**
 * The offline model's reply to a user text.
 *
 * @example
 * ```ts
 * offlineReply('hi'); // '[offline model] I heard: "hi" — set COLLOQUY_MODEL to use a real model.'
 * ```
 */
export function offlineReply(userText: string): string {
  return `[offline model] I heard: "${userText}" — set COLLOQUY_MODEL to use a real model.`;
}

function generate(options: LanguageModelV3CallOptions): LanguageModelV3GenerateResult {
  const text = offlineReply(lastUserText(options.prompt));
  return {
    content: [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: 'stop' },
    usage: usage(promptText(options.prompt), text),
    providerMetadata: { colloquy: { offline: true } },
    response: { id: 'offline', modelId: 'offline', timestamp: new Date() },
    warnings: [],
  };
}

function stream(result: LanguageModelV3GenerateResult): LanguageModelV3StreamResult {
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
  const parts: LanguageModelV3StreamPart[] = [
    { type: 'stream-start', warnings: [] },
    { type: 'text-start', id: 'offline' },
    { type: 'text-delta', id: 'offline', delta: text },
    { type: 'text-end', id: 'offline' },
    { type: 'finish', usage: result.usage, finishReason: result.finishReason },
  ];
  return {
    stream: new ReadableStream<LanguageModelV3StreamPart>({
      start(controller) {
        for (const part of parts) controller.enqueue(part);
        controller.close();
      },
    }),
  };
}

function textOf(message: LanguageModelV3Prompt[number]): string {
  if (typeof message.content === 'string') return message.content;
  return message.content.map((part) => (part.type === 'text' ? part.text : '')).join('');
}

function lastUserText(prompt: LanguageModelV3Prompt): string {
  const user = prompt.filter((message) => message.role === 'user').at(-1);
  return user === undefined ? '' : textOf(user).trim();
}

function promptText(prompt: LanguageModelV3Prompt): string {
  return prompt.map(textOf).join('\n');
}

function usage(input: string, output: string): LanguageModelV3Usage {
  const inputTokens = defaultTokenizer.count(input);
  const outputTokens = defaultTokenizer.count(output);
  return {
    inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 },
  };
}
