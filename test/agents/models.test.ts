import { generateText, streamText } from 'ai';
import { describe, expect, it, vi } from 'vitest';
import {
  BaseAgent,
  Bot,
  describeModel,
  InMemoryConversationStore,
  isOfflineModel,
  ModelConfigError,
  modelFromEnv,
  offlineModel,
  silentLogger,
} from 'colloquy';
import { MemoryChannel } from 'colloquy/testing';

describe('modelFromEnv', () => {
  it('gives the offline model when COLLOQUY_MODEL is not set', () => {
    const model = modelFromEnv({});
    expect(isOfflineModel(model)).toBe(true);
    expect(model.modelId).toBe('offline');
    expect(model.specificationVersion).toBe('v3');
    expect(describeModel(model)).toBe('offline');
  });

  it('makes an OpenAI model with OPENAI_API_KEY', () => {
    const model = modelFromEnv({ COLLOQUY_MODEL: 'openai:gpt-4o-mini', OPENAI_API_KEY: 'sk-test' });
    expect(model.modelId).toBe('gpt-4o-mini');
    expect(describeModel(model)).toBe('openai:gpt-4o-mini');
  });

  it('makes an Anthropic model with ANTHROPIC_API_KEY', () => {
    const env = { COLLOQUY_MODEL: 'anthropic:claude-sonnet-4-5', ANTHROPIC_API_KEY: 'sk-ant' };
    expect(describeModel(modelFromEnv(env))).toBe('anthropic:claude-sonnet-4-5');
  });

  it('makes an OpenAI-compatible model at COLLOQUY_MODEL_BASE_URL', () => {
    const env = {
      COLLOQUY_MODEL: 'openai-compatible:qwen2.5-7b',
      COLLOQUY_MODEL_BASE_URL: 'http://127.0.0.1:8000/v1',
    };
    expect(describeModel(modelFromEnv(env))).toBe('openai-compatible:qwen2.5-7b');
  });

  it('makes an Ollama model, keeping colons in the model name', () => {
    const model = modelFromEnv({ COLLOQUY_MODEL: 'ollama:llama3.2:3b' });
    expect(describeModel(model)).toBe('ollama:llama3.2:3b');
  });

  it.each([
    [{ COLLOQUY_MODEL: 'openai:gpt-4o-mini' }, /OPENAI_API_KEY is not set/],
    [{ COLLOQUY_MODEL: 'anthropic:claude-sonnet-4-5' }, /ANTHROPIC_API_KEY is not set/],
    [{ COLLOQUY_MODEL: 'openai-compatible:qwen' }, /COLLOQUY_MODEL_BASE_URL is not set/],
    [{ COLLOQUY_MODEL: 'mistral:large' }, /unknown provider "mistral" \(known: openai, anthropic/],
    [{ COLLOQUY_MODEL: 'openai' }, /no model after "openai:"/],
  ])('explains what is missing for %j', (env, message) => {
    expect(() => modelFromEnv(env)).toThrow(ModelConfigError);
    expect(() => modelFromEnv(env)).toThrow(message);
  });
});

describe('settings checked when the bot starts, not when a turn runs', () => {
  it.each([
    { COLLOQUY_MODEL: 'openai-compatible:qwen', COLLOQUY_MODEL_BASE_URL: 'not-a-url' },
    { COLLOQUY_MODEL: 'ollama:llama3.2', COLLOQUY_MODEL_BASE_URL: 'localhost:11434' },
    {
      COLLOQUY_MODEL: 'openai:gpt-4o-mini',
      OPENAI_API_KEY: 'sk-test',
      COLLOQUY_MODEL_BASE_URL: 'ftp://models.example.com/v1',
    },
  ])('refuses COLLOQUY_MODEL_BASE_URL=$COLLOQUY_MODEL_BASE_URL', (env) => {
    expect(() => modelFromEnv(env)).toThrow(ModelConfigError);
    expect(() => modelFromEnv(env)).toThrow(
      `COLLOQUY_MODEL_BASE_URL must be an http(s) URL such as http://127.0.0.1:11434/v1, not "${env.COLLOQUY_MODEL_BASE_URL}"`,
    );
  });

  it('refuses to start a bot whose agent takes a bad model setting from the environment', async () => {
    // Given an agent that takes its model from COLLOQUY_MODEL, which names a bad base URL
    vi.stubEnv('COLLOQUY_MODEL', 'openai-compatible:qwen');
    vi.stubEnv('COLLOQUY_MODEL_BASE_URL', 'not-a-url');
    try {
      class Support extends BaseAgent {
        name = 'support';
        description = 'answers';
        instructions = 'Answer.';
      }
      const channel = new MemoryChannel({ scope: 'dm' });
      const bot = new Bot({
        channels: [channel],
        agents: [new Support()],
        logger: silentLogger,
        store: new InMemoryConversationStore(),
      });

      // When it starts, then it refuses with the setting's problem
      await expect(bot.start()).rejects.toThrow(/COLLOQUY_MODEL_BASE_URL must be an http\(s\) URL/);
      await bot.stop();
    } finally {
      vi.unstubAllEnvs();
    }
  });
});

describe('the offline model', () => {
  it('answers deterministically with a labelled echo through generateText', async () => {
    const run = () => generateText({ model: offlineModel(), prompt: 'where is my order?' });
    const [first, second] = await Promise.all([run(), run()]);
    expect(first.text).toBe(
      '[offline model] I heard: "where is my order?" — set COLLOQUY_MODEL to use a real model.',
    );
    expect(second.text).toBe(first.text);
    expect(first.usage.inputTokens).toBeGreaterThan(0);
  });

  it('streams the same answer through streamText', async () => {
    const result = streamText({ model: offlineModel(), prompt: 'hi' });
    expect(await result.text).toBe(
      '[offline model] I heard: "hi" — set COLLOQUY_MODEL to use a real model.',
    );
  });

  it('marks every reply of an agent without COLLOQUY_MODEL as offline', async () => {
    // given an agent with no model and no COLLOQUY_MODEL
    class Echo extends BaseAgent {
      name = 'echo';
      description = 'echoes';
      instructions = 'Echo.';
      override model = modelFromEnv({});
    }
    const store = new InMemoryConversationStore();
    const channel = new MemoryChannel({ scope: 'dm' });
    const bot = new Bot({ channels: [channel], agents: [new Echo()], store, logger: silentLogger });
    await bot.start();

    // when a person writes to it
    await channel.receive('hello there');
    await bot.stop();

    // then the reply is labelled and its metadata says offline
    expect(channel.sent[0]?.content).toBe(
      '[offline model] I heard: "Alice: hello there" — set COLLOQUY_MODEL to use a real model.',
    );
    const reply = (await store.get(channel.conversationId)).at(-1);
    expect(reply?.metadata).toMatchObject({ model: 'offline', offline: true });
  });
});
