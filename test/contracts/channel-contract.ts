import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MalformedEventError, NetworkError, PlatformError, RateLimitError } from 'colloquy';
import type {
  Channel,
  ChannelHandlers,
  Delivery,
  ChannelType,
  ColloquyError,
  MessageDeletion,
  MessageEdit,
  NewMessage,
} from 'colloquy';
import { outboundFor } from '../../src/bot/turn.js';
import { expectNoSecret, expectRedactedCauses } from './secrets.js';

/** Where a person writes: a group channel, a DM with the bot, a thread (topic) of that group. */
export type Place = 'group' | 'dm' | 'thread';

/** Clauses a platform may lack. DMs, `send`, `stop` and identity are required of every channel. */
export type Capability =
  | 'group'
  | 'thread'
  | 'mentions'
  | 'replies'
  | 'edits'
  | 'deletes'
  | 'malformed'
  | 'echo'
  | 'split'
  | 'failures'
  | 'credentials';

/** What a person wrote, as the platform knows it. */
export interface Written {
  place: Place;
  text: string;
  /** The platform's message id, where the fake shows it (`metadata.messageId` must equal it). */
  platformId?: string;
}

export interface WriteInput {
  place: Place;
  text: string;
  /** Mention the bot the way the platform does (`@username`, `<@U…>`, `<@id>`). */
  mentionBot?: boolean;
  /** Reply to this message (Slack: answer in its thread). */
  replyTo?: { place: Place; platformId: string };
}

/** Something the bot posted, as the fake recorded it. */
export interface Posted {
  /** Which of the harness's places it landed in (`elsewhere` for any other). */
  place: Place | 'elsewhere';
  text: string;
  platformId?: string;
}

/** A channel that cannot start, the token part no error of it may show, and its cleanup. */
export interface FailingStart {
  channel: Channel;
  secret: string;
  close(): Promise<void>;
}

/** One fake platform with one channel built against it, plus the means to drive it. */
export interface ChannelHarness {
  readonly channel: Channel;
  /** The part of the channel's token that no error may show (with `failures`). */
  readonly secret?: string;
  /** The person `write` writes as, as colloquy must record them. */
  readonly person: { id: string; displayName: string };
  /** The documented conversation id of each place the harness offers (docs/sql.md). */
  readonly conversationIds: Partial<Record<Place, string>>;
  /** Longest message the platform takes, in UTF-16 code units (needed for `split`). */
  readonly messageLimit?: number;
  /** Runs after `channel.start` resolved (Slack: point the fake at the events URL). */
  afterStart?(): Promise<void> | void;
  /** A person writes; resolves once the platform has sent it on (not once it was handled). */
  write(input: WriteInput): Promise<Written>;
  /** The person edits what they wrote. */
  edit?(message: Written, text: string): Promise<void>;
  /** The person deletes what they wrote. */
  delete?(message: Written): Promise<void>;
  /** The platform sends an event missing what every such event has. */
  malformed?(): Promise<void>;
  /**
   * The platform hands the bot its own posts so far, as it does (or as it might): resolves once
   * they were sent on, ahead of anything written afterwards.
   */
  deliverEchoes?(): Promise<void>;
  /**
   * The platform answers the bot's next post with `failure` for as long as its library retries:
   * a server error (HTTP 500; Telegram's `error_code: 500`), or a rate limit (429) that the
   * library is set not to wait out.
   */
  failNextPost?(failure: 'server error' | 'rate limit'): void;
  /** What the bot posted, in order. */
  posted(): Posted[];
  /** Resolves when nothing the fake sent to the channel is still being delivered. */
  settle?(): Promise<void>;
  /** Stops the channel (again) and closes the fake. */
  close(): Promise<void>;
}

export interface ChannelHarnessFactory {
  type: ChannelType;
  /** Clauses this platform cannot take part in, with why. */
  unsupported?: Partial<Record<Capability, string>>;
  open(): Promise<ChannelHarness>;
  /** Channels whose start fails: the platform's API unreachable, the token refused. */
  failingStart?: {
    unreachable(): Promise<FailingStart>;
    refused(): Promise<FailingStart>;
  };
}

/** Handlers that take every event and do nothing with it. */
export const idleHandlers: ChannelHandlers = {
  message: async () => ({ handled: Promise.resolve() }),
  edit: async () => ({ handled: Promise.resolve() }),
  delete: async () => ({ handled: Promise.resolve() }),
  capacity: async () => {},
  error: () => {},
};

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/**
 * The one contract every `Channel` passes, run against each platform's real library talking
 * to its loopback fake (STYLE.md point 6). Platform details (signatures, retries, intents,
 * markup) stay in the per-platform suites; this is what the runtime and the store rely on:
 *
 * - after `start`, `botIdentity.id` is `<type>:…`;
 * - a person's message becomes one `NewMessage`: id `<type>:…:<platform id>`, the documented
 *   conversation id, participant, ISO-8601 UTC timestamp, scope `channel` / `dm` / `thread`
 *   (a thread is a conversation of its own, `<parent conversation>:<thread>`), metadata that
 *   points at the platform message, the bot's id in `mentions` when it is mentioned, and
 *   `replyToMessageId` / `replyToParticipantId` on a reply to the bot; a message delivered again
 *   (a retry, a replay, Slack's `message` + `app_mention`) comes with the same id;
 * - `send` posts where the question was, returns every part's platform id (a long reply in
 *   parts within the platform's limit, in order), and `SentMessage.id` (or the runtime's
 *   default `<type>:<channelId>:<first id>`) is the id an inbound message with that platform id
 *   would get;
 * - the bot's own posts never come back as turns; edits and deletions point at the platform
 *   message exactly as the turn's metadata did, so the store finds it;
 * - a malformed event goes to `handlers.error` as a `MalformedEventError` and the channel keeps
 *   delivering; `stop` resolves, is idempotent, and no handler is called after it;
 * - a failed `send` means the same on every platform: a server error is a transient
 *   `PlatformError` with code `http_500`, a rate limit a `RateLimitError` (`rate_limited`,
 *   transient, with the wait the platform asked for), both naming the conversation;
 * - no error shows the token: not a failed send's, nor a start's that failed because the API
 *   could not be reached (a `NetworkError`) or the token was refused (a `PlatformError`), in
 *   any way it is printed or serialized, and their causes are plain errors without requests.
 *
 * Each test opens a fresh fake and channel, starts the channel with recording handlers and
 * closes both afterwards. A platform that cannot do something (Telegram never tells a bot about
 * deletions; the console has only a DM) declares it in `unsupported`, and those clauses are
 * skipped with the reason in their title.
 *
 * @example
 * ```ts
 * describeChannelContract('Telegram', {
 *   type: 'telegram',
 *   unsupported: { deletes: 'Telegram never tells a bot that a message was deleted' },
 *   open: telegramHarness, // a fresh FakeTelegram and TelegramChannel, and how to drive them
 * });
 * ```
 */
export function describeChannelContract(name: string, factory: ChannelHarnessFactory): void {
  const type = factory.type;
  const unsupported = factory.unsupported ?? {};
  const can = (capability: Capability) => unsupported[capability] === undefined;
  const places: Place[] = (['group', 'dm', 'thread'] as const).filter(
    (place) => place === 'dm' || can(place),
  );
  /** A test that runs only when the platform has every capability in `needs`. */
  const clause = (title: string, needs: Capability[], body: () => Promise<void> | void) => {
    const missing = needs.find((capability) => !can(capability));
    if (missing === undefined) it(title, body);
    else it.skip(`${title} [${missing}: ${unsupported[missing]}]`, () => {});
  };
  const home: Place = can('group') ? 'group' : 'dm';

  describe(`Channel contract: ${name}, a start that fails`, () => {
    const attempt = async (open: () => Promise<FailingStart>) => {
      const failing = await open();
      try {
        return {
          error: await failing.channel.start(idleHandlers).catch((e: unknown) => e),
          failing,
        };
      } finally {
        await failing.close();
      }
    };

    clause(
      'when the API cannot be reached: a NetworkError without the token',
      ['credentials'],
      async () => {
        const { error, failing } = await attempt(() => factory.failingStart!.unreachable());

        expect(error).toBeInstanceOf(NetworkError);
        expectNoSecret(error, failing.secret);
        expectRedactedCauses(error);
      },
    );

    clause(
      'when the token is refused: a PlatformError without the token',
      ['credentials'],
      async () => {
        const { error, failing } = await attempt(() => factory.failingStart!.refused());

        expect(error).toBeInstanceOf(PlatformError);
        expectNoSecret(error, failing.secret);
        expectRedactedCauses(error);
      },
    );
  });

  describe(`Channel contract: ${name}`, () => {
    let h: ChannelHarness;
    let seen: Recorder;
    let count = 0;

    beforeEach(async () => {
      h = await factory.open();
      seen = new Recorder();
      await h.channel.start(seen);
      await h.afterStart?.();
    });

    afterEach(async () => {
      await h.close();
    });

    const botId = () => h.channel.botIdentity?.id ?? 'no bot identity';

    /** A person writes a unique text in `place`; resolves with the turn the channel made of it. */
    async function receive(input: Omit<WriteInput, 'text'> & { text?: string }) {
      const text = `${input.text ?? 'where is order 4711?'} (#${++count})`;
      const written = await h.write({ ...input, text });
      const message = await seen.until(`a message containing "${text}"`, () =>
        seen.messages.find((m) => m.content.includes(text)),
      );
      return { written, message };
    }

    /** The colloquy id an inbound turn in the same place as `turn` gets for `platformId`. */
    function idInSamePlace(turn: NewMessage, platformId: string): string {
      const messageId = turn.metadata.messageId ?? '';
      expect(turn.id.endsWith(`:${messageId}`)).toBe(true);
      return `${turn.id.slice(0, turn.id.length - messageId.length)}${platformId}`;
    }

    function expectTurn(message: NewMessage, written: Written) {
      const scope = { group: 'channel', dm: 'dm', thread: 'thread' }[written.place];
      expect(message.id.startsWith(`${type}:`)).toBe(true);
      expect(message.conversationId).toBe(h.conversationIds[written.place]);
      expect(message.participant).toEqual({
        kind: 'user',
        id: h.person.id,
        displayName: h.person.displayName,
      });
      expect(message.participant.id.startsWith(`${type}:`)).toBe(true);
      expect(message.timestamp).toMatch(ISO_UTC);
      expect(new Date(message.timestamp).toISOString()).toBe(message.timestamp);
      expect(message.scope).toBe(scope);
      expect(message.metadata.channelType).toBe(type);
      expect(message.metadata.channelId).toEqual(expect.any(String));
      expect(message.metadata.channelId).not.toBe('');
      expect(message.metadata.messageId).toEqual(expect.any(String));
      if (written.platformId !== undefined) {
        expect(message.metadata.messageId).toBe(written.platformId);
      }
      expect(message.id.endsWith(`:${message.metadata.messageId}`)).toBe(true);
      expect(Array.isArray(message.metadata.mentions)).toBe(true);
    }

    it('knows its own namespaced identity once started', () => {
      expect(h.channel.type).toBe(type);
      expect(h.channel.botIdentity?.id).toMatch(new RegExp(`^${type}:.+`));
    });

    clause(
      'delivers a group message as a turn of the channel conversation',
      ['group'],
      async () => {
        const { written, message } = await receive({ place: 'group' });

        expectTurn(message, written);
        expect(message.metadata.mentions).not.toContain(botId());
      },
    );

    it('delivers a direct message as a dm turn', async () => {
      const { written, message } = await receive({ place: 'dm' });

      expectTurn(message, written);
    });

    clause(
      'delivers a thread message as a conversation of its own under its channel',
      ['group', 'thread'],
      async () => {
        const parent = await receive({ place: 'group' });
        const { written, message } = await receive({ place: 'thread' });

        expectTurn(message, written);
        expect(message.conversationId).not.toBe(parent.message.conversationId);
        // Every documented format is `<parent conversation>:<thread>`.
        expect(message.conversationId.startsWith(`${parent.message.conversationId}:`)).toBe(true);
        expect(message.metadata.channelId).toBe(parent.message.metadata.channelId);
        expect(message.metadata.threadId).toEqual(expect.any(String));
      },
    );

    clause('records a mention of the bot as its identity, as one turn', ['mentions'], async () => {
      const mention = await receive({ place: home, mentionBot: true, text: 'status?' });
      const next = await receive({ place: home, text: 'thanks' });

      expect(mention.message.metadata.mentions).toContain(botId());
      // A platform that sends one mention twice (Slack: message and app_mention) hands it over
      // with one id: the store keeps one turn.
      expect([...new Set(seen.messages.map((m) => m.id))]).toEqual([
        mention.message.id,
        next.message.id,
      ]);
    });

    clause(
      'marks a reply to the bot as a reply to its message and to it',
      ['replies'],
      async () => {
        const question = await receive({ place: home });
        const sent = await h.channel.send(outboundFor(question.message, 'It ships tomorrow.'));
        const botMessage = sent.messageIds[0] as string;

        const { message } = await receive({
          place: home,
          text: 'which carrier?',
          replyTo: { place: home, platformId: botMessage },
        });

        expect(message.metadata.replyToMessageId).toBe(botMessage);
        expect(message.metadata.replyToParticipantId).toBe(botId());
      },
    );

    for (const place of places) {
      it(`answers in the ${place} it was asked in, with ids in the inbound scheme`, async () => {
        const { message: inbound } = await receive({ place });
        const { message: sibling } = await receive({ place });
        const before = h.posted().length;

        const sent = await h.channel.send(outboundFor(inbound, 'On its way.'));

        const posts = h.posted().slice(before);
        expect(posts).toHaveLength(1);
        expect(posts[0]).toMatchObject({ place, text: 'On its way.' });
        expect(sent.messageIds).toHaveLength(1);
        const platformId = sent.messageIds[0] as string;
        if (posts[0]?.platformId !== undefined) expect(platformId).toBe(posts[0].platformId);
        // Ids in one place differ only by the platform id, and so does what the bot posted.
        expect(idInSamePlace(sibling, inbound.metadata.messageId ?? '')).toBe(inbound.id);
        const id = sent.id ?? `${type}:${inbound.metadata.channelId}:${platformId}`;
        expect(id).toBe(idInSamePlace(inbound, platformId));
        if (sent.timestamp !== undefined) expect(sent.timestamp).toMatch(ISO_UTC);
      });
    }

    clause('splits a long reply into ordered parts within the limit', ['split'], async () => {
      const limit = h.messageLimit as number;
      const paragraphs: string[] = [];
      for (let i = 1; paragraphs.join('\n\n').length < limit * 2.5; i++) {
        paragraphs.push(
          `Paragraph ${i}: ${'the parcel leaves the depot early '.repeat(9).trim()}.`,
        );
      }
      const content = paragraphs.join('\n\n');
      const { message: inbound } = await receive({ place: home });
      const before = h.posted().length;

      const sent = await h.channel.send(outboundFor(inbound, content));

      const posts = h.posted().slice(before);
      expect(posts.length).toBeGreaterThanOrEqual(3);
      expect(sent.messageIds).toHaveLength(posts.length);
      for (const [index, post] of posts.entries()) {
        expect(post.place).toBe(home);
        expect(post.text.length).toBeLessThanOrEqual(limit);
        if (post.platformId !== undefined) expect(sent.messageIds[index]).toBe(post.platformId);
      }
      const words = (text: string) => text.split(/\s+/).filter(Boolean).join(' ');
      expect(words(posts.map((post) => post.text).join('\n'))).toBe(words(content));
    });

    clause('never hands the bot its own messages', ['echo'], async () => {
      const question = await receive({ place: home });
      await h.channel.send(outboundFor(question.message, 'An answer the platform echoes.'));

      await h.deliverEchoes?.();
      const next = await receive({ place: home });

      expect(seen.messages).toEqual([question.message, next.message]);
    });

    for (const place of places) {
      clause(
        `reports an edit in a ${place} as an edit of the turn it made`,
        ['edits'],
        async () => {
          const { written, message } = await receive({ place, text: 'teh plan' });

          await h.edit?.(written, `the plan (edited ${count})`);
          const edit = await seen.until('an edit', () => seen.edits[0]);

          expect(edit).toMatchObject({
            channelType: message.metadata.channelType,
            channelId: message.metadata.channelId,
            messageId: message.metadata.messageId,
            content: `the plan (edited ${count})`,
          });
          expect(edit.editedAt).toMatch(ISO_UTC);
        },
      );
    }

    for (const place of places) {
      clause(`reports a deletion in a ${place} for the turn it made`, ['deletes'], async () => {
        const { written, message } = await receive({ place, text: 'oops' });

        await h.delete?.(written);
        const deletion = await seen.until('a deletion', () => seen.deletions[0]);

        expect(deletion).toMatchObject({
          channelType: message.metadata.channelType,
          channelId: message.metadata.channelId,
          messageId: message.metadata.messageId,
        });
        expect(deletion.deletedAt).toMatch(ISO_UTC);
      });
    }

    clause(
      'reports a server error on send as a transient PlatformError http_500',
      ['failures'],
      async () => {
        const { message } = await receive({ place: home });
        h.failNextPost?.('server error');

        const error = await h.channel.send(outboundFor(message, 'hi')).catch((e: unknown) => e);

        expect(error).toBeInstanceOf(PlatformError);
        expect(error).not.toBeInstanceOf(RateLimitError);
        expect(error).toMatchObject({
          platform: type,
          code: 'http_500',
          transient: true,
          conversationId: message.conversationId,
        });
        expect(h.secret, 'the harness names its token').toBeDefined();
        expectNoSecret(error, h.secret!);
        expectRedactedCauses(error);
      },
    );

    clause('reports a rate limit on send as a RateLimitError', ['failures'], async () => {
      const { message } = await receive({ place: home });
      h.failNextPost?.('rate limit');

      const error = await h.channel.send(outboundFor(message, 'hi')).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(RateLimitError);
      expect(error).toMatchObject({
        name: 'RateLimitError',
        platform: type,
        code: 'rate_limited',
        transient: true,
        retryAfterMs: expect.any(Number),
        conversationId: message.conversationId,
      });
    });

    clause('reports a malformed event and keeps delivering', ['malformed'], async () => {
      await h.malformed?.();
      const error = await seen.until('an error', () => seen.errors[0]);
      const next = await receive({ place: home });

      expect(error).toBeInstanceOf(MalformedEventError);
      expect(seen.messages).toEqual([next.message]);
    });

    it('stops idempotently and calls no handler afterwards', async () => {
      await receive({ place: home });

      await h.channel.stop();
      await h.channel.stop();
      const calls = seen.calls;
      await h.write({ place: home, text: 'anyone there?' }).catch(() => undefined);
      await h.settle?.();

      expect(seen.calls).toBe(calls);
    });
  });
}

/** Handlers that record every call, with a way to await one. */
export class Recorder implements ChannelHandlers {
  readonly messages: NewMessage[] = [];
  readonly edits: MessageEdit[] = [];
  readonly deletions: MessageDeletion[] = [];
  readonly errors: ColloquyError[] = [];
  /** Handler calls of any kind so far. */
  calls = 0;
  private readonly waiters = new Set<() => void>();

  /** Records the turn once the channel has it whole (`complete`, when it gives one). */
  async message(message: NewMessage, complete?: Promise<NewMessage>): Promise<Delivery> {
    const whole = await (complete ?? message);
    this.record(() => this.messages.push(whole));
    return { handled: Promise.resolve() };
  }
  async edit(edit: MessageEdit, complete?: Promise<MessageEdit>): Promise<Delivery> {
    const whole = await (complete ?? edit);
    this.record(() => this.edits.push(whole));
    return { handled: Promise.resolve() };
  }
  async delete(deletion: MessageDeletion): Promise<Delivery> {
    this.record(() => this.deletions.push(deletion));
    return { handled: Promise.resolve() };
  }
  async capacity(): Promise<void> {}
  error(error: ColloquyError): void {
    this.record(() => this.errors.push(error));
  }

  /** Resolves with what `find` returns once it returns something; rejects after `timeoutMs`. */
  until<T>(what: string, find: () => T | undefined, timeoutMs = 5000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const found = find();
        if (found === undefined) return;
        clearTimeout(timer);
        this.waiters.delete(check);
        resolve(found);
      };
      const timer = setTimeout(() => {
        this.waiters.delete(check);
        const summary = {
          messages: this.messages.map((m) => m.content),
          edits: this.edits.length,
          deletions: this.deletions.length,
          errors: this.errors.map((e) => e.message),
        };
        reject(new Error(`waited ${timeoutMs} ms for ${what}; saw ${JSON.stringify(summary)}`));
      }, timeoutMs);
      this.waiters.add(check);
      check();
    });
  }

  private record(push: () => void): void {
    this.calls++;
    push();
    for (const check of [...this.waiters]) check();
  }
}
