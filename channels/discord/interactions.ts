import {
  ActionRowBuilder,
  ButtonBuilder,
  ButtonStyle,
  DiscordAPIError,
  InteractionResponseType,
  Routes,
  StringSelectMenuBuilder,
} from 'discord.js';
import type { APIActionRowComponent, APIComponentInMessageActionRow, REST } from 'discord.js';
import type { CommandSpec, OutboundMessage, ReplyStream, SentMessage } from '../../src/channel.js';
import { actionKey, commandText } from '../../src/interactions.js';
import { shortened } from '../shared/split.js';
import type { NewMessage } from '../../src/types.js';
import { isoTimestamp } from '../../src/types.js';
import type { DiscordMessageBody } from './format.js';
import { discordPlace, participantId } from './parse.js';
import type { DiscordParseContext } from './parse.js';

/**
 * Application commands and message components on Discord. An INTERACTION_CREATE of type 2 (a
 * slash command) or 3 (a button or select under a message) becomes a turn; once the turn is
 * committed the interaction is acknowledged with a deferred response (type 5 for a command:
 * "thinking…", type 6 for a press), within Discord's 3 seconds, and the bot's answer goes
 * out through the interaction's webhook: the command's original response is edited into the
 * answer, an answer to a press is a follow-up message. An interaction token lasts 15 minutes;
 * after that (or after a restart) the answer is posted in the channel.
 */

/** Discord's refusal of an acknowledgement when the interaction has one. */
const ALREADY_ACKNOWLEDGED = 40060;

/** Discord's interaction types colloquy reads. */
const APPLICATION_COMMAND = 2;
const MESSAGE_COMPONENT = 3;

/** How long Discord accepts follow-ups with an interaction's token. */
const TOKEN_LIFETIME_MS = 15 * 60_000;

/** An interaction acknowledged (or being acknowledged), whose answer goes through its webhook. */
interface Pending {
  token: string;
  kind: 'command' | 'press';
  acknowledged: Promise<void>;
  at: number;
  /** Whether the first answer went out (the next one is a follow-up). */
  answered: boolean;
}

/** The interaction's user: `member.user` in a guild, `user` in a DM. */
function userOf(d: Record<string, unknown>): Record<string, unknown> | undefined {
  const member = d.member as { user?: Record<string, unknown>; nick?: unknown } | undefined;
  return member?.user ?? (d.user as Record<string, unknown> | undefined);
}

/** A slash command's options as the text after its name (`4242 urgent`). */
function argsOf(options: unknown): string {
  if (!Array.isArray(options)) return '';
  return options
    .map((option: { value?: unknown; options?: unknown; name?: unknown }) =>
      option.value !== undefined
        ? String(option.value)
        : `${String(option.name)} ${argsOf(option.options)}`.trim(),
    )
    .join(' ');
}

/**
 * The commands, buttons and selects of one `DiscordChannel`: turns from interactions, their
 * acknowledgements, answers through their webhooks, components under replies and command
 * registration.
 */
export class DiscordInteractions {
  readonly #pending = new Map<string, Pending>();

  constructor(
    private readonly rest: () => REST,
    private readonly applicationId: () => string | undefined,
    private readonly report: (error: unknown, what: string) => void,
  ) {}

  /**
   * The turn an INTERACTION_CREATE is, or undefined for one colloquy does not read
   * (autocomplete, a modal, a ping).
   *
   * @example
   * ```ts
   * const turn = interactions.turnOf(packet.d, context); // '/refund 4242', a command turn
   * ```
   */
  turnOf(data: unknown, context: DiscordParseContext): NewMessage | undefined {
    const d = (typeof data === 'object' && data !== null ? data : {}) as Record<string, unknown>;
    const user = userOf(d);
    const body = (d.data ?? {}) as Record<string, unknown>;
    if (
      typeof d.id !== 'string' ||
      typeof d.channel_id !== 'string' ||
      typeof user?.id !== 'string'
    )
      return undefined;
    if (d.type !== APPLICATION_COMMAND && d.type !== MESSAGE_COMPONENT) return undefined;
    const guildId = typeof d.guild_id === 'string' ? d.guild_id : undefined;
    const place = discordPlace({ channelId: d.channel_id, guildId }, context);
    const member = d.member as { nick?: unknown } | undefined;
    const name = [member?.nick, user.global_name, user.username].find((n) => typeof n === 'string');
    const metadata: NewMessage['metadata'] = {
      channelType: 'discord',
      channelId: place.channelId,
      ...(place.channelName !== undefined && { channelName: place.channelName }),
      ...(place.threadId !== undefined && { threadId: place.threadId }),
      ...(guildId !== undefined && { guildId }),
      messageId: d.id,
      mentions: [],
    };
    const turn = {
      conversationId: place.conversationId,
      participant: {
        kind: 'user' as const,
        id: participantId(user.id),
        ...(typeof name === 'string' && { displayName: name }),
      },
      timestamp: isoTimestamp(),
      scope: place.scope,
    };
    if (d.type === APPLICATION_COMMAND) {
      const command = String(body.name ?? '');
      const args = argsOf(body.options);
      return {
        ...turn,
        id: `discord:${d.channel_id}:${d.id}`,
        content: commandText(command, args),
        metadata: { ...metadata, interaction: { type: 'command', name: command, args } },
      };
    }
    const message = d.message as { id?: unknown } | undefined;
    const id = String(body.custom_id ?? '');
    if (typeof message?.id !== 'string' || id === '') return undefined;
    const values = Array.isArray(body.values) ? body.values.map(String) : [];
    const value = values[0] ?? id;
    return {
      ...turn,
      id: `discord:${d.channel_id}:${message.id}:press:${d.id}`,
      content: value,
      metadata: { ...metadata, interaction: { type: 'button', id, value, on: message.id } },
    };
  }

  /**
   * Acknowledges an interaction whose turn is committed: a deferred response (5 for a command,
   * 6 for a press). A late acknowledgement is refused by Discord and reported. One Discord
   * answers is acknowledged already (the repeat of a request whose answer was lost) stands.
   */
  acknowledge(data: { id: string; token: string; type: number }): void {
    const kind = data.type === APPLICATION_COMMAND ? 'command' : 'press';
    const type =
      kind === 'command'
        ? InteractionResponseType.DeferredChannelMessageWithSource
        : InteractionResponseType.DeferredMessageUpdate;
    const acknowledged = this.rest()
      .post(Routes.interactionCallback(data.id, data.token), { body: { type }, auth: false })
      .then(
        () => undefined,
        (error: unknown) => {
          if (error instanceof DiscordAPIError && error.code === ALREADY_ACKNOWLEDGED) return;
          this.#pending.delete(data.id);
          this.report(error, `the acknowledgement of interaction ${data.id}`);
        },
      );
    this.#pending.set(data.id, {
      token: data.token,
      kind,
      acknowledged,
      at: Date.now(),
      answered: false,
    });
    this.#forgetOld();
  }

  /** True when `message` answers an interaction whose webhook can carry the answer. */
  answers(message: OutboundMessage): boolean {
    const id = message.replyToMessageId;
    return id !== undefined && this.#pending.has(id);
  }

  /**
   * Posts the answer to an interaction through its webhook: the first part edits a command's
   * original response (or follows up a press), the rest follow up; the last carries the
   * reply's components. Undefined when the interaction's webhook cannot carry it (it was
   * never acknowledged): the answer is then posted in the channel.
   */
  async send(
    message: OutboundMessage,
    bodies: readonly DiscordMessageBody[],
  ): Promise<SentMessage | undefined> {
    const pending = this.#pending.get(message.replyToMessageId ?? '');
    const app = this.applicationId();
    if (pending === undefined || app === undefined) return undefined;
    await pending.acknowledged;
    // Not acknowledged (too late): the webhook does not exist, the channel posts the answer.
    if (!this.#pending.has(message.replyToMessageId ?? '')) return undefined;
    const components = componentsOf(message);
    const messageIds: string[] = [];
    let timestamp: string | undefined;
    for (const [index, body] of bodies.entries()) {
      const payload = {
        content: body.content,
        allowed_mentions: body.allowed_mentions,
        ...(index === bodies.length - 1 && components.length > 0 && { components }),
      };
      const original = pending.kind === 'command' && !pending.answered;
      const posted = (
        original
          ? await this.rest().patch(Routes.webhookMessage(app, pending.token, '@original'), {
              body: payload,
              auth: false,
            })
          : await this.rest().post(Routes.webhook(app, pending.token), {
              body: payload,
              auth: false,
            })
      ) as { id: string; timestamp?: string };
      pending.answered = true;
      messageIds.push(posted.id);
      if (index === 0 && posted.timestamp) timestamp = new Date(posted.timestamp).toISOString();
    }
    return timestamp === undefined ? { messageIds } : { messageIds, timestamp };
  }

  /** A reply to an interaction shown whole once written (its webhook shows "thinking…" meanwhile). */
  stream(
    message: OutboundMessage,
    send: (message: OutboundMessage) => Promise<SentMessage>,
  ): ReplyStream {
    return { update: () => undefined, end: (text) => send({ ...message, content: text }) };
  }

  /**
   * Registers the commands as global application commands, or on each of `guildIds` (guild
   * commands show at once; global ones can take a while to reach every client).
   */
  async register(commands: readonly CommandSpec[], guildIds?: readonly string[]): Promise<void> {
    const app = this.applicationId();
    if (app === undefined) throw new Error('the Discord application id is not known before start');
    const body = commands.map(({ name, description, options = [] }) => ({
      name,
      description,
      type: 1,
      options: options.map((option) => ({
        type: 3, // STRING
        name: option.name,
        description: option.description,
        required: option.required ?? false,
      })),
    }));
    if (guildIds === undefined) {
      await this.rest().put(Routes.applicationCommands(app), { body });
      return;
    }
    for (const guild of guildIds) {
      await this.rest().put(Routes.applicationGuildCommands(app, guild), { body });
    }
  }

  #forgetOld(): void {
    const now = Date.now();
    for (const [id, pending] of this.#pending) {
      if (now - pending.at > TOKEN_LIFETIME_MS) this.#pending.delete(id);
    }
  }
}

/** `bodies` with the reply's components under the last one. */
export function withComponents(
  bodies: readonly DiscordMessageBody[],
  message: Pick<OutboundMessage, 'actions' | 'select'>,
): (DiscordMessageBody & { components?: unknown[] })[] {
  const components = componentsOf(message);
  if (components.length === 0) return [...bodies];
  return bodies.map((body, index) =>
    index === bodies.length - 1 ? { ...body, components } : body,
  );
}

const STYLES = {
  primary: ButtonStyle.Primary,
  secondary: ButtonStyle.Secondary,
  danger: ButtonStyle.Danger,
} as const;

/** Discord's limits on message components (characters). */
const CUSTOM_ID_LIMIT = 100;
const OPTION_VALUE_LIMIT = 100;
const BUTTON_LABEL_LIMIT = 80;
const OPTION_LABEL_LIMIT = 100;

/**
 * The action rows for a reply's buttons (one row of at most five) and select: a `custom_id`
 * or option value longer than Discord allows is carried as its place (see `actionKey`), a
 * label is shortened; with `disabled`, every one is shown disabled (a press answered).
 *
 * @example
 * ```ts
 * componentsOf({ ...outbound, actions: [{ id: 'approve', label: 'Approve', style: 'primary' }] });
 * ```
 */
export function componentsOf(
  message: Pick<OutboundMessage, 'actions' | 'select'>,
  { disabled = false } = {},
): APIActionRowComponent<APIComponentInMessageActionRow>[] {
  const within = (limit: number) => (key: string) => key.length <= limit;
  const rows: APIActionRowComponent<APIComponentInMessageActionRow>[] = [];
  const buttons = (message.actions ?? []).slice(0, 5).map((action, index) => {
    const button = new ButtonBuilder()
      .setCustomId(actionKey(action.id, index, within(CUSTOM_ID_LIMIT)))
      .setLabel(shortened(action.label, BUTTON_LABEL_LIMIT))
      .setStyle(STYLES[action.style ?? 'secondary']);
    return disabled ? button.setDisabled(true) : button;
  });
  if (buttons.length > 0)
    rows.push(new ActionRowBuilder<ButtonBuilder>().addComponents(buttons).toJSON());
  const select = message.select;
  if (select !== undefined) {
    const menu = new StringSelectMenuBuilder()
      .setCustomId(actionKey(select.id, 's', within(CUSTOM_ID_LIMIT)))
      .addOptions(
        select.options.map(({ label, value }, index) => ({
          label: shortened(label, OPTION_LABEL_LIMIT),
          value: actionKey(value, index, within(OPTION_VALUE_LIMIT)),
        })),
      );
    if (select.placeholder !== undefined) menu.setPlaceholder(shortened(select.placeholder, 150));
    if (disabled) menu.setDisabled(true);
    rows.push(new ActionRowBuilder<StringSelectMenuBuilder>().addComponents(menu).toJSON());
  }
  return rows;
}
