import type Database from 'better-sqlite3';
import type {
  ConversationDetail,
  ConversationQuery,
  ConversationRow,
  Overview,
  ParticipantDetail,
  ParticipantRow,
  RunDetail,
  RunQuery,
  RunRow,
  SearchHit,
  SpeakerKind,
  StudioSource,
  Turn,
  TurnPage,
} from '../studio/source.js';
import { type RunSqlRow, toRun } from '../runs.js';
import { matchExpression, queryWords } from '../search.js';
import { SqliteConversationStore } from './store.js';

/**
 * `colloquy studio`'s reads on a SQLite file, on a read-only connection of the store (the
 * same schema checks as every CLI command). Runs and deliveries are read when the file has
 * the `agent_runs` table and the `messages.delivery` column, and left out when it does not.
 *
 * @example
 * ```ts
 * const source = SqliteStudioSource.open('./colloquy.db');
 * const { items } = await source.conversations({ limit: 20 });
 * await source.close();
 * ```
 */
export class SqliteStudioSource implements StudioSource {
  readonly store: SqliteConversationStore;
  private readonly db: Database.Database;
  private schema: {
    version: number;
    runs: boolean;
    prompt: boolean;
    messages: ReadonlySet<string>;
    conversations: ReadonlySet<string>;
  };

  private constructor(
    private readonly path: string,
    readonly writable: boolean,
  ) {
    this.store = new SqliteConversationStore({
      path,
      readonly: true,
    });
    this.db = this.store.db;
    this.schema = {
      version: -1,
      runs: false,
      prompt: false,
      messages: new Set(),
      conversations: new Set(),
    };
  }

  /** Opens a source on an existing file; `write` enables `forget` (through its own connection). */
  static open(path: string, options: { write?: boolean } = {}): SqliteStudioSource {
    return new SqliteStudioSource(path, options.write === true);
  }

  async conversations(query: ConversationQuery) {
    const [afterTime, afterId] = splitCursor(query.after);
    const rows = this.db
      .prepare<unknown[], ConversationSqlRow>(
        `select c.id, c.channel_type, c.channel_id, c.channel_name, c.thread_id, c.scope,
           c.message_count, c.created_at, c.last_message_at, ${this.title('c')}
         from conversations c
         where (@platform is null or c.channel_type = @platform)
           and (@participant is null or exists (select 1 from messages m
                where m.conversation_id = c.id and m.participant_id = @participant))
           and (@afterTime is null or (c.last_message_at, c.id) < (@afterTime, @afterId))
         order by c.last_message_at desc, c.id desc
         limit @limit`,
      )
      .all({
        platform: query.platform ?? null,
        participant: query.participant ?? null,
        afterTime: afterTime ?? null,
        afterId: afterId ?? null,
        limit: query.limit + 1,
      });
    const items = rows.slice(0, query.limit).map(conversationRow);
    const last = items.at(-1);
    return rows.length > query.limit && last
      ? { items, next: `${last.lastMessageAt}|${last.id}` }
      : { items };
  }

  async platforms(): Promise<string[]> {
    return this.db
      .prepare<[], { t: string }>('select distinct channel_type as t from conversations order by t')
      .all()
      .map((row) => row.t);
  }

  async search(query: string, limit: number): Promise<SearchHit[]> {
    const words = queryWords(query);
    if (words.length === 0) return [];
    const match = words.map((w) => `(${matchExpression(w.word)})`).join(' AND ');
    return this.db
      .prepare<unknown[], SearchHit>(
        `select m.seq, m.conversation_id as conversationId,
           coalesce(c.channel_name, c.id) as conversationName, c.channel_type as platform,
           coalesce(p.display_name, p.id) as speakerName, m.timestamp, m.content
         from messages_fts f
         join messages m on m.seq = 0xFFFFFFFF - (f.rowid & 0xFFFFFFFF)
         join conversations c on c.id = m.conversation_id
         join participants p on p.id = m.participant_id
         where messages_fts match @match and m.deleted_at is null and m.is_summary = 0
         order by f.rank
         limit @limit`,
      )
      .all({ match, limit });
  }

  async conversation(id: string): Promise<ConversationDetail | undefined> {
    const row = this.db
      .prepare<[string], ConversationSqlRow>(
        `select c.id, c.channel_type, c.channel_id, c.channel_name, c.thread_id, c.scope,
           c.message_count, c.created_at, c.last_message_at, ${this.title('c')}
         from conversations c where c.id = ?`,
      )
      .get(id);
    if (row === undefined) return undefined;
    const parent =
      row.thread_id === null
        ? undefined
        : this.db
            .prepare<[string, string], { id: string }>(
              `select id from conversations where channel_type = ? and channel_id = ?
               and thread_id is null limit 1`,
            )
            .get(row.channel_type, row.channel_id);
    const threads =
      row.thread_id !== null
        ? []
        : this.db
            .prepare<[string, string], { id: string; rootMessageId: string; messageCount: number }>(
              `select id, thread_id as rootMessageId, message_count as messageCount
               from conversations where channel_type = ? and channel_id = ?
               and thread_id is not null`,
            )
            .all(row.channel_type, row.channel_id);
    return {
      ...conversationRow(row),
      firstMessageAt: row.created_at,
      ...(parent ? { parentId: parent.id } : {}),
      threads,
    };
  }

  async turns(conversationId: string, page: TurnPage) {
    let older: TurnSqlRow[];
    let newer: TurnSqlRow[] = [];
    let half = page.limit;
    if (page.around !== undefined) {
      const at = this.db
        .prepare<[number, string], { timestamp: string }>(
          'select timestamp from messages where seq = ? and conversation_id = ?',
        )
        .get(page.around, conversationId);
      if (at !== undefined) {
        half = Math.ceil(page.limit / 2);
        newer = this.db
          .prepare<unknown[], TurnSqlRow>(
            `${this.turnSelect()} where m.conversation_id = @c
               and (m.timestamp, m.seq) > (@ts, @seq)
             order by m.timestamp, m.seq limit @limit`,
          )
          .all({ c: conversationId, ts: at.timestamp, seq: page.around, limit: page.limit - half });
        older = this.olderTurns(conversationId, `${at.timestamp}|${page.around + 1}`, half);
      } else {
        older = this.olderTurns(conversationId, undefined, half);
      }
    } else {
      older = this.olderTurns(conversationId, page.before, half);
    }
    const more = older.length > half;
    const shown = older.slice(0, half).reverse();
    const first = shown[0];
    const turns = this.toTurns([...shown, ...newer]);
    return more && first ? { turns, earlier: `${first.timestamp}|${first.seq}` } : { turns };
  }

  async turnsAfter(afterSeq: number, limit: number, conversationId?: string): Promise<Turn[]> {
    // `+m.conversation_id`: read the rowid range after `afterSeq` (a few new rows), never the
    // conversation's whole index.
    return this.toTurns(
      this.db
        .prepare<unknown[], TurnSqlRow>(
          `${this.turnSelect()} where m.seq > @after
             and (@c is null or +m.conversation_id = @c)
           order by m.seq limit @limit`,
        )
        .all({ after: afterSeq, limit, c: conversationId ?? null }),
    );
  }

  async latestSeq(): Promise<number> {
    return (
      this.db.prepare<[], { seq: number | null }>('select max(seq) as seq from messages').get()
        ?.seq ?? 0
    );
  }

  /** SQLite's `data_version`: it moves whenever another connection commits to the file. */
  changeMark(): number {
    return this.db.pragma('data_version', { simple: true }) as number;
  }

  async runs(query: RunQuery): Promise<RunRow[] | undefined> {
    if (!this.shape().runs) return undefined;
    return this.db
      .prepare<unknown[], RunSqlRow>(
        `select * from agent_runs
         where (@agent is null or agent_id = @agent) and (@status is null or status = @status)
         order by created_at desc, id desc limit @limit`,
      )
      .all({ agent: query.agent ?? null, status: query.status ?? null, limit: query.limit })
      .map(runRow);
  }

  async run(id: string): Promise<RunDetail | undefined> {
    if (!this.shape().runs) return undefined;
    const row = this.db
      .prepare<[string], RunSqlRow>('select * from agent_runs where id = ?')
      .get(id);
    if (row === undefined) return undefined;
    const inbound = this.toTurns(
      this.db
        .prepare<[string], TurnSqlRow>(`${this.turnSelect()} where m.id = ?`)
        .all(row.message_id),
    )[0];
    const prompt = typeof row.prompt === 'string' ? parseJson(row.prompt) : undefined;
    return {
      ...runRow(row),
      ...(prompt === undefined ? {} : { prompt }),
      ...(inbound ? { inbound } : {}),
    };
  }

  async agentAliases(agentId: string): Promise<string[]> {
    const learned = this.db
      .prepare<[string], { id: string }>(`${LEARNED_ALIASES} select id from learned`)
      .all(agentId)
      .map((row) => row.id);
    return [...new Set([agentId, ...learned])];
  }

  async unanswered(limit: number): Promise<Turn[]> {
    const ours = this.ourAgents();
    // A run's id starts with its inbound turn's id: a range of the primary key.
    const answeredRun = this.shape().runs
      ? `and not exists (select 1 from agent_runs ar where ar.id > m.id || ':'
           and ar.id < m.id || ';' and ar.message_id = m.id and ar.status = 'answered')`
      : '';
    const rows = this.db
      .prepare<unknown[], TurnSqlRow>(
        `with ours(id) as (${ours}),
         ${LEARNED_ALIASES.replace('with ', '').replace('= ?', 'in (select id from ours)')},
         aliases(id) as (select id from ours union select id from learned)
         ${this.turnSelect()}
         where m.seq > (select max(seq) from messages) - @window
           and m.deleted_at is null and m.is_summary = 0
           and m.participant_id not in (select id from ours)
           and (m.reply_to_participant_id in (select id from ours)
                or exists (select 1 from message_mentions mm where mm.message_seq = m.seq
                           and mm.participant_id in (select id from aliases)))
           and not exists (select 1 from messages r
             where r.conversation_id = m.conversation_id
               and r.reply_to_participant_id = m.participant_id
               and r.timestamp >= m.timestamp
               and r.reply_to_message_id = m.platform_message_id
               and r.participant_id in (select id from ours))
           ${answeredRun}
         order by m.seq desc limit @limit`,
      )
      .all({ limit, window: UNANSWERED_WINDOW });
    return this.toTurns(rows);
  }

  async overview(days: number): Promise<Overview> {
    const newest =
      this.db
        .prepare<[], { t: string | null }>('select max(last_message_at) as t from conversations')
        .get()?.t ?? new Date().toISOString();
    const end = Date.parse(newest.slice(0, 10));
    const dayList = Array.from({ length: days }, (_, i) =>
      new Date(end - (days - 1 - i) * 86_400_000).toISOString().slice(0, 10),
    );
    const since = dayList[0] ?? newest.slice(0, 10);
    const turnsPerDay = this.db
      .prepare<[string], { day: string; platform: string; turns: number }>(
        `select substr(timestamp, 1, 10) as day, channel_type as platform, count(*) as turns
         from messages where is_summary = 0 and timestamp >= ? group by 1, 2 order by 1, 2`,
      )
      .all(since);
    const totals = this.db
      .prepare<[], Overview['totals']>(
        `select (select count(*) from conversations) as conversations,
           (select count(*) from messages where is_summary = 0) as turns,
           (select count(*) from participants) as participants`,
      )
      .get() ?? { conversations: 0, turns: 0, participants: 0 };
    if (!this.shape().runs) return { days: dayList, turnsPerDay, totals };
    const runsPerAgent = this.db
      .prepare<[], { agentId: string; answered: number; failed: number; other: number }>(
        `select agent_id as agentId, sum(status = 'answered') as answered,
           sum(status in ('failed', 'expired', 'unconfirmed')) as failed,
           sum(status not in ('answered', 'failed', 'expired', 'unconfirmed')) as other
         from agent_runs group by agent_id order by agent_id`,
      )
      .all();
    const tokensPerDay = this.db
      .prepare<[string], { day: string; agentId: string; tokens: number }>(
        `select substr(created_at, 1, 10) as day, agent_id as agentId,
           coalesce(sum(input_tokens), 0) + coalesce(sum(output_tokens), 0) as tokens
         from agent_runs where created_at >= ? group by 1, 2 order by 1, 2`,
      )
      .all(since);
    return { days: dayList, turnsPerDay, totals, runsPerAgent, tokensPerDay };
  }

  async participants(limit: number, options: { counts?: boolean } = {}): Promise<ParticipantRow[]> {
    const rows = this.db
      .prepare<[number], ParticipantSqlRow>(
        `select id, kind, display_name, last_seen_at, 0 as messages
         from participants order by last_seen_at desc, id limit ?`,
      )
      .all(limit);
    if (options.counts && rows.length > 0) {
      // One pass over the turns: no index leads with participant_id.
      const counts = new Map(
        this.db
          .prepare<string[], { id: string; n: number }>(
            `select participant_id as id, count(*) as n from messages
             where participant_id in (${rows.map(() => '?').join(',')}) group by participant_id`,
          )
          .all(...rows.map((row) => row.id))
          .map((row) => [row.id, row.n]),
      );
      for (const row of rows) row.messages = counts.get(row.id) ?? 0;
    }
    return rows.map(participantRow);
  }

  async participant(id: string): Promise<ParticipantDetail | undefined> {
    // Their turns, found conversation by conversation through (conversation_id, participant_id).
    const row = this.db
      .prepare<[string], ParticipantSqlRow & Omit<ParticipantDetail, keyof ParticipantRow>>(
        `with p_id(id) as (select ?),
         theirs as (select m.seq, m.conversation_id from conversations c
           join messages m on m.conversation_id = c.id
             and m.participant_id = (select id from p_id))
         select p.id, p.kind, p.display_name, p.last_seen_at,
           (select count(*) from theirs) as messages,
           (select count(distinct conversation_id) from theirs) as conversations,
           (select count(*) from message_revisions r where r.message_seq in
             (select seq from theirs)) as revisions,
           (select count(*) from message_mentions mm where mm.participant_id = p.id) as mentions,
           (select count(*) from messages s where s.is_summary = 1 and s.conversation_id in
             (select conversation_id from theirs)) as summaries
         from participants p where p.id = (select id from p_id)`,
      )
      .get(id);
    if (row === undefined) return undefined;
    return {
      ...participantRow(row),
      conversations: row.conversations,
      revisions: row.revisions,
      mentions: row.mentions,
      summaries: row.summaries,
    };
  }

  /** Through a store opened for writing just for this call, as `colloquy forget` does. */
  async forget(participantId: string): Promise<number> {
    if (!this.writable) throw new Error('the studio was started without --write');
    const store = new SqliteConversationStore({
      path: this.path,
    });
    try {
      return await store.forgetParticipant(participantId);
    } finally {
      await store.close();
    }
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  /** colloquy's own agents: agent participants named by an agent id, not a platform id. */
  private ourAgents(): string {
    const named = `select id from participants where kind = 'agent' and instr(id, ':') = 0`;
    return this.shape().runs ? `${named} union select agent_id from agent_runs` : named;
  }

  private olderTurns(conversationId: string, before: string | undefined, limit: number) {
    const [ts, seq] = splitCursor(before);
    return this.db
      .prepare<unknown[], TurnSqlRow>(
        `${this.turnSelect()} where m.conversation_id = @c
           and (@ts is null or (m.timestamp, m.seq) < (@ts, @seq))
         order by m.timestamp desc, m.seq desc limit @limit`,
      )
      .all({
        c: conversationId,
        ts: ts ?? null,
        seq: seq === undefined ? null : Number(seq),
        limit: limit + 1,
      });
  }

  private turnSelect(): string {
    return `select m.seq, m.id, m.conversation_id, m.participant_id, p.kind, p.display_name,
        m.content, m.timestamp, m.platform_message_id, m.edited_at, m.deleted_at,
        m.summary_for_agent_id, m.is_summary, m.metadata,
        ${this.optional('delivery')}, ${this.optional('reasoning')},
        ${this.optional('delegated_by')}, ${this.optional('delegated_to')},
        r.seq as reply_seq, r.conversation_id as reply_conversation_id,
        coalesce(rp.display_name, rp.id) as reply_name
      from messages m
      join participants p on p.id = m.participant_id
      left join messages r on m.reply_to_message_id is not null
        and r.channel_type = m.channel_type and r.channel_id = m.channel_id
        and r.platform_message_id = m.reply_to_message_id
      left join participants rp on rp.id = r.participant_id`;
  }

  /** Revisions and runs for a page of rows, in two queries. */
  private toTurns(rows: TurnSqlRow[]): Turn[] {
    if (rows.length === 0) return [];
    const edited = rows.filter((row) => row.edited_at !== null).map((row) => row.seq);
    const revisions = new Map<number, Turn['revisions']>();
    if (edited.length > 0) {
      const found = this.db
        .prepare<number[], { message_seq: number; content: string; replaced_at: string }>(
          `select message_seq, content, replaced_at from message_revisions
           where message_seq in (${edited.map(() => '?').join(',')}) order by id`,
        )
        .all(...edited);
      for (const r of found) {
        const list = revisions.get(r.message_seq) ?? [];
        list.push({ content: r.content, replacedAt: r.replaced_at });
        revisions.set(r.message_seq, list);
      }
    }
    const runs = new Map<string, RunRow[]>();
    const agents = new Set<string>();
    if (this.shape().runs) {
      const byMessage = this.runsWhere(
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
          : this.runsWhere(
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

  private runsWhere(column: 'message_id' | 'reply_id', ids: string[]): RunSqlRow[] {
    if (column === 'message_id') {
      // Run ids are `<inbound turn id>:<agent id>[…]` (the contract), so a turn's runs are a
      // range of the primary key, whatever else the table is indexed by.
      const statement = this.db.prepare<{ from: string; to: string; id: string }, RunSqlRow>(
        'select * from agent_runs where id > @from and id < @to and message_id = @id',
      );
      return ids.flatMap((id) => statement.all({ from: `${id}:`, to: `${id};`, id }));
    }
    return this.db
      .prepare<string[], RunSqlRow>(
        `select * from agent_runs where reply_id in (${ids.map(() => '?').join(',')})`,
      )
      .all(...ids);
  }

  /** `conversations.title` (newer files), NULL in older ones. */
  private title(alias: string): string {
    return this.shape().conversations.has('title') ? `${alias}.title` : 'null as title';
  }

  /** A `messages` column newer files have (`delivery`, `reasoning`, …), NULL in older ones. */
  private optional(column: string): string {
    return this.shape().messages.has(column) ? `m.${column}` : `null as ${column}`;
  }

  /** Which optional tables and columns this file has, read again when its schema changes. */
  private shape() {
    const version = this.db.pragma('schema_version', { simple: true }) as number;
    if (version !== this.schema.version) {
      const columns = (table: string) =>
        new Set(
          this.db
            .prepare<[string], { name: string }>('select name from pragma_table_info(?)')
            .all(table)
            .map((c) => c.name),
        );
      const runColumns = columns('agent_runs');
      this.schema = {
        version,
        runs: runColumns.has('id') && runColumns.has('message_id'),
        prompt: runColumns.has('prompt'),
        messages: columns('messages'),
        conversations: columns('conversations'),
      };
    }
    return this.schema;
  }
}

/** How far back (in turns stored) the list of unanswered turns looks. */
export const UNANSWERED_WINDOW = 50_000;

/**
 * A bot's platform ids (`slack:UBOT`) never write turns: they are learned from the mentions
 * on the turns its agents replied to (the newest 5,000 replies; not people's ids).
 */
const LEARNED_ALIASES = `with learned(id) as (
  select distinct mm.participant_id from (
    select m.channel_type, m.channel_id, m.reply_to_message_id from conversations c
    join messages m on m.conversation_id = c.id and m.participant_id = ?
    where m.reply_to_message_id is not null
    order by m.timestamp desc limit 5000) r
  join messages q on q.channel_type = r.channel_type and q.channel_id = r.channel_id
    and q.platform_message_id = r.reply_to_message_id
  join message_mentions mm on mm.message_seq = q.seq
  where mm.participant_id not in (select id from participants where kind = 'user'))`;

interface ConversationSqlRow {
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

interface TurnSqlRow {
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
  is_summary: number;
  metadata: string;
  delivery: string | null;
  reasoning: string | null;
  delegated_by: string | null;
  delegated_to: string | null;
  reply_seq: number | null;
  reply_conversation_id: string | null;
  reply_name: string | null;
}

interface ParticipantSqlRow {
  id: string;
  kind: string;
  display_name: string | null;
  last_seen_at: string;
  messages: number;
}

function splitCursor(cursor: string | undefined): [string | undefined, string | undefined] {
  if (cursor === undefined) return [undefined, undefined];
  const at = cursor.lastIndexOf('|');
  return at === -1 ? [undefined, undefined] : [cursor.slice(0, at), cursor.slice(at + 1)];
}

function conversationRow(row: ConversationSqlRow): ConversationRow {
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

function participantRow(row: ParticipantSqlRow): ParticipantRow {
  return {
    id: row.id,
    kind: row.kind,
    ...(row.display_name === null ? {} : { displayName: row.display_name }),
    messages: row.messages,
    lastSeenAt: row.last_seen_at,
  };
}

function runRow(row: RunSqlRow): RunRow {
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
    ...(row.delivery === null ? {} : { delivery: row.delivery }),
    runs,
  };
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
