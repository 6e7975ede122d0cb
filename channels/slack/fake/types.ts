/** Public shapes of `FakeSlack`: its options, what it records, and how deliveries are asked for. */
import type { EditLimit } from '../../testing/edit-limit.js';

export interface FakeSlackUser {
  name: string;
  displayName?: string;
  isBot?: boolean;
}

export interface FakeSlackOptions {
  /** Bot token the Web API accepts (default `xoxb-fake-token`). */
  token?: string;
  /** App-level token for Socket Mode (default `xapp-fake-token`). */
  appToken?: string;
  /** Secret events are signed with (default `fake-signing-secret`). */
  signingSecret?: string;
  /** The workspace events come from (envelope `team_id`; default `T0FAKE`). */
  teamId?: string;
  teamName?: string;
  /**
   * An Enterprise Grid organisation the workspace belongs to: envelopes carry its
   * `enterprise_id`; with `orgWideInstall` the app is installed on the whole organisation, so
   * `auth.test` answers with the organisation's id as `team_id` and `is_enterprise_install`.
   */
  enterprise?: { id: string; orgWideInstall?: boolean };
  /** Our bot as `auth.test` reports it (default `U0BOT` / `B0BOT` / `colloquy`). */
  bot?: { userId?: string; botId?: string; name?: string };
  /** Known users by id; default Alice (`U0ALICE`) and Bob (`U0BOB`). */
  users?: Record<string, string | FakeSlackUser>;
  /** Known channels by id → name; default `C0GENERAL` → `general`. */
  channels?: Record<string, string>;
  /** Where HTTP events go (the bot's `/slack/events` URL); can be set later. */
  eventsUrl?: string;
  /**
   * Deliver the bot's own posts back to it as `message` events, and its `chat.update`s as
   * `message_changed` events, as Slack does. Default false.
   */
  echoBotMessages?: boolean;
  /**
   * Deliver an HTTP event again when the bot did not answer it 2xx within `timeoutMs` (default
   * 3000, Slack's limit), as Slack does: retry `n` carries `X-Slack-Retry-Num: n` and
   * `X-Slack-Retry-Reason`, and waits `delaysMs[n - 1]` first (Slack waits about 0 s, 1 min and
   * 5 min; default 100, 1000, 5000 ms). Off by default: a failed delivery then rejects.
   */
  retries?: boolean | { delaysMs?: number[]; timeoutMs?: number };
  /**
   * How long the fake waits between storing a message the bot posted (`chat.postMessage`) or
   * started streaming (`chat.startStream`) and answering the call, in ms, or a range to draw from (default 0): a bot that dies meanwhile
   * has posted the message without learning its `ts`.
   */
  answerDelayMs?: number | [number, number];
  /**
   * How long the bot has to acknowledge a slash command or a press (default 3000, as Slack);
   * 0 makes every acknowledgement late (see `FakeSlackInteractions.acks`).
   */
  ackDeadlineMs?: number;
  /**
   * Whether the workspace has the streaming methods (`chat.startStream`…; default true): without
   * them Slack answers `unknown_method`.
   */
  streaming?: boolean;
  /**
   * How often the bot may call `chat.update` and `chat.appendStream` before Slack answers 429
   * `ratelimited` with `Retry-After` (default Slack's tiers: 50 and 100 a minute; `false`: no
   * limit).
   */
  editLimit?: EditLimit;
}

/** One Web API call the fake received. */
export interface FakeSlackCall {
  method: string;
  token: string | undefined;
  params: Record<string, unknown>;
  /** When the fake received the call, in ms since the epoch. */
  at: number;
}

/** A message the bot posted (chat.postMessage), as the fake stored it. */
export interface FakeSlackPost {
  channel: string;
  text: string;
  ts: string;
  thread_ts?: string;
  /** The message metadata it was posted with (`event_type`, `event_payload`), as Slack keeps it. */
  metadata?: FakeSlackMetadata;
  /** Every other parameter the bot sent (blocks, mrkdwn, unfurl_links…). */
  params: Record<string, unknown>;
  /** True while a stream writes it (from `chat.startStream` until `chat.stopStream`). */
  streaming?: boolean;
  /** The user an ephemeral message (`chat.postEphemeral`) is shown to; Slack keeps no copy. */
  visibleTo?: string;
}

/** A reaction the bot put on a message (`reactions.add`), until `reactions.remove`. */
export interface FakeSlackReaction {
  channel: string;
  timestamp: string;
  name: string;
}

/** Slack message metadata: an app's event type and a flat JSON payload. */
export interface FakeSlackMetadata {
  event_type: string;
  event_payload: Record<string, unknown>;
}

/** A message a person wrote, as the fake keeps it for `conversations.history` / `.replies`. */
export interface FakeSlackWritten {
  channel: string;
  user: string;
  text: string;
  ts: string;
  thread_ts?: string;
}

/** A scripted failure for the next call of one method. */
export interface FakeSlackFailure {
  /** HTTP status (429 for rate limiting, 500…). Default 200 with `ok: false`. */
  status?: number;
  /** Seconds, sent as `Retry-After` (with status 429). */
  retryAfter?: number;
  /** Slack error code for `{ ok: false, error }` (default `ratelimited` for 429, else `internal_error`). */
  error?: string;
}

/** A Web API call `holdNext` keeps unanswered until it is released (a slow `users.info`, say). */
export interface FakeSlackHeldCall {
  /** Resolves with the call once it has arrived (its answer is then held). */
  readonly arrived: Promise<FakeSlackCall>;
  /** Answers the call as the fake would have at once (closing the fake releases it too). */
  release(): void;
}

export interface FakeSlackSendOptions {
  /** Marks a redelivery: sends `X-Slack-Retry-Num` (HTTP) or `retry_attempt` (Socket Mode). */
  retryNum?: number;
  retryReason?: string;
  /** Reuse an event id (Slack keeps it across retries); default a fresh one. */
  eventId?: string;
  /** Sign with another secret, to test signature checks. */
  signingSecret?: string;
  /** Force HTTP even when a Socket Mode connection is open. */
  via?: 'http' | 'socket';
}

/** How a delivery went: the HTTP answer, or the Socket Mode ack. */
export interface FakeSlackDelivery {
  eventId: string;
  /** HTTP status of the bot's answer (200 when acked over Socket Mode). */
  status: number;
  body: string;
  /** Socket Mode envelope id, when delivered that way. */
  envelopeId?: string;
  /** The `X-Slack-Retry-Num` this attempt carried, if any. */
  retryNum?: number;
}

/** An event the bot acknowledged (answered 2xx over HTTP, or acked over Socket Mode). */
export interface FakeSlackAcknowledged {
  eventId: string;
  /** The `event` of the envelope (`message`, `app_mention`…). */
  event: Record<string, unknown>;
}

/** Fields for `message` / `mention`; `ts` and `event_ts` are assigned when absent. */
export interface FakeSlackMessageInput {
  channel: string;
  user: string;
  text: string;
  thread_ts?: string;
  parent_user_id?: string;
  channel_type?: 'channel' | 'group' | 'im' | 'mpim';
  ts?: string;
  [field: string]: unknown;
}

/** A person edits a message they wrote: `ts` is the message's, `text` the new text. */
export interface FakeSlackEditInput {
  channel: string;
  user: string;
  ts: string;
  text: string;
  /** The text before the edit (Slack sends it as `previous_message`; default empty). */
  previousText?: string;
  thread_ts?: string;
}

/** A message is deleted: `ts` is the deleted message's. */
export interface FakeSlackDeleteInput {
  channel: string;
  ts: string;
  /** Who wrote it (Slack sends it in `previous_message`). */
  user?: string;
}
