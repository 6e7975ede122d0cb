import type {
  AttachmentFetchOptions,
  FetchedAttachment,
  MessageAttachment,
} from './attachments.js';
import type { BurstOption } from './bot/bursts.js';
import type { PostPlace } from './posts.js';
import type { ReactionChange } from './reactions.js';
import type { ColloquyError } from './errors.js';
import type { ReplyStream, StreamOptions, TypingIndicator } from './channel/stream.js';
import type {
  ChannelType,
  ConversationScope,
  MessageDeletion,
  MessageEdit,
  NewMessage,
} from './types.js';

export type {
  ReplyStream,
  StreamOptions,
  StreamProgress,
  TypingIndicator,
} from './channel/stream.js';

/**
 * What the bot says about an event a channel handed over, once the event is committed to the
 * store: `handled` settles (never rejects) once the bot is done with it — answered, or given up
 * on and reported. A channel acknowledges the platform when the handler resolves and need not
 * wait for `handled`; tests do.
 */
export interface Delivery {
  handled: Promise<void>;
}

/**
 * What a channel calls when something happens on its platform. Provided by the runtime.
 *
 * `message`, `edit` and `delete` resolve once the event is **committed** to the store (a turn
 * the store already had counts as committed) and reject with a `StoreError` when it could not
 * be: the channel then does not acknowledge the event (a webhook answers 5xx, polling does not
 * move its offset past it, Slack gets no ack), so the platform delivers it again. The rest of
 * the turn (interceptors, agents, replies) goes on inside the bot, which tracks it; a channel
 * tracks no turns of its own.
 *
 * @example
 * ```ts
 * try {
 *   await handlers.message(turn); // committed
 *   res.writeHead(200).end();
 * } catch {
 *   res.writeHead(503).end(); // the platform retries
 * }
 * ```
 */
export interface ChannelHandlers {
  /**
   * A new turn (people, other bots, never our own echoes). A channel that must look something
   * up before the turn is whole (Slack's display names) hands it over as it arrived and gives
   * the whole turn as `complete`: the bot keeps the turn's place in its conversation, so no
   * later turn, edit or deletion of it is committed before it.
   */
  message(message: NewMessage, complete?: Promise<NewMessage>): Promise<Delivery>;
  /** A platform message was edited; `complete` as for `message`. */
  edit(edit: MessageEdit, complete?: Promise<MessageEdit>): Promise<Delivery>;
  /** A platform message was deleted. */
  delete(deletion: MessageDeletion): Promise<Delivery>;
  /**
   * A reaction was added to or removed from a message (not a turn: no agent runs, unless
   * `BotOptions.answerReactions` makes it one). Resolves once recorded (and its turn
   * committed), as `message` does; `handled` once answered. Optional: a channel checks for it
   * before calling. A channel that must look up who reacted (Slack's `users.info`) hands the
   * change as it arrived and gives `complete`, the change with `byBot` and `displayName`: the
   * bot calls it only for a reaction it may answer, so a reaction only recorded costs no lookup.
   */
  reaction?(change: ReactionChange, complete?: () => Promise<ReactionChange>): Promise<Delivery>;
  /**
   * Resolves once fewer than `limit` events handed to the bot are still being handled (over
   * all channels): a channel that pulls events (long polling) waits for it before fetching
   * more, so a slow agent cannot make the process hold an unbounded backlog.
   */
  capacity(limit: number): Promise<void>;
  /** Something went wrong that did not stop the channel (a malformed event, a refused send…). */
  error(error: ColloquyError): void;
  /**
   * The participant ids of the bot users of the bot's other channels of this type, as far as
   * started (`['slack:U0BOTTWO']`): a message or an edit one of them wrote is the bot's own,
   * ignored as the channel's own echo is, never a new turn. Absent when the runtime gives
   * none: the channel knows only its own.
   */
  botIds?(): readonly string[];
  /**
   * A few small values kept in the store for the channel (the Discord gateway session), written
   * through the same commits as the turns. Absent when the store keeps none.
   */
  state?: ChannelState;
  /**
   * Runs `work` while this instance holds the role `name` among the instances sharing the
   * store (one Telegram poller per token), waiting while another holds it; `work`'s signal
   * aborts when the role is lost. Resolves once `signal` aborts. Absent when the bot runs
   * alone: the channel then simply does the work.
   */
  lead?(
    name: string,
    work: (signal: AbortSignal) => Promise<void>,
    signal: AbortSignal,
  ): Promise<void>;
}

/**
 * Small values a channel keeps in the bot's store (`colloquy_state`), by key.
 *
 * @example
 * ```ts
 * await handlers.state?.set('discord:gateway:1100000000000000001:0', JSON.stringify(session));
 * ```
 */
export interface ChannelState {
  get(key: string): Promise<string | undefined>;
  /** Resolves once committed; `null` removes the key. */
  set(key: string, value: string | null): Promise<void>;
}

/** Where a reply goes: derived from the inbound turn it answers. */
export interface OutboundMessage {
  conversationId: string;
  scope: ConversationScope;
  channelId: string;
  threadId?: string;
  /** Platform message id being answered; channels reply to it where the platform allows. */
  replyToMessageId?: string;
  content: string;
  /**
   * The colloquy id of the reply turn this is. A channel that can settle replies (`settle`)
   * marks each part with a key made of it and the part's index (a Discord nonce, Slack message
   * metadata), by which the part is found again after a crash.
   */
  replyId?: string;
  /** Buttons shown under the reply (a channel without `actions` shows the text alone). */
  actions?: readonly Action[];
  /** A simple select (one choice) shown under the reply. */
  select?: ActionSelect;
  /**
   * The platform user id of the one person shown the message (Slack's ephemeral messages,
   * `chat.postEphemeral`); only a channel with `ephemeral` takes it.
   */
  visibleTo?: string;
  /**
   * Files posted with the reply, after its text (see `OutboundFile`). A channel without file
   * uploads sends the text alone.
   */
  files?: readonly OutboundFile[];
}

/**
 * A file the bot sends: its name, its bytes (a `Buffer` is a `Uint8Array`) or a stream of them
 * (a Node `Readable`, read once), its MIME type and a caption shown with it where the platform
 * has one. Sent after the reply's text; recorded, as the platform answered, in the reply's
 * `attachments` (never the bytes).
 *
 * @example
 * ```ts
 * const report: OutboundFile = { name: 'report.pdf', data: await readFile('report.pdf'), mimeType: 'application/pdf' };
 * return { output: 'Here is the report.', files: [report] }; // from an agent's `run`
 * ```
 */
export interface OutboundFile {
  name: string;
  data: Uint8Array | AsyncIterable<Uint8Array>;
  /** Default `application/octet-stream`. An image type goes as a photo where the platform has photos. */
  mimeType?: string;
  /** Shown with the file (Telegram caption, Slack title, Discord description / alt text). */
  caption?: string;
}

/**
 * A button under a reply. Its press comes back as a turn whose `metadata.interaction` is
 * `{ type: 'button', id, value, on }` (`value` defaults to `id`).
 *
 * @example
 * ```ts
 * const approve: Action = { id: 'approve', label: 'Approve', style: 'primary' };
 * ```
 */
export interface Action {
  /**
   * Unique under one message. Any length: an id longer than a platform carries (Telegram's
   * 64 bytes of `callback_data`, Discord's 100-character `custom_id`) is carried as the
   * button's place under the message, and read back from the recorded reply.
   */
  id: string;
  /** Shortened with `…` where the platform allows fewer characters (Slack 75, Discord 80). */
  label: string;
  style?: 'primary' | 'secondary' | 'danger';
  value?: string;
  /**
   * Whether the message's buttons go once a press of this one is answered (default `true`):
   * Slack shows the choice in their place, Discord shows them disabled, Telegram takes them
   * away, and a later press on the message is refused. `false` for a button pressed again and
   * again ("More", "Refresh"): the buttons stay.
   */
  once?: boolean;
}

/**
 * A select under a reply: one option is picked, and comes back as a press of `id` whose
 * `value` is the option's.
 *
 * @example
 * ```ts
 * const size: ActionSelect = { id: 'size', placeholder: 'Size', options: [{ label: 'Small', value: 's' }] };
 * ```
 */
export interface ActionSelect {
  id: string;
  placeholder?: string;
  options: readonly { label: string; value: string }[];
  /** As `Action.once` (default `true`): `false` lets the person change their choice. */
  once?: boolean;
}

/**
 * A change of the buttons under a message the bot sent: `actions` and `select` shown under it
 * (a streamed reply's, once its text is whole), or, with `chosen`, shown used once a press is
 * answered (no longer pressable).
 *
 * @example
 * ```ts
 * await channel.editActions?.({ channelId: 'C1', messageIds: ['1700000000.000200'], content: 'Refund?', actions, chosen: { id: 'approve', label: 'Approve' } });
 * ```
 */
export interface ActionsEdit {
  channelId: string;
  threadId?: string;
  /** The platform ids of the reply's parts; the buttons are under the last. */
  messageIds: readonly string[];
  /** The reply's whole text (Slack sets the text with the buttons). */
  content: string;
  actions?: readonly Action[];
  select?: ActionSelect;
  /** The press answered: its button (or select) id and the label of what was chosen. */
  chosen?: { id: string; label: string };
}

/** A command as a platform registers it (`setMyCommands`, Discord application commands). */
export interface CommandSpec {
  /** Lowercase letters, digits, `_` or `-`, as the person types it after `/`. */
  name: string;
  description: string;
  /** Named arguments (Discord shows them as options; elsewhere they are the text after the name). */
  options?: readonly { name: string; description: string; required?: boolean }[];
}

/**
 * Where the reply to a turn goes when it is not where the turn was: a channel decides (a
 * Slack channel message is answered in a thread of it, a conversation of its own).
 */
export interface ReplyPlace {
  conversationId: string;
  scope: ConversationScope;
  /** The platform thread to post in. */
  threadId?: string;
}

/** How the bot follows a reply being posted (see `Channel.send`). */
export interface SendOptions {
  /**
   * Called after each part of a split reply but the last, with the platform ids posted so far
   * (awaited before the next part). When a later part fails, these are what went out.
   */
  partPosted?(messageIds: readonly string[]): Promise<void>;
  /**
   * How many leading parts are on the platform already (a reply sent again after a crash):
   * they are not posted again, and the ids returned are those of the parts posted now.
   */
  skipParts?: number;
}

/**
 * A reply a crash left recorded as `sending`: the platform may or may not have its parts.
 * What `Channel.settle` gets.
 */
export interface UnsettledReply {
  /** The reply as it was being sent, with its `replyId`. */
  message: OutboundMessage;
  /** The platform ids of the parts confirmed before the crash, in order. */
  confirmed: readonly string[];
  /** When the reply was recorded, just before the platform was first called (ISO 8601 UTC). */
  recordedAt: string;
}

/** The platform's ids for what `send` posted, in order (a long reply may be split). */
export interface SentMessage {
  messageIds: string[];
  /**
   * The colloquy id of the first part, in the channel's own id scheme (the one its inbound
   * turns use). Defaults to `<channelType>:<channelId>:<first platform id>`.
   */
  id?: string;
  /** When the platform says it was posted (ISO 8601 UTC); defaults to now. */
  timestamp?: string;
  /**
   * The message's `files` as the platform answered (its file ids and URLs), in order; a file
   * it refused, or one over its size limit, is left out (and reported through `handlers.error`).
   */
  files?: MessageAttachment[];
}

/** A message to react to: where it is, and its platform id. */
export interface MessageRef {
  channelId: string;
  threadId?: string;
  messageId: string;
}

/** The bot's own identity on a platform, known after `start`. Feeds agents' aliases. */
export interface BotIdentity {
  /** Participant id (namespaced like every participant id: `telegram:99`). */
  id: string;
  /** @username / handle without the @, where the platform has one. */
  username?: string;
  displayName?: string;
}

/**
 * A platform adapter. Everything platform-specific stays behind this.
 *
 * @example
 * ```ts
 * const channel = new TelegramChannel({ token: process.env.TELEGRAM_BOT_TOKEN! });
 * const bot = new Bot({ channels: [channel], agents: [new SupportAgent()] });
 * await bot.start();
 * ```
 */
export interface Channel {
  readonly type: ChannelType;
  start(handlers: ChannelHandlers): Promise<void>;
  stop(): Promise<void>;
  /**
   * Posts `message` (split into parts where the platform needs it) and returns the platform's
   * ids. `options.partPosted` is called after each part but the last, with the ids so far;
   * the next part waits for it (the bot records each part before the next goes out).
   */
  send(message: OutboundMessage, options?: SendOptions): Promise<SentMessage>;
  /**
   * Where replies to `inbound` go, when not in its own conversation and thread (the default).
   *
   * @example
   * ```ts
   * const place = channel.replyPlace?.(inbound); // Slack: a thread of a channel mention
   * await channel.send(outboundFor(inbound, 'On it.', place));
   * ```
   */
  replyPlace?(inbound: NewMessage): ReplyPlace | undefined;
  /**
   * Shows that the bot is at work on a reply (optional: without it people see nothing until the
   * reply comes).
   */
  readonly typing?: TypingIndicator;
  /**
   * What a person's burst of turns on this channel gets (see `BurstMode`), unless the bot or
   * the agent says otherwise. Optional: `queue` without it.
   */
  readonly bursts?: BurstOption;
  /**
   * Says that `turn`, left unanswered when the bot last stopped (a crash or a forced quit), is
   * answered now; called at start, before the answer (optional).
   *
   * @example
   * ```ts
   * resuming: async (turn) => void output.write(`answering "${turn.content}", left from last time\n`),
   * ```
   */
  resuming?(turn: NewMessage): void | Promise<void>;
  /**
   * Settles a reply a crash left unconfirmed, exactly once: each part after `confirmed` is
   * found on the platform by the key `send` marked it with (`OutboundMessage.replyId` and the
   * part's index), and the parts the platform does not have are posted. Resolves with the
   * platform ids of the parts after `confirmed`, or `undefined` when the platform can no
   * longer tell (the reply stays `unconfirmed`). A channel without it cannot tell whether an
   * unconfirmed reply went out: the bot leaves it, or sends it again
   * (`BotOptions.unconfirmedReplies`). Streamed replies are found by the same key.
   *
   * @example
   * ```ts
   * const found = await channel.settle?.({ message, confirmed: [], recordedAt });
   * // { messageIds: ['1712345678.000200'] }: found (or posted now), never twice
   * ```
   */
  settle?(reply: UnsettledReply): Promise<SentMessage | undefined>;
  /**
   * Shows a reply as it is written, at the place `message` names (its `content` is empty), by
   * posting and editing messages (optional: without it a reply is sent whole with `send`).
   */
  stream?(message: OutboundMessage, options?: StreamOptions): ReplyStream;
  /**
   * Registers the bot's commands where the platform lists them (called by the bot after
   * `start`, when it has commands; optional: a platform that reads commands from elsewhere,
   * Slack's app manifest, has none).
   */
  registerCommands?(commands: readonly CommandSpec[]): Promise<void>;
  /**
   * Changes the buttons under a message the bot sent (see `ActionsEdit`): shows a streamed
   * reply's buttons under its last part, and shows them used once a press on them is answered
   * (optional: without it a streamed reply shows no buttons, and pressed ones stay).
   */
  editActions?(edit: ActionsEdit): Promise<void>;
  /**
   * Fetches the bytes of a file one of this channel's turns carries, through the platform
   * (Slack `url_private` with the bot token, Telegram `getFile`, Discord's CDN), into memory
   * only: never more than `options.maxBytes` read, within `options.timeoutMs`. Rejects with
   * `AttachmentTooLargeError`, `PlatformError` (refused, not found) or `NetworkError`.
   * Optional: without it agents see files as placeholders (`[image: box.jpg, 240 KB]`).
   *
   * @example
   * ```ts
   * const { bytes, mimeType } = await channel.fetchAttachment!(turn.attachments![0]!, { maxBytes: 1_048_576 });
   * ```
   */
  fetchAttachment?(
    file: MessageAttachment,
    options: AttachmentFetchOptions,
  ): Promise<FetchedAttachment>;
  /**
   * Adds the bot's reaction `emoji` (an emoji, or Slack's name for one: `eyes`) to a
   * message (optional: a channel without it cannot react). Resolves with the reaction as
   * the platform names it, when that differs (Slack: `+1` for 👍). Throws like `send`
   * when the platform refuses.
   *
   * @example
   * ```ts
   * await channel.react?.({ channelId: 'C0GENERAL', messageId: '1700000000.000200' }, '👀');
   * ```
   */
  react?(message: MessageRef, emoji: string): Promise<string | void>;
  /**
   * Where a post into `conversationId` goes, read from the id (`bot.send`); `undefined` when
   * the id is not one of this channel's conversations (optional: without it the bot cannot
   * post on this channel outside a turn).
   *
   * @example
   * ```ts
   * telegram.placeOf('telegram:42'); // { conversationId: 'telegram:42', scope: 'dm', channelId: '42' }
   * ```
   */
  placeOf?(conversationId: string): PostPlace | undefined;
  /**
   * The conversation id of the DM with a person, by their platform user id, opened on the
   * platform where it must be (Slack `conversations.open`, Discord's create DM; optional).
   *
   * @example
   * ```ts
   * const conversationId = await slack.openDm('U0ALICE'); // 'slack:T1:D024BE91L'
   * ```
   */
  openDm?(platformUserId: string): Promise<string>;
  /**
   * Why a bot may hold only one channel of this type, and what to do instead (Telegram: a DM's
   * id is the person's id for every bot). `Bot.start` refuses a second channel of the type with
   * this line. Optional: without it a bot may run several (two Slack apps, `metadata.via`).
   */
  readonly onePerBot?: string;
  /** Shows a message to one person only (`OutboundMessage.visibleTo`): Slack. */
  readonly ephemeral?: boolean;
  /** Known after `start` resolves. */
  readonly botIdentity: BotIdentity | undefined;
}
