import type { ConversationStore } from '../../src/store.js';
import type { AgentRun } from '../../src/runs.js';

/**
 * What `colloquy studio` reads, as view rows. One implementation per store dialect
 * (`SqliteStudioSource` in `colloquy/sqlite`, `PostgresStudioSource` in `colloquy/postgres`); the pages and the
 * server only know this interface. Every call is async so a networked store fits.
 *
 * @example
 * ```ts
 * const page = await source.conversations({ platform: 'slack', limit: 50 });
 * for (const c of page.items) console.log(c.id, c.messageCount);
 * ```
 */
export interface StudioSource {
  /** Conversations, newest activity first, one page at a time. */
  conversations(query: ConversationQuery): Promise<{ items: ConversationListRow[]; next?: string }>;
  /** The platforms (channel types) present, for the filter. */
  platforms(): Promise<string[]>;
  /** Full-text search across every conversation (plain words, all of them must match). */
  search(query: string, limit: number): Promise<SearchHit[]>;
  conversation(id: string): Promise<ConversationDetail | undefined>;
  /**
   * One page of a conversation's turns in order: the newest `limit` (or those before the
   * `before` cursor, or around the turn `around`).
   */
  turns(conversationId: string, page: TurnPage): Promise<{ turns: Turn[]; earlier?: string }>;
  /**
   * Where a live page starts: every turn committed so far is before it. Opaque (SQLite: the
   * highest `seq`; Postgres: a transaction horizon, since a turn can commit after one with a
   * higher `seq`). Turns committed meanwhile may be sent again: the page shows each once.
   */
  liveCursor(): Promise<string>;
  /**
   * Turns committed after `cursor` (in one conversation, or any), oldest first, at most
   * `limit`, and the cursor after them. A cursor the source did not make means "now".
   */
  turnsAfter(
    cursor: string,
    limit: number,
    conversationId?: string,
  ): Promise<{ turns: Turn[]; cursor: string }>;
  /**
   * A number that changes whenever someone else commits to the store: the live feed asks it
   * first and reads turns only when it moved. Optional: without it the feed reads `liveCursor`.
   */
  changeMark?(): number;
  /**
   * Agent runs, newest first, or `undefined` when the database has no `agent_runs` table
   * (a file written before colloquy recorded runs).
   */
  runs(query: RunQuery): Promise<RunRow[] | undefined>;
  run(id: string): Promise<RunDetail | undefined>;
  /**
   * The ids an agent goes by: its own, and the platform ids (`slack:UBOT`) mentioned on the
   * turns it replied to, learned from the data (the studio does not know the bot's settings).
   */
  agentAliases(agentId: string): Promise<string[]>;
  /** Turns that mentioned or replied to one of the bot's agents and got no reply turn. */
  unanswered(limit: number): Promise<Turn[]>;
  overview(days: number): Promise<Overview>;
  /** The newest participants; `counts` adds how many turns each wrote (one pass over the turns). */
  participants(limit: number, options?: { counts?: boolean }): Promise<ParticipantRow[]>;
  participant(id: string): Promise<ParticipantDetail | undefined>;
  /** The store, read-only, for prompt assembly (`assemblePrompt`). */
  readonly store: ConversationStore;
  /** True when opened for writing (`--write`): only then does `forget` run. */
  readonly writable: boolean;
  /** Deletes everything a participant wrote (`forgetParticipant`); refuses unless `writable`. */
  forget(participantId: string): Promise<number>;
  close(): Promise<void>;
}

export interface ConversationQuery {
  platform?: string;
  /** Only conversations this participant wrote in. */
  participant?: string;
  /** Cursor from the previous page's `next`. */
  after?: string;
  limit: number;
}

export interface ConversationRow {
  id: string;
  platform: string;
  channelId: string;
  channelName?: string;
  threadId?: string;
  /** The title an app gave the conversation (newer files). */
  title?: string;
  scope: string;
  messageCount: number;
  lastMessageAt: string;
}

/** Who wrote in a conversation and its newest turn, for the conversation list. */
export interface ConversationPeople {
  /** People first, then bots, by name; at most a few (`moreParticipants` counts the rest). */
  participants: { id: string; name: string; kind: string }[];
  moreParticipants: number;
  /** The newest turn people saw (no rolling summary, no tool step), cut to a preview. */
  lastTurn?: { speakerName: string; preview: string; deleted: boolean };
}

/** A row of the conversation list: the conversation, who wrote in it and its newest turn. */
export interface ConversationListRow extends ConversationRow, ConversationPeople {}

export interface ConversationDetail extends ConversationListRow {
  firstMessageAt: string;
  /** The channel conversation a thread belongs to, when stored. */
  parentId?: string;
  /** The threads started in this channel, by the platform id of their first turn. */
  threads: { id: string; rootMessageId: string; messageCount: number }[];
}

export interface TurnPage {
  limit: number;
  /** Cursor from a previous page's `earlier`. */
  before?: string;
  /** A turn's seq: the page around it (a search hit). */
  around?: number;
}

/** Who wrote a turn as people see it. */
export type SpeakerKind = 'person' | 'this bot' | 'another bot' | 'system';

export interface Turn {
  seq: number;
  id: string;
  conversationId: string;
  speakerId: string;
  speakerName: string;
  speakerKind: SpeakerKind;
  content: string;
  timestamp: string;
  platformMessageId?: string;
  editedAt?: string;
  deletedAt?: string;
  /** Earlier texts, oldest first. */
  revisions: { content: string; replacedAt: string }[];
  /** Set for a rolling summary: the agent it belongs to. */
  summaryFor?: string;
  /** Set for a tool call or result an agent recorded. */
  tool?: { name: string; callId?: string; role?: string };
  /** The turn replied to, when it is stored in the same channel. */
  replyTo?: { seq: number; conversationId: string; speakerName: string };
  /** A task one agent handed another (`delegatedTo`), or the answer to one (`answer`). */
  delegation?: { by?: string; to?: string; answer?: boolean };
  /** The model's reasoning, kept on a reply when the model gave any. */
  reasoning?: string;
  /** The files the turn carried, as references (the page fetches none of them). */
  attachments?: TurnAttachment[];
  /** A slash command or a press, in words (`command /refund → billing-agent`). */
  interaction?: string;
  /** The labels of the buttons (and select options) a reply carried. */
  actions?: string[];
  /** `sending` / `sent` / `unconfirmed` for turns the bot sent (NULL column: undefined). */
  delivery?: string;
  /** Runs started by this turn (an inbound turn) or that produced it (a reply). */
  runs: RunRow[];
}

/** A file a turn carried, as the studio shows it. */
export interface TurnAttachment {
  kind: string;
  name?: string;
  mimeType?: string;
  size?: number;
}

export interface SearchHit {
  seq: number;
  conversationId: string;
  conversationName: string;
  platform: string;
  speakerName: string;
  timestamp: string;
  content: string;
}

export interface RunQuery {
  agent?: string;
  status?: string;
  limit: number;
}

export interface RunRow extends Omit<AgentRun, 'attempts' | 'prompt' | 'reply'> {
  attempts?: number;
  /** finished - started (or created), in ms, when both are known. */
  latencyMs?: number;
}

export interface RunDetail extends RunRow {
  /** The prompt recorded when the run happened (JSON), when the bot was configured to. */
  prompt?: unknown;
  /** The inbound turn the run answered. */
  inbound?: Turn;
}

export interface ParticipantRow {
  id: string;
  kind: string;
  displayName?: string;
  messages: number;
  lastSeenAt: string;
}

export interface ParticipantDetail extends ParticipantRow {
  conversations: number;
  revisions: number;
  mentions: number;
  /** Rolling summaries in the conversations they wrote in (forgetting deletes these too). */
  summaries: number;
}

export interface Overview {
  days: string[];
  /** Turns per day per platform. */
  turnsPerDay: { day: string; platform: string; turns: number }[];
  /** `undefined` when no `agent_runs` table. */
  runsPerAgent?: { agentId: string; answered: number; failed: number; other: number }[];
  tokensPerDay?: { day: string; agentId: string; tokens: number }[];
  totals: { conversations: number; turns: number; participants: number };
}

/**
 * `StudioSource.forget` through a store opened for writing just for this call (as `colloquy
 * forget` does) and closed after; refused unless the studio is `writable`.
 *
 * @example
 * ```ts
 * const deleted = await forgetThrough(true, () => new SqliteConversationStore({ path }), 'slack:U1');
 * ```
 */
export async function forgetThrough(
  writable: boolean,
  open: () => ConversationStore | Promise<ConversationStore>,
  participantId: string,
): Promise<number> {
  if (!writable) throw new Error('the studio was started without --write');
  const store = await open();
  try {
    return await store.forgetParticipant(participantId);
  } finally {
    await store.close();
  }
}
