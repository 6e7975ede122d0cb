/**
 * `SlackChannel`: colloquy on Slack through Bolt — HTTP events (signed; Bolt checks the
 * signature) at `/slack/events`, or Socket Mode when an app-level token is given.
 *
 * @example
 * ```ts
 * import { Bot } from 'colloquy';
 * import { SlackChannel } from 'colloquy/slack';
 *
 * const slack = new SlackChannel({
 *   token: process.env.SLACK_BOT_TOKEN!,
 *   signingSecret: process.env.SLACK_SIGNING_SECRET!,
 *   port: 3000,
 * });
 * const bot = new Bot({ channels: [slack], agents: [new SupportAgent()] });
 * await bot.start();
 * ```
 */
import type { PostPlace } from '../../src/posts.js';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { App, HTTPReceiver, LogLevel, SocketModeReceiver } from '@slack/bolt';
import type { AppOptions, Logger, Receiver, types as slackTypes } from '@slack/bolt';
import type {
  ActionsEdit,
  BotIdentity,
  Channel,
  ChannelHandlers,
  MessageRef,
  OutboundMessage,
  ReplyPlace,
  ReplyStream,
  SendOptions,
  SentMessage,
  StreamOptions,
  TypingIndicator,
  UnsettledReply,
} from '../../src/channel.js';
import type { NewMessage } from '../../src/types.js';
import type { ReactionChange } from '../../src/reactions.js';
import type {
  AttachmentFetchOptions,
  FetchedAttachment,
  MessageAttachment,
} from '../../src/attachments.js';
import { ColloquyError, PlatformError } from '../../src/errors.js';
import { filesOnly, filesSent } from '../shared/files.js';
import { sendParts } from '../shared/platform.js';
import {
  SLACK_TEXT_LIMIT,
  escapeSlackMarkdown,
  formatSlackText,
  postingOnce,
  toColloquyError,
  slackRefused,
} from './format.js';
import { sendSlackFiles, slackReactionName } from './files.js';
import { slackTyping, type SlackTypingOptions } from './typing.js';
import { postSlackPart, slackStream } from './stream.js';
import { refuseSkewedRequests } from './request-bounds.js';
import { settleSlackReply } from './settle.js';
import { addSecret } from '../../src/logger.js';
import { commandTurn, pressTurn, slackBlocks, usedBlocks } from './interactions.js';
import type { SlackBlockActionsBody } from './interactions.js';
import {
  parseSlackEvent,
  slackConversationId,
  slackMessageId,
  slackPostPlace,
  slackParticipantId,
  slackUserIdsToResolve,
} from './parse.js';
import type { ParsedSlackEvent, SlackParseContext, SlackSelf, SocketModeEvent } from './parse.js';
import { slackReaction } from './reactions.js';
import { SlackNames } from './names.js';
import { slackDownload } from './download.js';

export interface SlackChannelOptions {
  /** Bot token (`xoxb-…`). Required unless `app` is given. */
  token?: string;
  /** Signing secret, for HTTP events (Bolt verifies every request with it). */
  signingSecret?: string;
  /** App-level token (`xapp-…`, scope `connections:write`): switches to Socket Mode. */
  appToken?: string;
  /** HTTP port (default 3000; 0 picks a free one — read `eventsUrl` after start). */
  port?: number;
  /** Interface to listen on (default: all interfaces). */
  host?: string;
  /** Path of the Events API endpoint (default `/slack/events`). */
  endpoint?: string;
  /**
   * False: start no server; mount `requestListener` on your own. Default true.
   * Ignored in Socket Mode.
   */
  listen?: boolean;
  /**
   * Web API client options (`slackApiUrl`, `retryConfig`, `timeout`…), passed to Bolt. Its
   * retries never post a message twice: a post whose answer is lost is looked for by its
   * metadata instead (see `postingOnce`). An `app` of your own keeps its own client.
   */
  clientOptions?: AppOptions['clientOptions'];
  /** An existing Bolt app: the channel adds its listeners and does not start or stop it. */
  app?: App;
  /**
   * A custom Bolt receiver (ExpressReceiver, AwsLambdaReceiver…), started by the channel. Give
   * it `processBeforeResponse: true`, or Slack is answered before the event is committed.
   */
  receiver?: Receiver;
  /** Bolt's logger and level (default: Bolt's console logger at `warn`). */
  logger?: Logger;
  logLevel?: LogLevel;
  /** Any further Bolt `App` options. */
  appOptions?: Partial<AppOptions>;
  /** Longest reply part (default 4000: chat.postMessage truncates longer text). */
  textLimit?: number;
  /**
   * Let replies keep `<!here>`, `<!channel>`, `<!everyone>` and `<!subteam^…>`, which notify a
   * whole channel or user group. Default false: they are escaped into plain text, so a model
   * (or a prompt injected into it) cannot page everyone.
   */
  allowBroadcastMentions?: boolean;
  /**
   * Answer a top-level message in a channel in a thread of that message, as Slack apps do so a
   * channel is not flooded (default true). False: answer at top level. Replies to a thread
   * message stay in its thread, and DMs are answered where they were written, either way.
   */
  replyInThread?: boolean;
  /** What people see while an agent works: a thread status, or a reaction (`SlackTypingOptions`). */
  typing?: SlackTypingOptions;
}

/** Web API retries for a chat bot: a reply minutes late is worse than a reported failure. */
const DEFAULT_RETRY = {
  retries: 5,
  factor: 2,
  minTimeout: 500,
  maxTimeout: 10_000,
  randomize: true,
};

/**
 * A colloquy `Channel` for Slack, built on `@slack/bolt`.
 *
 * Replies go in the thread for a thread message (a DM's included), top level in a DM, and in a
 * thread of a top-level channel message (its own conversation,
 * `slack:<team>:<channel>:<message ts>`) unless `replyInThread` is false.
 *
 * An event is acknowledged only once it is committed to the store: over HTTP the answer is held
 * until then (Bolt's `processBeforeResponse`), and in Socket Mode the envelope's ack is sent
 * then. When the store fails Slack gets a 500 (or no ack) and sends the event again.
 */
export class SlackChannel implements Channel {
  readonly type = 'slack';
  /** The Bolt app (its `client` is the Web API client). */
  readonly app: App;
  readonly typing: TypingIndicator;
  private readonly refused = new Set<string>(); // where Slack refused to stream (see slackStream)
  private readonly options: SlackChannelOptions;
  private readonly ownsApp: boolean;
  private readonly httpReceiver: HTTPReceiver | undefined;
  private handlers: ChannelHandlers | undefined;
  private identity: BotIdentity | undefined;
  private self: SlackSelf | undefined;
  private teamId: string | undefined;
  /** An org-wide install: its events and posts span the organisation's workspaces. */
  private orgWide = false;
  private server: Server | undefined;
  private readonly names = new SlackNames(() => this.app.client);

  constructor(options: SlackChannelOptions) {
    this.options = options;
    this.typing = slackTyping(() => this.app.client, options.typing);
    for (const secret of [options.token, options.signingSecret, options.appToken])
      addSecret(secret);
    if (options.app !== undefined) {
      this.app = options.app;
      this.ownsApp = false;
    } else {
      if (options.token === undefined)
        throw new TypeError('SlackChannel: give a bot token (xoxb-…) or an app');
      const socketMode = options.appToken !== undefined;
      if (!socketMode && options.receiver === undefined && options.signingSecret === undefined) {
        throw new TypeError(
          'SlackChannel: HTTP events need signingSecret (or give appToken for Socket Mode)',
        );
      }
      const logLevel = options.logLevel ?? LogLevel.WARN;
      const logging = options.logger !== undefined ? { logger: options.logger } : { logLevel };
      const clientOptions = postingOnce({ retryConfig: DEFAULT_RETRY, ...options.clientOptions });
      let receiver = options.receiver;
      if (!socketMode && receiver === undefined) {
        receiver = this.httpReceiver = new HTTPReceiver({
          signingSecret: options.signingSecret as string,
          endpoints: options.endpoint ?? '/slack/events',
          // The answer waits for the listeners, and ours resolve once the event is committed.
          processBeforeResponse: true,
          ...logging,
        });
      } else if (socketMode) {
        receiver = this.socketReceiver(options.appToken as string, clientOptions, logging);
      }
      this.app = new App({
        token: options.token,
        receiver,
        clientOptions,
        ...(options.logger !== undefined ? { logger: options.logger } : { logLevel }),
        deferInitialization: true,
        ...options.appOptions,
      });
      this.ownsApp = true;
    }
    // Bolt's own server calls the receiver's public listener: refuse out-of-range timestamps first.
    if (this.httpReceiver !== undefined) {
      this.httpReceiver.requestListener = refuseSkewedRequests(this.httpReceiver.requestListener);
    }
    this.app.event('message', ({ body, context }) => this.dispatch(body, context.retryNum));
    this.app.event('app_mention', ({ body, context }) => this.dispatch(body, context.retryNum));
    this.app.event('reaction_added', ({ body }) => this.reacted(body));
    this.app.event('reaction_removed', ({ body }) => this.reacted(body));
    this.app.command(/.*/, ({ body, ack }) => this.interaction(commandTurn(body), ack));
    this.app.action(/.*/, ({ body, ack }) =>
      this.interaction(pressTurn(body as SlackBlockActionsBody, this.teamId ?? ''), ack),
    );
  }

  get botIdentity(): BotIdentity | undefined {
    return this.identity;
  }

  /**
   * Bolt's Socket Mode receiver, with the ack of an Events API envelope held until the event's
   * listeners are done (ours: once it is committed), and not sent when they fail, so Slack
   * sends the envelope again. Bolt would ack before the listeners run. Other envelopes
   * (interactivity, commands) keep Bolt's behaviour: the listener calls `ack` itself.
   */
  private socketReceiver(
    appToken: string,
    clientOptions: NonNullable<AppOptions['clientOptions']>,
    logging: { logger: Logger } | { logLevel: LogLevel },
  ): SocketModeReceiver {
    const receiver = new SocketModeReceiver({
      appToken,
      installerOptions: { clientOptions },
      ...logging,
    });
    receiver.client.removeAllListeners('slack_event');
    receiver.client.on('slack_event', async (args: SocketModeEvent) => {
      const held = args.type === 'events_api';
      let acked = false;
      let response: unknown;
      const ack = async (body?: unknown) => {
        if (acked) return;
        acked = true;
        if (held) response = body;
        else await args.ack(body);
      };
      try {
        await this.app.processEvent({
          body: args.body,
          ack,
          retryNum: args.retry_num,
          retryReason: args.retry_reason,
          customProperties: {},
        });
        if (held && acked) await args.ack(response);
      } catch {
        // Not acknowledged: Slack delivers the envelope again. The failure was reported.
      }
    });
    return receiver;
  }

  /** The events URL on 127.0.0.1 once started on a port (for FakeSlack and local tests). */
  get eventsUrl(): string | undefined {
    const address = this.server?.address() as AddressInfo | null | undefined;
    if (address == null) return undefined;
    return `http://127.0.0.1:${address.port}${this.options.endpoint ?? '/slack/events'}`;
  }

  /**
   * A Node request listener for the Events API endpoint, to mount on a server you own
   * (`listen: false`). Requests for other paths go to `next` (or get 404).
   *
   * @example
   * ```ts
   * const slack = new SlackChannel({ token, signingSecret, listen: false });
   * http.createServer((req, res) => slack.requestListener(req, res)).listen(8080);
   * ```
   */
  requestListener = (req: IncomingMessage, res: ServerResponse, next?: () => void): void => {
    if (this.httpReceiver === undefined) {
      throw new Error('SlackChannel: requestListener needs HTTP mode (no appToken, no receiver)');
    }
    try {
      this.httpReceiver.requestListener(req, res);
    } catch (error) {
      // Bolt throws this for paths it does not serve.
      if ((error as { code?: string }).code !== 'slack_bolt_http_receiver_deferred_request_error') {
        throw error;
      }
      if (next !== undefined) next();
      else res.writeHead(404).end();
    }
  };

  async start(handlers: ChannelHandlers): Promise<void> {
    this.handlers = handlers;
    let auth: {
      user_id?: string;
      bot_id?: string;
      team_id?: string;
      user?: string;
      is_enterprise_install?: boolean;
    };
    try {
      auth = await this.app.client.auth.test();
    } catch (error) {
      throw toColloquyError(error, { method: 'auth.test' });
    }
    if (auth.user_id === undefined) {
      throw new PlatformError(
        'slack',
        'Slack auth.test returned no user_id (is this a bot token?)',
      );
    }
    this.self = { userId: auth.user_id, ...(auth.bot_id !== undefined && { botId: auth.bot_id }) };
    this.teamId = auth.team_id;
    this.orgWide = auth.is_enterprise_install === true;
    this.names.know(auth.user_id, {
      ...(auth.user !== undefined && { name: auth.user }),
      isBot: true,
    });
    this.identity = {
      id: slackParticipantId(auth.user_id),
      ...(auth.user !== undefined && { username: auth.user, displayName: auth.user }),
    };
    if (!this.ownsApp) return;
    await this.app.init();
    if (this.options.appToken !== undefined) {
      await this.app.start();
    } else if (this.options.receiver !== undefined) {
      await this.app.start(this.options.port ?? 3000);
    } else if (this.options.listen !== false && this.httpReceiver !== undefined) {
      const port = this.options.port ?? 3000;
      const listen = this.options.host === undefined ? port : { port, host: this.options.host };
      this.server = await this.httpReceiver.start(listen);
    }
  }

  async stop(): Promise<void> {
    // Events can still arrive after stop (a server the app owns, Socket Mode closing): drop them.
    this.handlers = undefined;
    if (
      this.ownsApp &&
      (this.server !== undefined ||
        this.options.appToken !== undefined ||
        this.options.receiver !== undefined)
    ) {
      await this.app.stop();
    }
    this.server = undefined;
  }

  /** A top-level channel message is answered in a thread of it (unless `replyInThread: false`). */
  replyPlace(inbound: NewMessage): ReplyPlace | undefined {
    const ts = inbound.metadata.messageId;
    if (this.options.replyInThread === false || inbound.scope !== 'channel' || ts === undefined) {
      return undefined;
    }
    // The conversation id keeps the inbound turn's team: one conversation, one id on Grid.
    return { conversationId: `${inbound.conversationId}:${ts}`, scope: 'thread', threadId: ts };
  }

  /**
   * Posts a reply, split into parts of at most `textLimit` characters, in the thread, each
   * with message metadata naming the reply and the part (`colloquy_reply`). Throws
   * `PlatformError` (Slack refused, or a 5xx), `RateLimitError` or `NetworkError` (see
   * `toColloquyError`); the parts that did get through were reported (their `ts` values) to
   * `options.partPosted`.
   */
  async send(message: OutboundMessage, options: SendOptions = {}): Promise<SentMessage> {
    const report = (error: ColloquyError) => this.handlers?.error(error);
    // A message of files alone is named by the messages that carry them.
    if (filesOnly(message)) {
      return filesSent(
        (failed) => sendSlackFiles(this.app.client, message, failed),
        report,
        (first) => this.messageId(message, first),
      );
    }
    const sent = await this.sendText(message, options);
    if (!message.files?.length) return sent;
    return { ...sent, files: (await sendSlackFiles(this.app.client, message, report)).files };
  }

  /**
   * Adds the bot's reaction (`reactions.add`), by Slack's name for it (👍 is `+1`). One Slack
   * has already (a repeat after a lost answer) is added.
   */
  async react(message: MessageRef, emoji: string): Promise<string> {
    const name = slackReactionName(emoji);
    try {
      await this.app.client.reactions.add({
        channel: message.channelId,
        timestamp: message.messageId,
        name,
      });
    } catch (error) {
      if (slackRefused(error, 'already_reacted')) return name;
      throw toColloquyError(error, { method: 'reactions.add' });
    }
    return name;
  }

  private async sendText(message: OutboundMessage, options: SendOptions): Promise<SentMessage> {
    const parts = this.parts(message.content);
    const sent = await sendParts(
      parts,
      (text, index) => {
        const blocks = index === parts.length - 1 ? slackBlocks(text, message) : undefined;
        return postSlackPart(this.app.client, message, text, index, blocks);
      },
      (error) =>
        toColloquyError(error, {
          method: 'chat.postMessage',
          conversationId: message.conversationId,
        }),
      options,
    );
    const first = sent.messageIds[0];
    const id = first === undefined ? undefined : this.messageId(message, first);
    return id === undefined ? sent : { ...sent, id };
  }

  /** The colloquy id of the bot's message `ts` in the place of `message`. */
  private messageId(message: OutboundMessage, ts: string): string | undefined {
    // The team of the conversation answered (the envelope's), not auth.test's: on an
    // Enterprise Grid org-wide install those differ, and one conversation keeps one id scheme.
    const team = /^slack:([^:]+):/.exec(message.conversationId)?.[1] ?? this.teamId;
    return team === undefined ? undefined : slackMessageId(team, message.channelId, ts);
  }

  /**
   * Shows the buttons of `edit` under the reply's last message, or, once a press is answered,
   * the choice in their place (`chat.update` with blocks; the text stays).
   */
  async editActions(edit: ActionsEdit): Promise<void> {
    const parts = this.parts(edit.content);
    const text = edit.messageIds.length === 1 ? parts.join('\n') : (parts.at(-1) ?? '');
    const { chosen } = edit;
    const blocks = chosen === undefined ? slackBlocks(text, edit) : usedBlocks(text, chosen.label);
    try {
      await this.app.client.chat.update({
        channel: edit.channelId,
        ts: edit.messageIds.at(-1) ?? '',
        text,
        blocks: (blocks ?? []) as slackTypes.KnownBlock[],
      });
    } catch (error) {
      throw toColloquyError(error, { method: 'chat.update' });
    }
  }

  /** Shows a reply as it is written: streamed in a thread, else posted and updated. */
  stream(message: OutboundMessage, options?: StreamOptions): ReplyStream {
    const { app, refused, parts, markdown } = this;
    return slackStream({ client: app.client, parts, markdown, refused }, message, options);
  }

  /** A reply's text as the `markdown_text` of a stream (broadcast mentions as configured). */
  private readonly markdown = (text: string) =>
    escapeSlackMarkdown(text, {
      allowBroadcastMentions: this.options.allowBroadcastMentions === true,
    });

  private readonly parts = (text: string) =>
    formatSlackText(text, this.options.textLimit ?? SLACK_TEXT_LIMIT, {
      allowBroadcastMentions: this.options.allowBroadcastMentions === true,
    });

  /** Shows a message to one person only: `chat.postEphemeral` (`OutboundMessage.visibleTo`). */
  readonly ephemeral = true;

  /**
   * Where a post into a Slack conversation goes (see `slackPostPlace`); undefined for one of
   * another workspace than the token's (an org-wide install takes every workspace's).
   */
  placeOf(conversationId: string): PostPlace | undefined {
    const place = slackPostPlace(conversationId);
    const team = conversationId.split(':')[1];
    const ours = this.orgWide || this.teamId === undefined || team === this.teamId;
    return ours ? place : undefined;
  }

  /** The DM with a person, by their user id: `conversations.open`. */
  async openDm(platformUserId: string): Promise<string> {
    let opened;
    try {
      opened = await this.app.client.conversations.open({ users: platformUserId });
    } catch (error) {
      throw toColloquyError(error, { method: 'conversations.open' });
    }
    const id = opened.channel?.id;
    if (id === undefined || this.teamId === undefined) {
      throw new ColloquyError(`Slack opened no DM with ${platformUserId}`);
    }
    return slackConversationId(this.teamId, id);
  }

  /** Settles a reply a crash left unconfirmed (see `settleSlackReply`). */
  settle(reply: UnsettledReply): Promise<SentMessage | undefined> {
    const { app, self, parts, markdown } = this;
    const send = (out: OutboundMessage, options: SendOptions) => this.send(out, options);
    return settleSlackReply(
      { client: app.client, ...(self && { self }), parts, markdown, send },
      reply,
    );
  }

  /** A shared file's bytes, from `url_private` with the bot token (see `slackDownload`). */
  fetchAttachment(
    file: MessageAttachment,
    options: AttachmentFetchOptions,
  ): Promise<FetchedAttachment> {
    const token = this.options.token ?? this.app.client.token;
    return slackDownload(file, options, { token, apiUrl: this.app.client.slackApiUrl });
  }

  /**
   * A reaction on a message: recorded (not a turn); who reacted is looked up (`users.info`)
   * only when the bot may answer it (a bot's is never answered; one whose lookup failed is
   * taken for a bot's). Slack is answered once it is recorded.
   */
  private async reacted(body: unknown): Promise<void> {
    const change = slackReaction(body);
    if (change === undefined || this.handlers?.reaction === undefined) return;
    const user = (body as { event: { user: string } }).event.user; // a string: slackReaction checked
    try {
      await this.handlers.reaction(change, () => this.reactor(change, user));
    } catch (error) {
      this.report(error);
      throw error;
    }
  }

  /** `change` with who made it as `users.info` says: a bot, or a person and their name. */
  private async reactor(change: ReactionChange, user: string): Promise<ReactionChange> {
    const reactor = await this.names.user(user);
    if (reactor instanceof Error) {
      this.report(
        new ColloquyError(
          `Slack: cannot tell whether ${user} is a bot (users.info: ${reactor.message}): its reaction is recorded as a bot’s, never answered`,
          { cause: reactor },
        ),
      );
      return { ...change, byBot: true };
    }
    return {
      ...change,
      ...(reactor.name !== undefined && { displayName: reactor.name }),
      ...(reactor.isBot && { byBot: true }),
    };
  }

  /**
   * One Events API delivery: parse, hand to the runtime with its names to follow (the runtime
   * keeps its place in its conversation meanwhile). Resolves once the runtime has committed it
   * (what Bolt's answer waits for); rejects when it was not committed, so Slack is not
   * acknowledged and sends it again.
   */
  private dispatch(body: unknown, retryNum: number | undefined): Promise<void> {
    const self = this.self;
    const handlers = this.handlers;
    if (handlers === undefined || self === undefined) return Promise.resolve();
    const event = (body as { event?: Record<string, unknown> } | undefined)?.event ?? {};
    let handed: Promise<unknown>;
    try {
      const context = {
        self,
        siblings: (handlers.botIds?.() ?? []).map((id) => id.slice('slack:'.length)),
        ...(this.teamId !== undefined && { teamId: this.teamId }),
      };
      const first = parseSlackEvent(body, context);
      if (first.kind === 'ignored') return Promise.resolve();
      if (first.kind === 'delete') {
        handed = handlers.delete(first.deletion);
      } else {
        const named = this.withNames(body, event, context, retryNum);
        handed =
          first.kind === 'message'
            ? handlers.message(
                first.message,
                named.then((p) => (p.kind === 'message' ? p.message : first.message)),
              )
            : handlers.edit(
                first.edit,
                named.then((p) => (p.kind === 'edit' ? p.edit : first.edit)),
              );
      }
    } catch (error) {
      this.report(error);
      return Promise.resolve();
    }
    return handed.then(
      () => undefined,
      (error: unknown) => {
        this.report(error);
        throw error;
      },
    );
  }

  /**
   * A slash command or a press: acknowledged (`ack`, within Slack's 3 s) once its turn is
   * committed; not acknowledged when it could not be, so the person sees it failed.
   */
  private async interaction(turn: NewMessage | undefined, ack: () => Promise<void>) {
    const handlers = this.handlers;
    if (handlers === undefined) return;
    if (turn === undefined) return ack();
    try {
      await handlers.message(turn);
    } catch (error) {
      this.report(error);
      return;
    }
    await ack();
  }

  /** The event parsed again with the display names of its people (and a turn's channel name). */
  private async withNames(
    body: unknown,
    event: Record<string, unknown>,
    context: SlackParseContext,
    retryNum: number | undefined,
  ): Promise<ParsedSlackEvent> {
    const isEdit = event.subtype === 'message_changed';
    const channelId = typeof event.channel === 'string' ? event.channel : undefined;
    const [names, channelName] = await Promise.all([
      this.names.names(slackUserIdsToResolve(event)),
      !isEdit && channelId !== undefined ? this.names.channel(channelId) : undefined,
    ]);
    const parsed = parseSlackEvent(body, {
      ...context,
      names,
      ...(channelName !== undefined && { channelName }),
    });
    if (parsed.kind === 'message' && retryNum !== undefined) {
      parsed.message.metadata.slackRetryNum = retryNum;
    }
    return parsed;
  }

  private report(error: unknown): void {
    this.handlers?.error(
      error instanceof ColloquyError
        ? error
        : new ColloquyError(
            `Slack event failed: ${error instanceof Error ? error.message : String(error)}`,
            { cause: error },
          ),
    );
  }
}
