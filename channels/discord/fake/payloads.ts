/**
 * Payload shapes and builders for {@link FakeDiscord}: users, channels, guilds and messages
 * as Discord's API v10 documentation shows them (snake_case, snowflake strings). Kept free of
 * discord.js so `colloquy/testing` never loads a platform SDK.
 */

/** A Discord user object (the fields colloquy and discord.js read). */
export interface FakeDiscordUser {
  id: string;
  username: string;
  global_name?: string | null;
  discriminator?: string;
  avatar?: string | null;
  bot?: boolean;
  system?: boolean;
}

/** A guild channel as `addGuild` takes it; `type` defaults to 0 (GUILD_TEXT). */
export interface FakeDiscordChannelInit {
  id: string;
  name: string;
  type?: number;
}

/** A channel object as the fake stores it and serves from `GET /channels/:id`. */
export interface FakeDiscordChannel {
  id: string;
  type: number;
  name?: string;
  guild_id?: string;
  parent_id?: string | null;
  recipients?: FakeDiscordUser[];
  position?: number;
  permission_overwrites?: unknown[];
  thread_metadata?: Record<string, unknown>;
  [key: string]: unknown;
}

export interface FakeDiscordGuild {
  id: string;
  name: string;
  channels: FakeDiscordChannel[];
  threads: FakeDiscordChannel[];
}

/** A message object (Discord API v10), as dispatched in MESSAGE_CREATE and returned by REST. */
export interface FakeDiscordMessage {
  id: string;
  channel_id: string;
  guild_id?: string;
  author: FakeDiscordUser;
  member?: Record<string, unknown>;
  content: string;
  timestamp: string;
  edited_timestamp: string | null;
  tts: boolean;
  mention_everyone: boolean;
  mentions: FakeDiscordUser[];
  mention_roles: string[];
  attachments: unknown[];
  embeds: unknown[];
  pinned: boolean;
  /** 0 DEFAULT, 19 REPLY. */
  type: number;
  flags: number;
  message_reference?: { type?: number; message_id: string; channel_id: string; guild_id?: string };
  referenced_message?: FakeDiscordMessage | null;
  /** The nonce the author posted it with, on the create answer and MESSAGE_CREATE. */
  nonce?: string | number;
  [key: string]: unknown;
}

/** A sticker item on a message: the sticker's id, name and format type (1 PNG, 2 APNG, 3 Lottie, 4 GIF). */
export interface FakeDiscordStickerItem {
  id: string;
  name: string;
  format_type: number;
}

/** Discord channel types used by the fake. */
export const CHANNEL_TYPE = {
  GUILD_TEXT: 0,
  DM: 1,
  PUBLIC_THREAD: 11,
} as const;

/** The Discord epoch (2015-01-01), the origin of snowflake timestamps. */
const DISCORD_EPOCH = 1_420_070_400_000n;

/** Makes increasing, unique snowflakes whose timestamps are real (discord.js reads them). */
export function snowflakes(): () => string {
  let last = 0n;
  return () => {
    const next = (BigInt(Date.now()) - DISCORD_EPOCH) << 22n;
    last = next > last ? next : last + 1n;
    return last.toString();
  };
}

/** A guild member object for a user, with an optional server nickname. */
export function memberOf(nick?: string): Record<string, unknown> {
  return {
    nick: nick ?? null,
    roles: [],
    joined_at: '2015-04-26T06:26:56.936000+00:00',
    deaf: false,
    mute: false,
    flags: 0,
  };
}

/** The GUILD_CREATE payload for a guild the bot is in (with its channels and active threads). */
export function guildCreatePayload(guild: FakeDiscordGuild, bot: FakeDiscordUser): object {
  return {
    id: guild.id,
    name: guild.name,
    icon: null,
    owner_id: bot.id,
    afk_channel_id: null,
    afk_timeout: 300,
    verification_level: 0,
    default_message_notifications: 0,
    explicit_content_filter: 0,
    roles: [
      {
        id: guild.id,
        name: '@everyone',
        permissions: '68608',
        position: 0,
        color: 0,
        hoist: false,
        managed: false,
        mentionable: false,
        flags: 0,
      },
    ],
    emojis: [],
    stickers: [],
    features: [],
    mfa_level: 0,
    application_id: null,
    system_channel_id: null,
    system_channel_flags: 0,
    rules_channel_id: null,
    joined_at: '2015-04-26T06:26:56.936000+00:00',
    large: false,
    unavailable: false,
    member_count: 1,
    voice_states: [],
    members: [{ user: bot, ...memberOf() }],
    channels: guild.channels.map(({ guild_id: _guild, ...channel }) => channel),
    threads: guild.threads,
    presences: [],
    stage_instances: [],
    guild_scheduled_events: [],
    soundboard_sounds: [],
    preferred_locale: 'en-US',
    premium_tier: 0,
    nsfw_level: 0,
  };
}

/** A guild text channel (or any non-thread guild channel) object. */
export function guildChannel(guildId: string, init: FakeDiscordChannelInit): FakeDiscordChannel {
  return {
    id: init.id,
    type: init.type ?? CHANNEL_TYPE.GUILD_TEXT,
    name: init.name,
    guild_id: guildId,
    parent_id: null,
    position: 0,
    permission_overwrites: [],
    nsfw: false,
    topic: null,
    last_message_id: null,
    rate_limit_per_user: 0,
  };
}

/** A thread channel object inside `parentId`. */
export function threadChannel(init: {
  id: string;
  guildId: string;
  parentId: string;
  name: string;
  ownerId: string;
  type?: number;
}): FakeDiscordChannel {
  return {
    id: init.id,
    type: init.type ?? CHANNEL_TYPE.PUBLIC_THREAD,
    name: init.name,
    guild_id: init.guildId,
    parent_id: init.parentId,
    owner_id: init.ownerId,
    last_message_id: null,
    message_count: 0,
    member_count: 1,
    total_message_sent: 0,
    rate_limit_per_user: 0,
    thread_metadata: {
      archived: false,
      auto_archive_duration: 1440,
      archive_timestamp: new Date().toISOString(),
      locked: false,
    },
  };
}

/** The message object Discord builds for a new message. */
export function messagePayload(init: {
  id: string;
  channel: FakeDiscordChannel;
  author: FakeDiscordUser;
  content: string;
  nick?: string;
  mentions?: FakeDiscordUser[];
  referenced?: FakeDiscordMessage;
  stickers?: FakeDiscordStickerItem[];
}): FakeDiscordMessage {
  const guildId = init.channel.guild_id;
  const message: FakeDiscordMessage = {
    id: init.id,
    channel_id: init.channel.id,
    ...(guildId !== undefined && { guild_id: guildId, member: memberOf(init.nick) }),
    author: init.author,
    content: init.content,
    timestamp: new Date().toISOString().replace('Z', '000+00:00'),
    edited_timestamp: null,
    tts: false,
    mention_everyone: false,
    mentions: init.mentions ?? [],
    mention_roles: [],
    attachments: [],
    embeds: [],
    pinned: false,
    type: init.referenced ? 19 : 0,
    flags: 0,
    ...(init.stickers !== undefined && { sticker_items: init.stickers }),
  };
  if (init.referenced) {
    message.message_reference = {
      type: 0,
      message_id: init.referenced.id,
      channel_id: init.referenced.channel_id,
      ...(guildId !== undefined && { guild_id: guildId }),
    };
    message.referenced_message = init.referenced;
  }
  return message;
}
