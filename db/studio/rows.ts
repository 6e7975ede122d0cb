import type { RunSqlRow } from '../runs.js';
import { toRun } from '../runs.js';
import { NOBODY } from './people.js';
import type {
  ConversationDetail,
  ConversationListRow,
  ConversationPeople,
  ConversationQuery,
  ConversationRow,
  ParticipantDetail,
  ParticipantRow,
  RunDetail,
  RunRow,
  SpeakerKind,
  Turn,
  TurnAttachment,
  TurnPage,
} from './source.js';

// What every studio source makes of its rows, whatever its SQL dialect: the row shapes its
// queries select (snake_case, as the tables name them), the studio's values made of them,
// and the paging around the queries. Each dialect's source holds only its SQL.

/** How far back (in turns stored) the list of unanswered turns looks. */
export const UNANSWERED_WINDOW = 50_000;

/** A revision row: `message_revisions` of the turns on a page. */
export interface RevisionSqlRow {
  message_seq: number;
  content: string;
  replaced_at: string;
}

/** How a source reads what a page of turns needs besides the turns (`turnsOf`). */
export interface TurnExtras {
  /** The earlier texts of the turns `seqs`, oldest first. */
  revisions(seqs: number[]): Promise<RevisionSqlRow[]>;
  /** Runs of the inbound turns `ids` (`message_id`), or of the replies `ids` (`reply_id`); absent without runs. */
  runs?(column: 'message_id' | 'reply_id', ids: string[]): Promise<RunSqlRow[]>;
}

/**
 * A page of turns with their revisions and runs (two or three more queries).
 *
 * @example
 * ```ts
 * const turns = await turnsOf(rows, { revisions: (seqs) => readRevisions(seqs) });
 * ```
 */
export async function turnsOf(rows: TurnSqlRow[], extras: TurnExtras): Promise<Turn[]> {
  if (rows.length === 0) return [];
  const edited = rows.filter((row) => row.edited_at !== null).map((row) => row.seq);
  const revisions = new Map<number, Turn['revisions']>();
  for (const r of edited.length === 0 ? [] : await extras.revisions(edited)) {
    const list = revisions.get(r.message_seq) ?? [];
    list.push({ content: r.content, replacedAt: r.replaced_at });
    revisions.set(r.message_seq, list);
  }
  const runs = new Map<string, RunRow[]>();
  const agents = new Set<string>();
  if (extras.runs !== undefined) {
    const byMessage = await extras.runs(
      'message_id',
      rows.map((row) => row.id),
    );
    // A reply's run is usually found through its inbound turn on the same page; only the
    // agents' turns left over are looked up by `reply_id`.
    const found = new Set(byMessage.map((r) => r.reply_id));
    const left = rows.filter((row) => row.kind === 'agent' && !found.has(row.id));
    const byReply =
      left.length === 0
        ? []
        : await extras.runs(
            'reply_id',
            left.map((row) => row.id),
          );
    for (const r of [...byMessage, ...byReply]) {
      agents.add(r.agent_id);
      for (const key of new Set([r.message_id, r.reply_id])) {
        if (key === null) continue;
        const list = runs.get(key) ?? [];
        if (!list.some((known) => known.id === r.id)) list.push(runRow(r));
        runs.set(key, list);
      }
    }
  }
  return rows.map((row) =>
    turnOf(row, revisions.get(row.seq) ?? [], runs.get(row.id) ?? [], agents),
  );
}

export interface ConversationSqlRow {
  id: string;
  channel_type: string;
  channel_id: string;
  channel_name: string | null;
  thread_id: string | null;
  scope: string;
  message_count: number;
  created_at: string;
  last_message_at: string;
  title: string | null;
}

export interface TurnSqlRow {
  seq: number;
  id: string;
  conversation_id: string;
  participant_id: string;
  kind: string;
  display_name: string | null;
  content: string;
  timestamp: string;
  platform_message_id: string | null;
  edited_at: string | null;
  deleted_at: string | null;
  summary_for_agent_id: string | null;
  /** 0/1 in SQLite, a boolean in Postgres. */
  is_summary: number | boolean;
  metadata: string;
  delivery: string | null;
  reasoning: string | null;
  /** The turn's files as a JSON array (NULL in files written before they were kept). */
  attachments: string | null;
  delegated_by: string | null;
  delegated_to: string | null;
  reply_seq: number | null;
  reply_conversation_id: string | null;
  reply_name: string | null;
}

export interface ParticipantSqlRow {
  id: string;
  kind: string;
  display_name: string | null;
  last_seen_at: string;
  messages: number;
}

export function splitCursor(cursor: string | undefined): [string | undefined, string | undefined] {
  if (cursor === undefined) return [undefined, undefined];
  const at = cursor.lastIndexOf('|');
  return at === -1 ? [undefined, undefined] : [cursor.slice(0, at), cursor.slice(at + 1)];
}

export function conversationRow(row: ConversationSqlRow): ConversationRow {
  return {
    id: row.id,
    platform: row.channel_type,
    channelId: row.channel_id,
    ...(row.channel_name === null ? {} : { channelName: row.channel_name }),
    ...(row.thread_id === null ? {} : { threadId: row.thread_id }),
    ...(row.title === null ? {} : { title: row.title }),
    scope: row.scope,
    messageCount: row.message_count,
    lastMessageAt: row.last_message_at,
  };
}

export function participantRow(row: ParticipantSqlRow): ParticipantRow {
  return {
    id: row.id,
    kind: row.kind,
    ...(row.display_name === null ? {} : { displayName: row.display_name }),
    messages: row.messages,
    lastSeenAt: row.last_seen_at,
  };
}

export function runRow(row: RunSqlRow): RunRow {
  const { prompt: _, ...run } = toRun({
    ...row,
    reply_conversation_id: null,
    reply_delivery: null,
    reply_platform_id: null,
    reply_metadata: null,
  });
  const latency =
    row.finished_at === null
      ? Number.NaN
      : Date.parse(row.finished_at) - Date.parse(row.started_at ?? row.created_at);
  return Number.isFinite(latency) ? { ...run, latencyMs: latency } : run;
}

function speakerKind(row: TurnSqlRow, agents: ReadonlySet<string>): SpeakerKind {
  if (row.kind === 'user') return 'person';
  if (row.kind === 'system') return 'system';
  // colloquy's own agents go by their agent id; other bots by a platform id (`discord:…`).
  return agents.has(row.participant_id) || !row.participant_id.includes(':')
    ? 'this bot'
    : 'another bot';
}

/** `command /refund → billing-agent`, `pressed approve → billing-agent`, `… refused: wrong user`. */
function interactionWords(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const i = value as Record<string, unknown>;
  const what =
    i['type'] === 'command'
      ? `command /${String(i['name'])}`
      : `pressed ${String(i['value'] ?? i['id'])}`;
  if (typeof i['refused'] === 'string') return `${what} · refused: ${i['refused']}`;
  return typeof i['agent'] === 'string' ? `${what} → ${i['agent']}` : what;
}

/** The labels of a reply's buttons and select options, in order. */
function actionLabels(metadata: Record<string, unknown>): string[] {
  const actions = Array.isArray(metadata['actions']) ? metadata['actions'] : [];
  const select = metadata['select'] as { options?: unknown } | undefined;
  const options = Array.isArray(select?.options) ? select.options : [];
  return [...actions, ...options].flatMap((a: { label?: unknown }) =>
    typeof a?.label === 'string' ? [a.label] : [],
  );
}

function turnOf(
  row: TurnSqlRow,
  revisions: Turn['revisions'],
  runs: RunRow[],
  agents: ReadonlySet<string>,
): Turn {
  const metadata = (parseJson(row.metadata) ?? {}) as Record<string, unknown>;
  const toolName = typeof metadata['toolName'] === 'string' ? metadata['toolName'] : undefined;
  const callId = typeof metadata['toolCallId'] === 'string' ? metadata['toolCallId'] : undefined;
  const role = typeof metadata['toolRole'] === 'string' ? metadata['toolRole'] : undefined;
  // Newer files keep these in columns; older ones in the metadata JSON.
  const text = (column: string | null, key: string) =>
    column ?? (typeof metadata[key] === 'string' ? metadata[key] : undefined);
  const by = text(row.delegated_by, 'delegatedBy');
  const to = text(row.delegated_to, 'delegatedTo');
  const delegation = {
    ...(by === undefined ? {} : { by }),
    ...(to === undefined ? {} : { to }),
    ...(metadata['delegationAnswer'] === true ? { answer: true } : {}),
  };
  const reasoning = text(row.reasoning, 'reasoning');
  const attachments = attachmentsOf(row.attachments);
  const interaction = interactionWords(metadata['interaction']);
  const actions = actionLabels(metadata);
  return {
    seq: row.seq,
    id: row.id,
    conversationId: row.conversation_id,
    speakerId: row.participant_id,
    speakerName: row.display_name ?? row.participant_id,
    speakerKind: speakerKind(row, agents),
    content: row.content,
    timestamp: row.timestamp,
    ...(row.platform_message_id === null ? {} : { platformMessageId: row.platform_message_id }),
    ...(row.edited_at === null ? {} : { editedAt: row.edited_at }),
    ...(row.deleted_at === null ? {} : { deletedAt: row.deleted_at }),
    revisions,
    ...(row.is_summary ? { summaryFor: row.summary_for_agent_id ?? '' } : {}),
    ...(toolName !== undefined || callId !== undefined
      ? {
          tool: {
            name: toolName ?? 'tool',
            ...(callId === undefined ? {} : { callId }),
            ...(role === undefined ? {} : { role }),
          },
        }
      : {}),
    ...(row.reply_seq === null
      ? {}
      : {
          replyTo: {
            seq: row.reply_seq,
            conversationId: row.reply_conversation_id ?? row.conversation_id,
            speakerName: row.reply_name ?? '',
          },
        }),
    ...(Object.keys(delegation).length === 0 ? {} : { delegation }),
    ...(reasoning === undefined || reasoning === '' ? {} : { reasoning }),
    ...(attachments.length === 0 ? {} : { attachments }),
    ...(interaction === undefined ? {} : { interaction }),
    ...(actions.length === 0 ? {} : { actions }),
    ...(row.delivery === null ? {} : { delivery: row.delivery }),
    runs,
  };
}

/** The files of a turn as the page lists them: kind, name, MIME type and size, nothing fetched. */
function attachmentsOf(json: string | null | undefined): TurnAttachment[] {
  const parsed = json == null ? undefined : parseJson(json);
  if (!Array.isArray(parsed)) return [];
  return parsed.flatMap((value: unknown) => {
    if (typeof value !== 'object' || value === null) return [];
    const a = value as Record<string, unknown>;
    const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
    const kind = str(a.kind) ?? 'file';
    const name = str(a.name);
    const mimeType = str(a.mimeType);
    const size = typeof a.size === 'number' ? a.size : undefined;
    return [
      {
        kind,
        ...(name === undefined ? {} : { name }),
        ...(mimeType === undefined ? {} : { mimeType }),
        ...(size === undefined ? {} : { size }),
      },
    ];
  });
}

export function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

/** The `@name` values of a conversation listing query (one page and one row more). */
export function conversationParams(query: ConversationQuery): Record<string, unknown> {
  const [afterTime, afterId] = splitCursor(query.after);
  return {
    platform: query.platform ?? null,
    participant: query.participant ?? null,
    afterTime: afterTime ?? null,
    afterId: afterId ?? null,
    limit: query.limit + 1,
  };
}

/**
 * A page of conversations from a listing's rows (one more than `limit` when more follow), with
 * who wrote in each and its newest turn, read by `people` for the page's ids.
 */
export async function conversationPage(
  rows: ConversationSqlRow[],
  limit: number,
  people: (ids: string[]) => Promise<Map<string, ConversationPeople>>,
) {
  const page = rows.slice(0, limit);
  const found = page.length === 0 ? new Map() : await people(page.map((row) => row.id));
  const items: ConversationListRow[] = page.map((row) => ({
    ...conversationRow(row),
    ...(found.get(row.id) ?? NOBODY),
  }));
  const last = items.at(-1);
  return rows.length > limit && last
    ? { items, next: `${last.lastMessageAt}|${last.id}` }
    : { items };
}

/** A conversation with the channel it is a thread of, or the threads it holds. */
export function conversationDetail(
  row: ConversationSqlRow,
  parent: { id: string } | undefined,
  threads: ConversationDetail['threads'],
  people: ConversationPeople | undefined,
): ConversationDetail {
  return {
    ...conversationRow(row),
    ...(people ?? NOBODY),
    firstMessageAt: row.created_at,
    ...(parent ? { parentId: parent.id } : {}),
    threads,
  };
}

/** How a source reads a conversation's turns by time (`turnPage`). */
export interface TurnReads {
  /** The time of the turn `seq` of the conversation, when it is there. */
  timeOf(seq: number): Promise<string | undefined>;
  /** Up to `limit` turns after `(timestamp, seq)`, oldest first. */
  newer(timestamp: string, seq: number, limit: number): Promise<TurnSqlRow[]>;
  /** Up to `limit` turns before the cursor (`timestamp|seq`; none: the newest), newest first. */
  older(before: string | undefined, limit: number): Promise<TurnSqlRow[]>;
}

/**
 * One page of a conversation's turns in order: the newest `limit`, those before `before`, or
 * those around the turn `around` (half before it, half after), with the cursor to the page
 * before when there is one.
 */
export async function turnPage(
  page: TurnPage,
  reads: TurnReads,
  extras: TurnExtras,
): Promise<{ turns: Turn[]; earlier?: string }> {
  const at = page.around === undefined ? undefined : await reads.timeOf(page.around);
  let half = page.limit;
  let newer: TurnSqlRow[] = [];
  let older: TurnSqlRow[];
  if (page.around !== undefined && at !== undefined) {
    half = Math.ceil(page.limit / 2);
    newer = await reads.newer(at, page.around, page.limit - half);
    older = await reads.older(`${at}|${page.around + 1}`, half + 1);
  } else {
    older = await reads.older(page.around === undefined ? page.before : undefined, half + 1);
  }
  const shown = older.slice(0, half).reverse();
  const first = shown[0];
  const turns = await turnsOf([...shown, ...newer], extras);
  return older.length > half && first
    ? { turns, earlier: `${first.timestamp}|${first.seq}` }
    : { turns };
}

/** A run with its recorded prompt and the turn it answered. */
export async function runDetail(
  row: RunSqlRow,
  inbound: TurnSqlRow[],
  extras: TurnExtras,
): Promise<RunDetail> {
  const [turn] = await turnsOf(inbound, extras);
  const prompt = typeof row.prompt === 'string' ? parseJson(row.prompt) : undefined;
  return {
    ...runRow(row),
    ...(prompt === undefined ? {} : { prompt }),
    ...(turn ? { inbound: turn } : {}),
  };
}

/** The `days` UTC days up to the newest activity (today when there is none), oldest first. */
export function overviewDays(newest: string | null | undefined, days: number) {
  const last = newest ?? new Date().toISOString();
  const end = Date.parse(last.slice(0, 10));
  const list = Array.from({ length: days }, (_, i) =>
    new Date(end - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10),
  );
  return { days: list, since: list[0] ?? last.slice(0, 10) };
}

/** People rows with how many turns each wrote. */
export function withTurnCounts(
  rows: ParticipantSqlRow[],
  counts: { id: string; n: number }[],
): ParticipantSqlRow[] {
  const byId = new Map(counts.map((row) => [row.id, row.n]));
  return rows.map((row) => ({ ...row, messages: byId.get(row.id) ?? 0 }));
}

/** What a person's page counts: their turns, conversations, revisions, mentions, summaries. */
export type ParticipantSqlDetail = ParticipantSqlRow &
  Omit<ParticipantDetail, keyof ParticipantRow>;

export function participantDetail(row: ParticipantSqlDetail): ParticipantDetail {
  return {
    ...participantRow(row),
    conversations: row.conversations,
    revisions: row.revisions,
    mentions: row.mentions,
    summaries: row.summaries,
  };
}
