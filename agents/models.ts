import { createAnthropic } from '@ai-sdk/anthropic';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { LanguageModelV3, ProviderV3 } from '@ai-sdk/provider';
import { createProviderRegistry } from 'ai';
import type { LanguageModel } from 'ai';
import { ColloquyError } from '../src/errors.js';
import { addSecret } from '../src/logger.js';
import { isOfflineModel, offlineModel } from './offline-model.js';

/**
 * `COLLOQUY_MODEL` names no provider colloquy knows, or a variable the provider needs is missing.
 *
 * @example
 * ```ts
 * try { modelFromEnv(); } catch (err) { if (err instanceof ModelConfigError) console.error(err.message); }
 * ```
 */
export class ModelConfigError extends ColloquyError {
  override name = 'ModelConfigError';
}

/** Where Ollama serves its OpenAI-compatible API by default. */
export const OLLAMA_DEFAULT_BASE_URL = 'http://127.0.0.1:11434/v1';

type Env = Record<string, string | undefined>;

const providers: Record<string, (env: Env) => ProviderV3> = {
  openai: (env) =>
    createOpenAI({ apiKey: required(env, 'OPENAI_API_KEY', 'openai'), baseURL: baseUrl(env) }),
  anthropic: (env) =>
    createAnthropic({
      apiKey: required(env, 'ANTHROPIC_API_KEY', 'anthropic'),
      baseURL: baseUrl(env),
    }),
  'openai-compatible': (env) =>
    createOpenAICompatible({
      name: 'openai-compatible',
      baseURL: httpUrl(required(env, 'COLLOQUY_MODEL_BASE_URL', 'openai-compatible')),
      apiKey: env.COLLOQUY_MODEL_API_KEY || undefined,
    }),
  ollama: (env) =>
    createOpenAICompatible({
      name: 'ollama',
      baseURL: baseUrl(env) ?? OLLAMA_DEFAULT_BASE_URL,
      apiKey: env.COLLOQUY_MODEL_API_KEY || undefined,
    }),
};

/** The providers `COLLOQUY_MODEL` may name (plus `offline`). */
export const knownProviders: readonly string[] = [...Object.keys(providers), 'offline'];

/**
 * The model named by `COLLOQUY_MODEL` (`provider:model`), through the AI SDK provider
 * registry; the offline model when `COLLOQUY_MODEL` is unset (or `offline`).
 *
 * | `COLLOQUY_MODEL` | also reads |
 * |---|---|
 * | `openai:gpt-4o-mini` | `OPENAI_API_KEY` (`COLLOQUY_MODEL_BASE_URL` optional) |
 * | `anthropic:claude-sonnet-4-5` | `ANTHROPIC_API_KEY` (`COLLOQUY_MODEL_BASE_URL` optional) |
 * | `openai-compatible:<model>` | `COLLOQUY_MODEL_BASE_URL` (vLLM, llama.cpp…), `COLLOQUY_MODEL_API_KEY` optional |
 * | `ollama:<model>` | `COLLOQUY_MODEL_BASE_URL`, default `http://127.0.0.1:11434/v1` |
 *
 * @throws ModelConfigError naming the unknown provider or the missing variable.
 * @example
 * ```ts
 * import { modelFromEnv } from 'colloquy';
 * const model = modelFromEnv({ COLLOQUY_MODEL: 'ollama:llama3.2' });
 * ```
 */
export function modelFromEnv(env: Env = process.env): LanguageModelV3 {
  const spec = env.COLLOQUY_MODEL?.trim();
  if (spec === undefined || spec === '' || spec === 'offline') return offlineModel();
  const separator = spec.indexOf(':');
  const provider = separator < 0 ? spec : spec.slice(0, separator);
  const modelId = separator < 0 ? '' : spec.slice(separator + 1);
  const factory = providers[provider];
  // The key is masked wherever it appears, also when `env` is not process.env.
  for (const name of ['OPENAI_API_KEY', 'ANTHROPIC_API_KEY', 'COLLOQUY_MODEL_API_KEY']) {
    addSecret(env[name]);
  }
  if (factory === undefined) {
    throw new ModelConfigError(
      `COLLOQUY_MODEL="${spec}": unknown provider "${provider}" (known: ${knownProviders.join(', ')})`,
    );
  }
  if (modelId === '') {
    throw new ModelConfigError(
      `COLLOQUY_MODEL="${spec}": no model after "${provider}:" (for example "${provider}:<model>")`,
    );
  }
  const registry = createProviderRegistry({ [provider]: factory(env) });
  return registry.languageModel(`${provider}:${modelId}`);
}

/**
 * A short label for a model, `<provider>:<modelId>` (`openai:gpt-4o-mini`), or `offline`.
 *
 * @example
 * ```ts
 * describeModel(modelFromEnv({})); // 'offline'
 * ```
 */
export function describeModel(model: LanguageModel): string {
  if (typeof model === 'string') return model;
  if (isOfflineModel(model)) return 'offline';
  const provider = model.provider.split('.')[0] ?? model.provider;
  return `${provider}:${model.modelId}`;
}

function required(env: Env, name: string, provider: string): string {
  const value = env[name]?.trim();
  if (value === undefined || value === '') {
    throw new ModelConfigError(`${name} is not set; the ${provider} provider needs it`);
  }
  return value;
}

function baseUrl(env: Env): string | undefined {
  const value = env.COLLOQUY_MODEL_BASE_URL?.trim();
  return value ? httpUrl(value) : undefined;
}

/** `value` when it is an http(s) URL; a ModelConfigError naming the setting otherwise. */
function httpUrl(value: string): string {
  const protocol = URL.canParse(value) ? new URL(value).protocol : undefined;
  if (protocol === 'http:' || protocol === 'https:') return value;
  throw new ModelConfigError(
    `COLLOQUY_MODEL_BASE_URL must be an http(s) URL such as ${OLLAMA_DEFAULT_BASE_URL}, not "${value}"`,
  );
}
