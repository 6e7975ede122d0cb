import type Database from 'better-sqlite3';
import type {
  ConversationDetail,
  ConversationQuery,
  Overview,
  ParticipantDetail,
  ParticipantRow,
  RunDetail,
  RunQuery,
  RunRow,
  SearchHit,
  StudioSource,
  Turn,
  TurnPage,
} from '../studio/source.js';
import { forgetThrough } from '../studio/source.js';
import {
  type ConversationSqlRow,
  type ParticipantSqlDetail,
  type ParticipantSqlRow,
  type RevisionSqlRow,
  type TurnExtras,
  type TurnReads,
  type TurnSqlRow,
  UNANSWERED_WINDOW,
  conversationDetail,
  conversationPage,
  conversationParams,
  overviewDays,
  participantDetail,
  participantRow,
  runDetail,
  runRow,
  splitCursor,
  turnPage,
  turnsOf,
  withTurnCounts,
} from '../studio/rows.js';
import { learnedAliases, participantSql, turnSelect, unansweredSql } from '../studio/sql.js';
import type { RunSqlRow } from '../runs.js';
import { matchExpression, queryWords } from '../search.js';
import { WROTE_IN } from './statements.js';
import { type AuthorSqlRow, type LastTurnSqlRow, conversationPeople } from '../studio/people.js';
import { SqliteConversationStore } from './store.js';

/**
 * `participantSql`'s turns of @id: a person's turns are in no index of their own, so they are
 * read in the conversations `conversation_authors` says they wrote in.
 */
const THEIRS = `select m.seq, m.conversation_id
  from (select distinct conversation_id from conversation_authors where participant_id = @id) a
  join messages m on m.conversation_id = a.conversation_id and m.participant_id = @id`;

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
    const rows = this.db
      .prepare<unknown[], ConversationSqlRow>(
        `select c.id, c.channel_type, c.channel_id, c.channel_name, c.thread_id, c.scope,
           c.message_count, c.created_at, c.last_message_at, ${this.title('c')}
         from conversations c
         where (@platform is null or c.channel_type = @platform)
           and (@participant is null or (${WROTE_IN}))
           and (@afterTime is null or (c.last_message_at, c.id) < (@afterTime, @afterId))
         order by c.last_message_at desc, c.id desc
         limit @limit`,
      )
      .all(conversationParams(query));
    return conversationPage(rows, query.limit, (ids) => this.people(ids));
  }

  /** Who wrote in each conversation (`conversation_authors`) and its newest turn people saw. */
  private async people(ids: string[]) {
    const json = JSON.stringify(ids);
    const authors = this.db
      .prepare<[string], AuthorSqlRow>(
        `select a.conversation_id, a.participant_id, p.kind, p.display_name
         from conversation_authors a join participants p on p.id = a.participant_id
         where a.conversation_id in (select value from json_each(?))`,
      )
      .all(json);
    const lastTurns = this.db
      .prepare<[string], LastTurnSqlRow>(
        `select j.value as conversation_id, coalesce(p.display_name, m.participant_id) as speaker,
           m.content, m.deleted_at is not null as deleted
         from json_each(?) j
         join messages m on m.seq = (select x.seq from messages x
           where x.conversation_id = j.value and x.is_summary = 0
             and json_extract(x.metadata, '$.toolRole') is null
           order by x.timestamp desc, x.seq desc limit 1)
         left join participants p on p.id = m.participant_id`,
      )
      .all(json);
    return conversationPeople(authors, lastTurns);
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
    const place = [row.channel_type, row.channel_id] as const;
    const parent =
      row.thread_id === null
        ? undefined
        : this.db
            .prepare<[string, string], { id: string }>(
              `select id from conversations where channel_type = ? and channel_id = ?
               and thread_id is null limit 1`,
            )
            .get(...place);
    const threads =
      row.thread_id !== null
        ? []
        : this.db
            .prepare<[string, string], ConversationDetail['threads'][number]>(
              `select id, thread_id as rootMessageId, message_count as messageCount
               from conversations where channel_type = ? and channel_id = ?
               and thread_id is not null`,
            )
            .all(...place);
    return conversationDetail(row, parent, threads, (await this.people([id])).get(id));
  }

  async turns(conversationId: string, page: TurnPage) {
    const reads: TurnReads = {
      timeOf: async (seq) =>
        this.db
          .prepare<[number, string], { timestamp: string }>(
            'select timestamp from messages where seq = ? and conversation_id = ?',
          )
          .get(seq, conversationId)?.timestamp,
      newer: async (ts, seq, limit) =>
        this.db
          .prepare<unknown[], TurnSqlRow>(
            `${this.turnSelect()} where m.conversation_id = @c
               and (m.timestamp, m.seq) > (@ts, @seq)
             order by m.timestamp, m.seq limit @limit`,
          )
          .all({ c: conversationId, ts, seq, limit }),
      older: async (before, limit) => {
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
            limit,
          });
      },
    };
    return turnPage(page, reads, this.extras());
  }

  /** The highest `seq` stored: SQLite commits one writer at a time, in `seq` order. */
  async liveCursor(): Promise<string> {
    const row = this.db
      .prepare<[], { seq: number | null }>('select max(seq) as seq from messages')
      .get();
    return String(row?.seq ?? 0);
  }

  async turnsAfter(cursor: string, limit: number, conversationId?: string) {
    const after = /^\d+$/.test(cursor) ? Number(cursor) : Number(await this.liveCursor());
    // `+m.conversation_id`: read the rowid range after the cursor (a few new rows), never the
    // conversation's whole index.
    const rows = this.db
      .prepare<unknown[], TurnSqlRow>(
        `${this.turnSelect()} where m.seq > @after
           and (@c is null or +m.conversation_id = @c)
         order by m.seq limit @limit`,
      )
      .all({ after, limit, c: conversationId ?? null });
    const last = rows.at(-1);
    return {
      turns: await turnsOf(rows, this.extras()),
      cursor: last === undefined ? String(after) : String(last.seq),
    };
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
    const inbound = this.db
      .prepare<[string], TurnSqlRow>(`${this.turnSelect()} where m.id = ?`)
      .all(row.message_id);
    return runDetail(row, inbound, this.extras());
  }

  async agentAliases(agentId: string): Promise<string[]> {
    const learned = this.db
      .prepare<{ agent: string }, { id: string }>(
        `with ${learnedAliases('= @agent')} select id from learned`,
      )
      .all({ agent: agentId })
      .map((row) => row.id);
    return [...new Set([agentId, ...learned])];
  }

  async unanswered(limit: number): Promise<Turn[]> {
    const runs = this.shape().runs;
    const ours = `select id from participants where kind = 'agent' and instr(id, ':') = 0`;
    // A run's id starts with its inbound turn's id: a range of the primary key.
    const answered = `exists (select 1 from agent_runs ar where ar.id > m.id || ':'
      and ar.id < m.id || ';' and ar.message_id = m.id and ar.status = 'answered')`;
    const sql = unansweredSql(
      {
        ours: runs ? `${ours} union select agent_id from agent_runs` : ours,
        notSummary: 'm.is_summary = 0',
        answered: runs ? answered : '',
      },
      (column) => this.optional(column),
    );
    const rows = this.db
      .prepare<unknown[], TurnSqlRow>(sql)
      .all({ limit, window: UNANSWERED_WINDOW });
    return turnsOf(rows, this.extras());
  }

  async overview(days: number): Promise<Overview> {
    const { days: dayList, since } = overviewDays(
      this.db
        .prepare<[], { t: string | null }>('select max(last_message_at) as t from conversations')
        .get()?.t,
      days,
    );
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
    let rows = this.db
      .prepare<[number], ParticipantSqlRow>(
        `select id, kind, display_name, last_seen_at, 0 as messages
         from participants order by last_seen_at desc, id limit ?`,
      )
      .all(limit);
    if (options.counts && rows.length > 0) {
      // One pass over the turns: no index leads with participant_id.
      const counts = this.db
        .prepare<string[], { id: string; n: number }>(
          `select participant_id as id, count(*) as n from messages
           where participant_id in (${rows.map(() => '?').join(',')}) group by participant_id`,
        )
        .all(...rows.map((row) => row.id));
      rows = withTurnCounts(rows, counts);
    }
    return rows.map(participantRow);
  }

  async participant(id: string): Promise<ParticipantDetail | undefined> {
    const row = this.db
      .prepare<{ id: string }, ParticipantSqlDetail>(participantSql('s.is_summary = 1', THEIRS))
      .get({ id });
    return row === undefined ? undefined : participantDetail(row);
  }

  forget(participantId: string): Promise<number> {
    const open = () => new SqliteConversationStore({ path: this.path });
    return forgetThrough(this.writable, open, participantId);
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  private turnSelect(): string {
    return turnSelect((column) => this.optional(column));
  }

  /** What a page of turns needs besides the turns: revisions, and runs when the file has them. */
  private extras(): TurnExtras {
    const revisions = async (seqs: number[]) =>
      this.db
        .prepare<number[], RevisionSqlRow>(
          `select message_seq, content, replaced_at from message_revisions
           where message_seq in (${seqs.map(() => '?').join(',')}) order by id`,
        )
        .all(...seqs);
    if (!this.shape().runs) return { revisions };
    return { revisions, runs: async (column, ids) => this.runsWhere(column, ids) };
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
