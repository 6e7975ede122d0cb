import { randomUUID } from 'node:crypto';
import type { FakeSlackPost, FakeSlackUser } from './types.js';
import { signSlackRequest } from './web-api.js';

/** What the interactions of a `FakeSlack` need from it. */
export interface SlackInteractionsHost {
  teamId: string;
  signingSecret: string;
  eventsUrl(): string | undefined;
  users: ReadonlyMap<string, FakeSlackUser>;
  channels: ReadonlyMap<string, string>;
  posted: readonly FakeSlackPost[];
  /** Sends a Socket Mode envelope of `type` when connected; resolves with 200 once acked. */
  socket(type: string, payload: object): Promise<number> | undefined;
}

/** One slash command or press the fake sent, and how the bot acknowledged it. */
export interface FakeSlackInteractionAck {
  kind: 'command' | 'press';
  /** HTTP status of the bot's answer (200 when acked over Socket Mode; 0: never). */
  status: number;
  /** True when the acknowledgement came within the deadline (Slack's 3 s). */
  inTime: boolean;
}

/**
 * Slash commands and Block Kit presses on a `FakeSlack`, sent as Slack sends them: a command as
 * a signed `application/x-www-form-urlencoded` POST (or a `slash_commands` Socket Mode
 * envelope), a press as a signed form POST of `payload=<block_actions JSON>` (or an
 * `interactive` envelope). Each acknowledgement is timed against the deadline (3 s by default,
 * as Slack, which then shows the person an error): `acks` says which came in time.
 *
 * @example
 * ```ts
 * await slack.interactions.command({ channel: 'C0GENERAL', user: 'U0ALICE', command: '/refund', text: '4242' });
 * ```
 */
export class FakeSlackInteractions {
  /** Every command and press, with its acknowledgement, in order. */
  readonly acks: FakeSlackInteractionAck[] = [];
  readonly #deadlineMs: number;

  constructor(
    private readonly host: SlackInteractionsHost,
    options: { ackDeadlineMs?: number } = {},
  ) {
    this.#deadlineMs = options.ackDeadlineMs ?? 3000;
  }

  /**
   * A person runs a slash command in a channel. Resolves once the bot acknowledged it (or
   * not). `signingSecret` signs it with another secret: a forged request.
   */
  command(input: {
    channel: string;
    user: string;
    command: string;
    text?: string;
    signingSecret?: string;
  }): Promise<FakeSlackInteractionAck> {
    const fields: Record<string, string> = {
      token: 'verification-token-unused',
      team_id: this.host.teamId,
      team_domain: 'fake',
      channel_id: input.channel,
      channel_name: input.channel.startsWith('D')
        ? 'directmessage'
        : (this.host.channels.get(input.channel) ?? input.channel),
      user_id: input.user,
      user_name: this.host.users.get(input.user)?.name ?? input.user,
      command: input.command,
      text: input.text ?? '',
      api_app_id: 'A0FAKE',
      is_enterprise_install: 'false',
      response_url: `https://hooks.slack.com/commands/${this.host.teamId}/${Date.now()}/fake`,
      trigger_id: `${Date.now()}.${randomUUID().slice(0, 8)}`,
    };
    return this.#deliver(
      'command',
      'slash_commands',
      fields,
      new URLSearchParams(fields).toString(),
      input.signingSecret,
    );
  }

  /**
   * A person presses the button (or picks `value` from the select) `actionId` under the bot's
   * message `ts`; with `triggerId`, the payload of that press comes again. Throws when the bot
   * posted no such message or element.
   */
  press(input: {
    ts: string;
    user: string;
    actionId: string;
    value?: string;
    triggerId?: string;
  }): Promise<FakeSlackInteractionAck> {
    const post = this.host.posted.find((p) => p.ts === input.ts);
    // The Web API client sends blocks as a JSON string in a form body.
    const raw = post?.params.blocks;
    const blocks = (typeof raw === 'string' ? JSON.parse(raw) : (raw ?? [])) as {
      type?: string;
      elements?: Record<string, unknown>[];
    }[];
    const element = blocks
      .flatMap((b) => b.elements ?? [])
      .find((e) => e.action_id === input.actionId);
    if (post === undefined || element === undefined) {
      throw new Error(`FakeSlack: message ${input.ts} has no element ${input.actionId}`);
    }
    const select = element.type === 'static_select';
    const options = (element.options ?? []) as { value: string; text: object }[];
    const picked = options.find((o) => o.value === input.value);
    const user = this.host.users.get(input.user);
    const payload = {
      type: 'block_actions',
      user: {
        id: input.user,
        username: user?.name ?? input.user,
        name: user?.name ?? input.user,
        team_id: this.host.teamId,
      },
      api_app_id: 'A0FAKE',
      token: 'verification-token-unused',
      container: {
        type: 'message',
        message_ts: post.ts,
        channel_id: post.channel,
        is_ephemeral: false,
        ...(post.thread_ts !== undefined && { thread_ts: post.thread_ts }),
      },
      trigger_id: input.triggerId ?? `${Date.now()}.${randomUUID().slice(0, 8)}`,
      team: { id: this.host.teamId, domain: 'fake' },
      enterprise: null,
      is_enterprise_install: false,
      channel: { id: post.channel, name: this.host.channels.get(post.channel) ?? post.channel },
      message: {
        type: 'message',
        text: post.text,
        ts: post.ts,
        ...(post.thread_ts !== undefined && { thread_ts: post.thread_ts }),
        blocks,
      },
      state: { values: {} },
      response_url: `https://hooks.slack.com/actions/${this.host.teamId}/${Date.now()}/fake`,
      actions: [
        {
          action_id: input.actionId,
          block_id: 'actions',
          type: element.type,
          action_ts: String(Date.now() / 1000),
          ...(select
            ? { selected_option: picked ?? { value: input.value ?? '', text: {} } }
            : { text: element.text, value: element.value }),
        },
      ],
    };
    const body = new URLSearchParams({ payload: JSON.stringify(payload) }).toString();
    return this.#deliver('press', 'interactive', payload, body);
  }

  async #deliver(
    kind: FakeSlackInteractionAck['kind'],
    envelopeType: string,
    payload: object,
    form: string,
    signingSecret = this.host.signingSecret,
  ): Promise<FakeSlackInteractionAck> {
    const sent = Date.now();
    const status = await (this.host.socket(envelopeType, payload) ??
      this.#post(form, signingSecret));
    const ack = { kind, status, inTime: status === 200 && Date.now() - sent < this.#deadlineMs };
    this.acks.push(ack);
    return ack;
  }

  async #post(body: string, signingSecret: string): Promise<number> {
    const url = this.host.eventsUrl();
    if (url === undefined)
      throw new Error("FakeSlack: set eventsUrl (the bot's /slack/events URL) first");
    const timestamp = String(Math.floor(Date.now() / 1000));
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        'x-slack-request-timestamp': timestamp,
        'x-slack-signature': signSlackRequest(signingSecret, timestamp, body),
      },
      body,
    });
    await response.arrayBuffer();
    return response.status;
  }
}
