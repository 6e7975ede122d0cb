import { join } from 'node:path';
import type { LanguageModelV3StreamPart } from '@ai-sdk/provider';
import { LogLevel } from '@slack/bolt';
import { MockLanguageModelV3 } from 'ai/test';
import { BaseAgent } from '../../agents/base-agent.js';
import { DiscordChannel } from '../../channels/discord/index.js';
import { FakeDiscord } from '../../channels/discord/fake.js';
import { SlackChannel } from '../../channels/slack/index.js';
import { FakeSlack } from '../../channels/slack/fake.js';
import { TelegramChannel } from '../../channels/telegram/index.js';
import { FakeTelegram } from '../../channels/telegram/fake.js';
import { SqliteConversationStore } from '../../db/sqlite/index.js';
import { Bot } from '../../src/bot.js';
import type { Channel } from '../../src/channel.js';
import { silentLogger } from '../../src/logger.js';
import type { AppendResult, CommitResult, StoreOperation } from '../../src/store.js';
import type { NewMessage } from '../../src/types.js';
import { int, line, note, verdict } from './report.js';
import type { Outcome } from './store.js';
import { removeDb } from './store-write.js';
import { answer } from '../fixtures/model-answer.js';

export interface LatencyBenchOptions {
  /** Turns per platform, one after the other in one conversation (the bench passes 20). */
  turns: number;
  /** Folder for the database files. */
  dir: string;
}

/** The model: first token after this long, then one word every `PACE_MS`. */
const FIRST_TOKEN_MS = 400;
const PACE_MS = 70;
const WORDS = 24;
const ANSWER = Array.from({ length: WORDS }, (_, i) => `word${i + 1}`).join(' ');
/** Targets, from the model's own timings and the turn's commit. */
const SIGN_OF_LIFE_MS = 300;
const FIRST_WORDS_MS = 400;
const WHOLE_ANSWER_MS = 600;

/** When the model wrote, per answer: its request, its first token, its last word (ms since the epoch). */
interface ModelTimes {
  asked: number;
  firstToken: number;
  lastWord: number;
}

/** How long the person reads an answer before the next question. */
const READING_MS = 3000;

/** A streaming model with a set first-token time and pace, that notes when it wrote. */
function timedModel() {
  const answers: ModelTimes[] = [];
  const waiters: (() => void)[] = [];
  const done = (times: ModelTimes) => {
    answers.push(times);
    waiters.shift()?.();
  };
  const model = new MockLanguageModelV3({
    /** Asked for the whole answer (a channel that cannot stream): it comes at the last word. */
    doGenerate: async () => {
      const times: ModelTimes = { asked: Date.now(), firstToken: 0, lastWord: 0 };
      setTimeout(() => (times.firstToken = Date.now()), FIRST_TOKEN_MS);
      await new Promise((resolve) => setTimeout(resolve, FIRST_TOKEN_MS + (WORDS - 1) * PACE_MS));
      times.lastWord = Date.now();
      setImmediate(() => done(times));
      return answer(ANSWER);
    },
    doStream: async () => {
      const times: ModelTimes = { asked: Date.now(), firstToken: 0, lastWord: 0 };
      const words = ANSWER.split(' ');
      let timer: NodeJS.Timeout | undefined;
      return {
        stream: new ReadableStream<LanguageModelV3StreamPart>({
          cancel(reason) {
            // The run was stopped: the provider stops writing.
            clearTimeout(timer);
            console.error('the model stream was cancelled:', reason);
          },
          start(c) {
            c.enqueue({ type: 'stream-start', warnings: [] });
            c.enqueue({ type: 'text-start', id: 't' });
            // One word at a time, each timed from the request: the words come in order even
            // when a busy machine runs the timers late.
            const write = (i: number) => {
              const word = words[i]!;
              c.enqueue({ type: 'text-delta', id: 't', delta: i === 0 ? word : ` ${word}` });
              if (i === 0) times.firstToken = Date.now();
              if (i < words.length - 1) return wordAt(i + 1);
              times.lastWord = Date.now();
              c.enqueue({ type: 'text-end', id: 't' });
              c.enqueue({
                type: 'finish',
                finishReason: { unified: 'stop', raw: 'stop' },
                usage: {
                  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
                  outputTokens: { total: WORDS, text: WORDS, reasoning: 0 },
                },
              });
              c.close();
              done(times);
            };
            const wordAt = (i: number) => {
              const due = times.asked + FIRST_TOKEN_MS + i * PACE_MS;
              timer = setTimeout(() => write(i), Math.max(0, due - Date.now()));
            };
            wordAt(0);
          },
        }),
      };
    },
  });
  /** Resolves once the model finished its next answer. */
  const finished = () => new Promise<void>((resolve) => waiters.push(resolve));
  return { model, answers, finished };
}

/** The SQLite store, noting when each person's turn is committed. */
class TimedStore extends SqliteConversationStore {
  readonly committed: number[] = [];
  override async append(message: NewMessage): Promise<AppendResult> {
    const result = await super.append(message);
    if (message.participant.kind === 'user') this.committed.push(Date.now());
    return result;
  }
  override async commit(ops: readonly StoreOperation[]): Promise<CommitResult[]> {
    const results = await super.commit(ops);
    for (const op of ops) {
      if (op.kind === 'append' && op.message.participant.kind === 'user') {
        this.committed.push(Date.now());
      }
    }
    return results;
  }
}

/** One request a fake saw, reduced to what the figures need. */
interface Seen {
  /** `post` and `edit` change a message; `draft` changes Telegram's ephemeral preview. */
  kind: 'typing' | 'post' | 'edit' | 'draft' | 'other';
  at: number;
}

/** A bot on one platform's fake: how to write to it and how to read what it showed. */
interface Platform {
  name: string;
  /** How the platform shows a reply (streamed, or sent whole). */
  shows: string;
  channel: Channel;
  /** Called once the channel started. */
  ready?: () => void;
  say(text: string): void | Promise<unknown>;
  seen(): Seen[];
  close(): Promise<void>;
}

/** Telegram in a private chat (drafts, then the message) or a group (a message, then edits). */
async function telegram(place: 'dm' | 'group'): Promise<Platform> {
  const fake = await FakeTelegram.start();
  const ada = { id: 1001, is_bot: false, first_name: 'Ada' };
  const chat =
    place === 'dm'
      ? ({ id: 1001, type: 'private', first_name: 'Ada' } as const)
      : ({ id: -2002, type: 'group', title: 'Team' } as const);
  const kinds: Record<string, Seen['kind']> = {
    sendChatAction: 'typing',
    sendMessageDraft: 'draft',
    sendMessage: 'post',
    editMessageText: 'edit',
  };
  return {
    name: place === 'dm' ? 'Telegram DM' : 'Telegram group',
    shows:
      place === 'dm'
        ? 'streamed: sendMessageDraft, then the whole answer with sendMessage'
        : 'streamed: sendMessage, then editMessageText',
    channel: new TelegramChannel({
      token: fake.token,
      client: { apiRoot: fake.apiRoot },
      pollingTimeoutSeconds: 5,
    }),
    say: (text) => {
      const mention = place === 'dm' ? '' : `@${fake.botInfo.username} `;
      fake.sendUserMessage({ chat, from: ada, text: `${mention}${text}` });
    },
    seen: () => fake.calls.map((call) => ({ kind: kinds[call.method] ?? 'other', at: call.at })),
    close: () => fake.close(),
  };
}

async function discord(): Promise<Platform> {
  const fake = await FakeDiscord.start();
  const channelId = '290926798999357250';
  fake.addGuild({
    id: '81384788765712384',
    name: 'Guild',
    channels: [{ id: channelId, name: 'general' }],
  });
  const kind = (method: string, path: string): Seen['kind'] => {
    if (!path.startsWith(`/api/v10/channels/${channelId}/`)) return 'other';
    if (method === 'POST' && path.endsWith('/typing')) return 'typing';
    if (method === 'POST' && path.endsWith('/messages')) return 'post';
    return method === 'PATCH' ? 'edit' : 'other';
  };
  return {
    name: 'Discord',
    shows: 'streamed: post, then edits',
    channel: new DiscordChannel({
      token: fake.token,
      clientOptions: { rest: { api: fake.restApi } },
    }),
    say: (text) => {
      fake.userMessage({
        channelId,
        author: { id: '80351110224678912', username: 'alice', global_name: 'Alice' },
        content: `<@${fake.botUser.id}> ${text}`,
        mentions: [fake.botUser],
      });
    },
    seen: () =>
      fake.requests.map((request) => ({
        kind: kind(request.method, request.path),
        at: request.at,
      })),
    close: () => fake.close(),
  };
}

/** Slack in a channel thread (Slack's streaming methods) or a DM (a post, then chat.update). */
async function slack(place: 'thread' | 'dm'): Promise<Platform> {
  const fake = await FakeSlack.start();
  const kinds: Record<string, Seen['kind']> = {
    'reactions.add': 'typing',
    'assistant.threads.setStatus': 'typing',
    'chat.postMessage': 'post',
    'chat.startStream': 'post',
    'chat.update': 'edit',
    'chat.appendStream': 'edit',
    'chat.stopStream': 'edit',
  };
  const channel = new SlackChannel({
    token: fake.token,
    signingSecret: fake.signingSecret,
    port: 0,
    host: '127.0.0.1',
    logLevel: LogLevel.ERROR,
    clientOptions: { slackApiUrl: fake.slackApiUrl, retryConfig: { retries: 0 } },
  });
  return {
    name: place === 'thread' ? 'Slack thread' : 'Slack DM',
    shows:
      place === 'thread'
        ? 'streamed: chat.startStream, appendStream, stopStream (thread status while working)'
        : 'streamed: chat.postMessage, then chat.update (👀 reaction while working)',
    channel,
    ready: () => (fake.eventsUrl = channel.eventsUrl),
    say: (text) =>
      place === 'thread'
        ? fake.mention({ channel: 'C0GENERAL', user: 'U0ALICE', text })
        : fake.message({ channel: 'D0ALICE', user: 'U0ALICE', text }),
    seen: () => fake.calls.map((call) => ({ kind: kinds[call.method] ?? 'other', at: call.at })),
    close: () => fake.close(),
  };
}

/** The figures of one answer, in ms. */
interface Turn {
  signOfLife: number;
  firstWords: number;
  whole: number;
  edits: number;
  modelFirstToken: number;
  modelLastWord: number;
}

/** Runs `turns` turns against one platform, one after the other, and reads what was shown. */
async function measure(
  platform: Platform,
  turns: number,
  dir: string,
): Promise<{ turns: Turn[]; replies: number }> {
  const path = join(dir, `latency-${platform.name.toLowerCase()}.db`);
  removeDb(path);
  const store = new TimedStore({ path });
  const timed = timedModel();
  class LatencyAgent extends BaseAgent {
    name = 'latency-agent';
    description = 'Answers with a paced stream';
    instructions = 'Be brief.';
    override model = timed.model;
  }
  const bot = new Bot({
    channels: [platform.channel],
    agents: [new LatencyAgent()],
    store,
    logger: silentLogger,
  });
  await bot.start();
  platform.ready?.();
  const results: Turn[] = [];
  try {
    for (let i = 0; i < turns; i++) {
      const from = platform.seen().length;
      const before = store.committed.length;
      const finished = timed.finished();
      await platform.say(`question ${i + 1}: where is my order?`);
      await finished;
      await bot.idle();
      // The person reads the answer before asking again: the platforms' edit limits are per
      // chat and per channel, and twenty questions with no pause between would meet them.
      await new Promise((resolve) => setTimeout(resolve, READING_MS));
      // The first commit of this turn (a Slack mention comes as two events).
      const committed = store.committed[before] ?? Number.NaN;
      const model = timed.answers[i] as ModelTimes;
      const seen = platform.seen().slice(from);
      const at = (kind: Seen['kind']) => seen.find((s) => s.kind === kind)?.at ?? Number.NaN;
      const shown = seen.filter(
        (s) => s.kind === 'post' || s.kind === 'edit' || s.kind === 'draft',
      );
      results.push({
        signOfLife: at('typing') - committed,
        firstWords: (shown[0]?.at ?? Number.NaN) - model.asked,
        whole: (shown.at(-1)?.at ?? Number.NaN) - model.lastWord,
        // calls that changed what the person sees after the first words
        edits: Math.max(0, shown.length - 1),
        modelFirstToken: model.firstToken - model.asked,
        modelLastWord: model.lastWord - model.asked,
      });
    }
    const { items } = await store.listConversations({ limit: 100 });
    let replies = 0;
    for (const conversation of items) {
      const rows = await store.get(conversation.id);
      replies += rows.filter((row) => row.participant.kind === 'agent').length;
    }
    return { turns: results, replies };
  } finally {
    await bot.stop();
    await platform.close();
    await store.close();
    removeDb(path);
  }
}

/** Median and 95th percentile (nearest rank). */
function mp(values: number[]): { p50: number; p95: number } {
  const sorted = Float64Array.from(values).sort();
  const at = (p: number) =>
    sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * p) - 1)] ?? 0;
  return { p50: at(0.5), p95: at(0.95) };
}

const show = ({ p50, p95 }: { p50: number; p95: number }) =>
  `median ${int(p50)} ms  p95 ${int(p95)} ms`;

/**
 * What a person sees while the agent answers: the sign of life, the first words and the whole
 * answer on each platform's fake, next to the model's own timings in the same run. The places
 * (a Telegram DM and group, Discord, a Slack thread and DM) run at once, each with its turns
 * one after the other.
 */
export async function benchLatency(options: LatencyBenchOptions): Promise<Outcome[]> {
  console.log(
    `\n── Latency: ${int(options.turns)} turns per platform, model's first token at ${FIRST_TOKEN_MS} ms, ` +
      `${WORDS} words one every ${PACE_MS} ms, ${READING_MS} ms of reading between answers ──`,
  );
  const platforms = [
    await telegram('dm'),
    await telegram('group'),
    await discord(),
    await slack('thread'),
    await slack('dm'),
  ];
  const runs = await Promise.all(platforms.map((p) => measure(p, options.turns, options.dir)));
  const outcomes: Outcome[] = [];
  platforms.forEach((platform, index) => {
    const { turns, replies } = runs[index] as { turns: Turn[]; replies: number };
    const pick = (key: keyof Turn) => mp(turns.map((turn) => turn[key]));
    const modelFirst = pick('modelFirstToken');
    const modelLast = pick('modelLastWord');
    const life = pick('signOfLife');
    const first = pick('firstWords');
    const whole = pick('whole');
    const edits = pick('edits');
    const lifeOk = life.p95 <= SIGN_OF_LIFE_MS;
    const firstOk = first.p95 <= modelFirst.p95 + FIRST_WORDS_MS;
    const wholeOk = whole.p95 <= WHOLE_ANSWER_MS;
    const rowsOk = replies === turns.length;
    console.log(`${platform.name} (${platform.shows})`);
    console.log(
      line(
        '  sign of life',
        show(life),
        'after the turn is committed',
        `p95 ≤ ${SIGN_OF_LIFE_MS} ms ${verdict(lifeOk)}`,
      ),
    );
    console.log(
      line(
        '  first words',
        show(first),
        `model's first token ${show(modelFirst)}`,
        `p95 ≤ first token + ${FIRST_WORDS_MS} ms ${verdict(firstOk)}`,
      ),
    );
    console.log(
      line(
        '  whole answer',
        show(whole),
        `after the model's last word (${show(modelLast)})`,
        `p95 ≤ ${WHOLE_ANSWER_MS} ms ${verdict(wholeOk)}`,
      ),
    );
    console.log(line('  edits per answer', `median ${edits.p50}  p95 ${edits.p95}`, 'no target'));
    console.log(
      line(
        '  reply rows',
        `${int(replies)} for ${int(turns.length)} answers`,
        'store count',
        `one each ${verdict(rowsOk)}`,
      ),
    );
    outcomes.push(
      { label: `latency ${platform.name}: sign of life p95 ${int(life.p95)} ms`, pass: lifeOk },
      {
        label: `latency ${platform.name}: first words p95 ${int(first.p95)} ms (model's first token ${int(modelFirst.p95)} ms)`,
        pass: firstOk,
      },
      {
        label: `latency ${platform.name}: whole answer p95 ${int(whole.p95)} ms after the last word`,
        pass: wholeOk,
      },
      { label: `latency ${platform.name}: one reply row per answer`, pass: rowsOk },
    );
  });
  console.log(
    note(
      'timestamps from the fakes’ request logs (typing call, first post, last post or edit) and the store (the turn committed); the model is an in-process stream',
    ),
  );
  return outcomes;
}
