import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A tool call the fake model makes; `arguments` is sent JSON-encoded, as OpenAI does. */
export interface FakeToolCall {
  name: string;
  arguments: unknown;
  /** Defaults to `call_<n>`. */
  id?: string;
}

/** One scripted answer: plain text, tool calls (with optional text), or an HTTP error. */
export type FakeReply =
  string | { text?: string; toolCalls?: FakeToolCall[] } | { status: number; error: string };

/** A recorded request: the parsed JSON body the client sent to `/v1/chat/completions`. */
export interface FakeChatRequest {
  model: string;
  messages: { role: string; content?: unknown; tool_calls?: unknown; tool_call_id?: string }[];
  tools?: {
    type: string;
    function: { name: string; description?: string; parameters?: unknown };
  }[];
  stream?: boolean;
  [key: string]: unknown;
}

export interface FakeOpenAIServerOptions {
  /** Answers in order; when they run out, `fallback` answers. */
  replies?: FakeReply[];
  /** Computes an answer from the request when the script is empty (default: echoes the last user text). */
  fallback?: (request: FakeChatRequest) => FakeReply;
  /** Milliseconds each answer takes (default 0): a model that thinks, so work can be interrupted. */
  latencyMs?: number;
  /**
   * Milliseconds between the words of a streamed answer (default 0: the text in one chunk): a
   * model that writes slowly, so a reply can be cut off while it is shown.
   */
  wordMs?: number;
}

/**
 * A real HTTP server on 127.0.0.1 that speaks the OpenAI chat-completions protocol (JSON, and
 * SSE when the request says `stream: true`), records every request body and answers with
 * scripted replies. Point any OpenAI-compatible client at `server.baseURL`.
 *
 * @example
 * ```ts
 * import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
 * import { FakeOpenAIServer } from 'colloquy/testing';
 * const server = await new FakeOpenAIServer({
 *   replies: [{ toolCalls: [{ name: 'conversation_search', arguments: { query: 'refund' } }] }, 'Done.'],
 * }).start();
 * const model = createOpenAICompatible({ name: 'fake', baseURL: server.baseURL })('fake-model');
 * // … generateText({ model, … }); then inspect server.requests
 * await server.close();
 * ```
 */
export class FakeOpenAIServer {
  /** Every request body, in arrival order. */
  readonly requests: FakeChatRequest[] = [];
  private readonly queue: FakeReply[];
  private readonly fallback: (request: FakeChatRequest) => FakeReply;
  private readonly latencyMs: number;
  private readonly wordMs: number;
  #writing = 0;
  private readonly holds: { arrive(request: FakeChatRequest): void; released: Promise<void> }[] =
    [];
  private readonly releases = new Set<() => void>();
  private server: Server | undefined;
  private port = 0;
  private calls = 0;

  constructor(options: FakeOpenAIServerOptions = {}) {
    this.queue = [...(options.replies ?? [])];
    this.fallback = options.fallback ?? ((request) => `echo: ${lastUserText(request)}`);
    this.latencyMs = options.latencyMs ?? 0;
    this.wordMs = options.wordMs ?? 0;
  }

  /** Streamed answers being written now (their words paced by `wordMs`). */
  get writing(): number {
    return this.#writing;
  }

  /** `http://127.0.0.1:<port>/v1`, known after `start`. */
  get baseURL(): string {
    if (this.server === undefined) throw new Error('FakeOpenAIServer is not started');
    return `http://127.0.0.1:${this.port}/v1`;
  }

  /** Queues more scripted replies. */
  reply(...replies: FakeReply[]): this {
    this.queue.push(...replies);
    return this;
  }

  /**
   * Holds the answer to the next request until `release()`: a model that is still thinking for
   * as long as a test needs (to press Ctrl-C, or kill the bot, while an answer is pending).
   *
   * @example
   * ```ts
   * const answer = server.holdNext();
   * // … a turn reaches the model …
   * await answer.arrived;
   * answer.release();
   * ```
   */
  holdNext(): { arrived: Promise<FakeChatRequest>; release(): void } {
    let arrive!: (request: FakeChatRequest) => void;
    let release!: () => void;
    const arrived = new Promise<FakeChatRequest>((resolve) => (arrive = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.holds.push({ arrive, released });
    this.releases.add(release);
    return { arrived, release };
  }

  async start(): Promise<this> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (server.address() as AddressInfo).port;
    this.server = server;
    return this;
  }

  async close(): Promise<void> {
    for (const release of this.releases) release();
    const server = this.server;
    this.server = undefined;
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      return json(res, 404, { error: { message: `no route ${req.method} ${req.url}` } });
    }
    let body: FakeChatRequest;
    try {
      body = JSON.parse(await readBody(req)) as FakeChatRequest;
    } catch {
      return json(res, 400, { error: { message: 'body is not JSON' } });
    }
    this.requests.push(body);
    const hold = this.holds.shift();
    if (hold !== undefined) {
      hold.arrive(body);
      await hold.released;
    }
    if (this.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, this.latencyMs));
    const reply = this.queue.shift() ?? this.fallback(body);
    if (typeof reply === 'object' && 'status' in reply) {
      return json(res, reply.status, { error: { message: reply.error, type: 'fake_error' } });
    }
    const { text, toolCalls } = typeof reply === 'string' ? { text: reply } : reply;
    const calls = (toolCalls ?? []).map((call) => ({
      id: call.id ?? `call_${++this.calls}`,
      type: 'function' as const,
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
    const answer = { text: text ?? null, calls, model: body.model, stream: body.stream === true };
    if (!answer.stream) return json(res, 200, completion(answer));
    this.#writing++;
    try {
      await sse(res, answer, this.wordMs);
    } finally {
      this.#writing--;
    }
  }
}

interface Answer {
  text: string | null;
  calls: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  model: string;
}

const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };

function finishReason(answer: Answer): string {
  return answer.calls.length > 0 ? 'tool_calls' : 'stop';
}

function completion(answer: Answer) {
  const message = {
    role: 'assistant',
    content: answer.text,
    ...(answer.calls.length > 0 ? { tool_calls: answer.calls } : {}),
  };
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: answer.model,
    choices: [{ index: 0, message, finish_reason: finishReason(answer) }],
    usage,
  };
}

async function sse(res: ServerResponse, answer: Answer, wordMs: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  const chunk = (delta: object, finish: string | null, extra: object = {}) =>
    `data: ${JSON.stringify({
      id: 'chatcmpl-fake',
      object: 'chat.completion.chunk',
      created: Math.floor(Date.now() / 1000),
      model: answer.model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...extra,
    })}\n\n`;
  res.write(chunk({ role: 'assistant', content: '' }, null));
  const words = wordMs > 0 ? (answer.text?.match(/\S+\s*/g) ?? []) : [answer.text ?? ''];
  for (const [i, word] of (answer.text === null ? [] : words).entries()) {
    if (i > 0) await new Promise((resolve) => setTimeout(resolve, wordMs));
    if (res.destroyed) return;
    res.write(chunk({ content: word }, null));
  }
  answer.calls.forEach((call, index) =>
    res.write(chunk({ tool_calls: [{ index, ...call }] }, null)),
  );
  res.write(chunk({}, finishReason(answer), { usage }));
  res.end('data: [DONE]\n\n');
}

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The text of the last `user` message of a recorded request.
 *
 * @example
 * ```ts
 * lastUserText(server.requests[0]!); // 'Alice: where is order 42?'
 * ```
 */
export function lastUserText(request: FakeChatRequest): string {
  const user = request.messages.filter((m) => m.role === 'user').at(-1);
  if (user === undefined) return '';
  if (typeof user.content === 'string') return user.content;
  if (!Array.isArray(user.content)) return '';
  return (user.content as { type?: string; text?: string }[])
    .map((part) => (part.type === 'text' ? (part.text ?? '') : ''))
    .join('');
}
