import { randomBytes } from 'node:crypto';
import type { FakeDiscordChannel, FakeDiscordMessage, FakeDiscordUser } from './payloads.js';
import { memberOf } from './payloads.js';

/** What the interactions of a `FakeDiscord` need from it. */
export interface InteractionsHost {
  botUser: FakeDiscordUser;
  channel(id: string): FakeDiscordChannel | undefined;
  message(id: string): FakeDiscordMessage | undefined;
  nextId(): string;
  dispatch(t: string, d: unknown): number;
  /** The bot posts in `channelId` (through an interaction's webhook). */
  post(channelId: string, body: WebhookBody): FakeDiscordMessage;
  edit(messageId: string, body: WebhookBody): FakeDiscordMessage;
}

/** The body of an interaction response or webhook message, as the fake reads it. */
export interface WebhookBody {
  content?: string;
  components?: unknown[];
}

/** One interaction callback (`POST /interactions/{id}/{token}/callback`) the bot made. */
export interface FakeDiscordAcknowledgement {
  interactionId: string;
  /** The response type: 4 message, 5 deferred message, 6 deferred update, 7 update. */
  type: number;
  /** False when Discord refused it: after the deadline, or a second one. */
  accepted: boolean;
}

interface OpenInteraction {
  id: string;
  token: string;
  channelId: string;
  createdAt: number;
  acknowledged: boolean;
  /** The original response, once the bot created it (type 4, or a deferred one edited). */
  originalId?: string;
}

/** Discord's error bodies for interactions. */
const UNKNOWN_INTERACTION = { message: 'Unknown interaction', code: 10062 };
const ALREADY_ACKNOWLEDGED = { message: 'Interaction has already been acknowledged.', code: 40060 };
const UNKNOWN_WEBHOOK = { message: 'Unknown Webhook', code: 10015 };

/**
 * Application commands and components on a `FakeDiscord`: `PUT` of global and guild commands is
 * kept; `command` and `press` send INTERACTION_CREATE over the gateway as Discord does; the
 * callback endpoint accepts one acknowledgement per interaction within the deadline (3 s by
 * default, as Discord: later, 404 Unknown interaction), and the interaction's webhook edits the
 * original response and posts follow-ups.
 *
 * @example
 * ```ts
 * discord.interactions.command({ channelId: GENERAL, user: alice, name: 'refund', options: { order: '4242' } });
 * const [answer] = await discord.waitForPosted(1);
 * ```
 */
export class FakeDiscordInteractions {
  /** The global commands the bot registered last (`PUT /applications/{id}/commands`). */
  commands: unknown[] | undefined;
  /** Guild commands, by guild id. */
  readonly guildCommands = new Map<string, unknown[]>();
  /** Every acknowledgement, in order. */
  readonly acknowledgements: FakeDiscordAcknowledgement[] = [];
  readonly #open = new Map<string, OpenInteraction>();
  readonly #deadlineMs: number;

  constructor(
    private readonly host: InteractionsHost,
    options: { ackDeadlineMs?: number } = {},
  ) {
    this.#deadlineMs = options.ackDeadlineMs ?? 3000;
  }

  /**
   * A person runs a slash command in a channel (its options as `{ name: value }`, strings):
   * INTERACTION_CREATE of type 2. Returns the interaction id.
   */
  command(init: {
    channelId: string;
    user: FakeDiscordUser;
    name: string;
    options?: Record<string, string>;
  }): string {
    const options = Object.entries(init.options ?? {}).map(([name, value]) => ({
      name,
      type: 3,
      value,
    }));
    return this.#send(init.channelId, init.user, 2, {
      id: this.host.nextId(),
      name: init.name,
      type: 1,
      ...(options.length > 0 && { options }),
    });
  }

  /**
   * A person presses the button `customId` under the bot's message `messageId` (or picks
   * `values` from its select): INTERACTION_CREATE of type 3. Throws when the message has no
   * such component. Returns the interaction id.
   */
  press(init: {
    messageId: string;
    user: FakeDiscordUser;
    customId: string;
    values?: string[];
  }): string {
    const message = this.host.message(init.messageId);
    const components = (message?.components ?? []) as {
      components?: { custom_id?: string; type?: number }[];
    }[];
    const component = components
      .flatMap((row) => row.components ?? [])
      .find((c) => c.custom_id === init.customId);
    if (message === undefined || component === undefined) {
      throw new Error(`FakeDiscord: message ${init.messageId} has no component ${init.customId}`);
    }
    // Discord shows a disabled component greyed out: it cannot be pressed.
    if ((component as { disabled?: boolean }).disabled === true) {
      throw new Error(`FakeDiscord: component ${init.customId} is disabled`);
    }
    return this.#send(
      message.channel_id,
      init.user,
      3,
      {
        custom_id: init.customId,
        component_type: component.type ?? 2,
        ...(init.values !== undefined && { values: init.values }),
      },
      message,
    );
  }

  /**
   * Serves the interaction routes (no bot token: the interaction's token is the credential),
   * or undefined for any other route.
   */
  handle(
    method: string,
    route: string,
    body: unknown,
  ): { status: number; data?: unknown } | undefined {
    route = decodeURIComponent(route);
    const request = (typeof body === 'object' && body !== null ? body : {}) as Record<
      string,
      unknown
    >;
    const callback = /^\/interactions\/(\d+)\/([^/]+)\/callback$/.exec(route);
    if (method === 'POST' && callback) return this.#callback(callback[1]!, callback[2]!, request);
    const commands = /^\/applications\/(\d+)(?:\/guilds\/(\d+))?\/commands$/.exec(route);
    if (method === 'PUT' && commands) return this.#register(commands[2], body);
    const webhook = /^\/webhooks\/(\d+)\/([^/]+)(?:\/messages\/(@original|\d+))?$/.exec(route);
    if (!webhook) return undefined;
    const open = [...this.#open.values()].find((i) => i.token === webhook[2]);
    if (open === undefined || !open.acknowledged) return { status: 404, data: UNKNOWN_WEBHOOK };
    const target = webhook[3] === '@original' ? open.originalId : webhook[3];
    if (method === 'POST' && webhook[3] === undefined) {
      return { status: 200, data: this.host.post(open.channelId, request) };
    }
    if (method === 'PATCH' && webhook[3] === '@original' && target === undefined) {
      const created = this.host.post(open.channelId, request);
      open.originalId = created.id;
      return { status: 200, data: created };
    }
    if (method === 'PATCH' && target !== undefined) {
      return { status: 200, data: this.host.edit(target, request) };
    }
    return { status: 404, data: { message: 'Unknown Message', code: 10008 } };
  }

  #callback(id: string, token: string, body: Record<string, unknown>) {
    const open = this.#open.get(id);
    const type = Number(body.type);
    const late =
      open === undefined || open.token !== token || Date.now() - open.createdAt >= this.#deadlineMs;
    if (late || open.acknowledged) {
      this.acknowledgements.push({ interactionId: id, type, accepted: false });
      return { status: late ? 404 : 400, data: late ? UNKNOWN_INTERACTION : ALREADY_ACKNOWLEDGED };
    }
    if (![4, 5, 6, 7].includes(type)) {
      return { status: 400, data: { message: 'Invalid Form Body', code: 50035 } };
    }
    open.acknowledged = true;
    this.acknowledgements.push({ interactionId: id, type, accepted: true });
    if (type === 4) {
      const data = (body.data ?? {}) as WebhookBody;
      open.originalId = this.host.post(open.channelId, data).id;
    }
    return { status: 204 };
  }

  #register(guildId: string | undefined, body: unknown) {
    if (!Array.isArray(body) || body.length > 100) {
      return { status: 400, data: { message: 'Invalid Form Body', code: 50035 } };
    }
    const valid = body.every(
      (c: { name?: unknown; description?: unknown }) =>
        typeof c.name === 'string' &&
        /^[-_\p{L}\p{N}]{1,32}$/u.test(c.name) &&
        c.name === c.name.toLowerCase() &&
        typeof c.description === 'string' &&
        c.description.length >= 1 &&
        c.description.length <= 100,
    );
    if (!valid) return { status: 400, data: { message: 'Invalid Form Body', code: 50035 } };
    if (guildId === undefined) this.commands = body;
    else this.guildCommands.set(guildId, body);
    const app = this.host.botUser.id;
    return {
      status: 200,
      data: body.map((c: object) => ({
        ...c,
        id: this.host.nextId(),
        application_id: app,
        version: '1',
      })),
    };
  }

  #send(
    channelId: string,
    user: FakeDiscordUser,
    type: number,
    data: Record<string, unknown>,
    message?: FakeDiscordMessage,
  ): string {
    const channel = this.host.channel(channelId);
    if (channel === undefined) throw new Error(`FakeDiscord: unknown channel ${channelId}`);
    const id = this.host.nextId();
    const token = `aW50ZXJhY3Rpb246${id}${randomBytes(16).toString('hex')}`;
    this.#open.set(id, { id, token, channelId, createdAt: Date.now(), acknowledged: false });
    const guildId = channel.guild_id;
    this.host.dispatch('INTERACTION_CREATE', {
      id,
      application_id: this.host.botUser.id,
      type,
      data,
      ...(guildId !== undefined
        ? { guild_id: guildId, member: { ...memberOf(), user, permissions: '0' } }
        : { user }),
      channel_id: channelId,
      channel: { id: channelId, type: channel.type },
      ...(message !== undefined && { message }),
      token,
      version: 1,
      app_permissions: '0',
      locale: 'en-US',
      entitlements: [],
      authorizing_integration_owners: guildId !== undefined ? { '0': guildId } : { '1': user.id },
      context: guildId !== undefined ? 0 : 1,
      attachment_size_limit: 10_485_760,
    });
    return id;
  }
}
