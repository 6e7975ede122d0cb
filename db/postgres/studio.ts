import type pg from 'pg';
import type { RunSqlRow } from '../runs.js';
import { queryWords } from '../search.js';
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
import { positional } from './statements.js';
import { type AuthorSqlRow, type LastTurnSqlRow, conversationPeople } from '../studio/people.js';
import { PostgresConversationStore } from './store.js';

/**
 * `colloquy studio`'s reads on a Postgres database, through a read-only store (its pool runs
 * every transaction read-only). The same pages as on SQLite; search ranks with `ts_rank` on
 * the store's search column. Ids are compared and ordered byte-wise (`COLLATE "C"`), as
 * SQLite does.
 *
 * @example
 * ```ts
 * const source = await PostgresStudioSource.open('postgres://postgres@127.0.0.1/colloquy');
 * const { items } = await source.conversations({ limit: 20 });
 * await source.close();
 * ```
 */
export class PostgresStudioSource implements StudioSource {
  private readonly pool: pg.Pool;

  private constructor(
    readonly store: PostgresConversationStore,
    private readonly url: string,
    readonly writable: boolean,
  ) {
    this.pool = store.pool;
  }

  /**
   * Opens a source on a database colloquy has migrated; `write` enables `forget` (through a
   * store of its own). A database without the current schema is a StoreError here.
   */
  static async open(url: string, options: { write?: boolean } = {}): Promise<PostgresStudioSource> {
    const store = await PostgresConversationStore.open({
      connectionString: url,
      readonly: true,
      max: 4,
    });
    return new PostgresStudioSource(store, url, options.write === true);
  }

  async conversations(query: ConversationQuery) {
    const rows = await this.all<ConversationSqlRow>(
      `${CONVERSATION_SELECT}
       where (@platform::text is null or c.channel_type = @platform)
         and (@participant::text is null or exists (select 1 from messages m
              where m.conversation_id = c.id and m.participant_id = @participant))
         and (@afterTime::timestamptz is null
              or (c.last_message_at, c.id collate "C") < (@afterTime, @afterId::text))
       order by c.last_message_at desc, c.id collate "C" desc
       limit @limit`,
      conversationParams(query),
    );
    return conversationPage(rows, query.limit, (ids) => this.people(ids));
  }

  /** Who wrote in each conversation (from its turns) and its newest turn people saw. */
  private async people(ids: string[]) {
    const [authors, lastTurns] = await Promise.all([
      this.all<AuthorSqlRow>(
        `select a.conversation_id, a.participant_id, p.kind, p.display_name
         from (select distinct conversation_id, participant_id from messages
           where conversation_id = any(@ids::text[])) a
         join participants p on p.id = a.participant_id`,
        { ids },
      ),
      this.all<LastTurnSqlRow>(
        `select c.id as conversation_id, coalesce(p.display_name, m.participant_id) as speaker,
           m.content, m.deleted_at is not null as deleted
         from unnest(@ids::text[]) c(id)
         cross join lateral (select x.participant_id, x.content, x.deleted_at from messages x
           where x.conversation_id = c.id and not x.is_summary
             and x.metadata ->> 'toolRole' is null
           order by x.timestamp desc, x.seq desc limit 1) m
         left join participants p on p.id = m.participant_id`,
        { ids },
      ),
    ]);
    return conversationPeople(authors, lastTurns);
  }

  async platforms(): Promise<string[]> {
    const rows = await this.all<{ t: string }>(
      'select distinct channel_type collate "C" as t from conversations order by t',
    );
    return rows.map((row) => row.t);
  }

  /** Every word must match, each as plain text (as the store's search does), best first. */
  async search(query: string, limit: number): Promise<SearchHit[]> {
    const words = queryWords(query);
    if (words.length === 0) return [];
    const params: Record<string, unknown> = { limit };
    const each = words.map(({ word }, i) => {
      params[`w${i}`] = word;
      params[`d${i}`] = word.normalize('NFD');
      return `(phraseto_tsquery('colloquy', @w${i}::text) || phraseto_tsquery('colloquy', @d${i}::text))`;
    });
    return this.all<SearchHit>(
      `with q as (select ${each.join(' && ')} as query)
       select m.seq, m.conversation_id as "conversationId",
         coalesce(c.channel_name, c.id) as "conversationName", c.channel_type as platform,
         coalesce(p.display_name, p.id) as "speakerName", m.timestamp, m.content
       from q, messages m
       join conversations c on c.id = m.conversation_id
       join participants p on p.id = m.participant_id
       where m.search @@ q.query and m.deleted_at is null and not m.is_summary
       order by ts_rank(m.search, q.query) desc, m.seq desc
       limit @limit`,
      params,
    );
  }

  async conversation(id: string): Promise<ConversationDetail | undefined> {
    const [row] = await this.all<ConversationSqlRow>(`${CONVERSATION_SELECT} where c.id = @id`, {
      id,
    });
    if (row === undefined) return undefined;
    const place = { type: row.channel_type, channel: row.channel_id };
    const [parent] =
      row.thread_id === null
        ? []
        : await this.all<{ id: string }>(
            `select id from conversations where channel_type = @type and channel_id = @channel
               and thread_id is null limit 1`,
            place,
          );
    const threads =
      row.thread_id !== null
        ? []
        : await this.all<ConversationDetail['threads'][number]>(
            `select id, thread_id as "rootMessageId", message_count as "messageCount"
             from conversations where channel_type = @type and channel_id = @channel
               and thread_id is not null`,
            place,
          );
    return conversationDetail(row, parent, threads, (await this.people([id])).get(id));
  }

  async turns(conversationId: string, page: TurnPage) {
    const c = conversationId;
    const reads: TurnReads = {
      timeOf: async (seq) =>
        (
          await this.all<{ timestamp: string }>(
            'select timestamp from messages where seq = @seq and conversation_id = @c',
            { seq, c },
          )
        )[0]?.timestamp,
      newer: (ts, seq, limit) =>
        this.all<TurnSqlRow>(
          `${TURN_SELECT} where m.conversation_id = @c
             and (m.timestamp, m.seq) > (@ts::timestamptz, @seq::bigint)
           order by m.timestamp, m.seq limit @limit`,
          { c, ts, seq, limit },
        ),
      older: (before, limit) => {
        const [ts, seq] = splitCursor(before);
        return this.all<TurnSqlRow>(
          `${TURN_SELECT} where m.conversation_id = @c
             and (@ts::timestamptz is null or (m.timestamp, m.seq) < (@ts, @seq::bigint))
           order by m.timestamp desc, m.seq desc limit @limit`,
          { c, ts: ts ?? null, seq: seq ?? null, limit },
        );
      },
    };
    return turnPage(page, reads, this.extras());
  }

  /**
   * `txid:seq`: every turn written by a transaction below `txid`, or by `txid` up to `seq`,
   * has been read. Transactions below the oldest one still open are all finished, so a turn
   * that commits late (with a lower `seq` than one already read) is still ahead of it.
   * Transaction ids are the server's: one open in any of its databases holds the feed back
   * until it ends.
   */
  async liveCursor(): Promise<string> {
    const [row] = await this.all<{ xmin: string }>(
      'select pg_snapshot_xmin(pg_current_snapshot())::text as xmin',
    );
    return `${row!.xmin}:0`;
  }

  async turnsAfter(cursor: string, limit: number, conversationId?: string) {
    const [txid, seq] = /^\d+:\d+$/.test(cursor)
      ? cursor.split(':')
      : (await this.liveCursor()).split(':');
    const rows = await this.all<TurnSqlRow & { txid: string }>(
      `${turnSelect(undefined, ['m.txid::text as txid'])}
       where (m.txid, m.seq) > (@txid::xid8, @seq::bigint)
         and m.txid < pg_snapshot_xmin(pg_current_snapshot())
         and (@c::text is null or m.conversation_id = @c)
       order by m.txid, m.seq limit @limit`,
      { txid, seq, c: conversationId ?? null, limit },
    );
    const last = rows.at(-1);
    return {
      turns: await turnsOf(rows, this.extras()),
      cursor: last === undefined ? `${txid}:${seq}` : `${last.txid}:${last.seq}`,
    };
  }

  async runs(query: RunQuery): Promise<RunRow[] | undefined> {
    const rows = await this.all<RunSqlRow>(
      `select * from agent_runs
       where (@agent::text is null or agent_id = @agent) and (@status::text is null or status = @status)
       order by created_at desc, id collate "C" desc limit @limit`,
      { agent: query.agent ?? null, status: query.status ?? null, limit: query.limit },
    );
    return rows.map(runRow);
  }

  async run(id: string): Promise<RunDetail | undefined> {
    const [row] = await this.all<RunSqlRow>('select * from agent_runs where id = @id', { id });
    if (row === undefined) return undefined;
    const inbound = await this.all<TurnSqlRow>(`${TURN_SELECT} where m.id = @id`, {
      id: row.message_id,
    });
    return runDetail(row, inbound, this.extras());
  }

  async agentAliases(agentId: string): Promise<string[]> {
    const learned = await this.all<{ id: string }>(
      `with ${learnedAliases('= @agent')} select id from learned`,
      { agent: agentId },
    );
    return [...new Set([agentId, ...learned.map((row) => row.id)])];
  }

  async unanswered(limit: number): Promise<Turn[]> {
    const sql = unansweredSql({
      ours: `select id from participants where kind = 'agent' and strpos(id, ':') = 0
        union select agent_id from agent_runs`,
      notSummary: 'not m.is_summary',
      answered: `exists (select 1 from agent_runs ar
        where ar.message_id = m.id and ar.status = 'answered')`,
    });
    const rows = await this.all<TurnSqlRow>(sql, { limit, window: UNANSWERED_WINDOW });
    return turnsOf(rows, this.extras());
  }

  async overview(days: number): Promise<Overview> {
    const [latest] = await this.all<{ t: string | null }>(
      'select max(last_message_at) as t from conversations',
    );
    const { days: dayList, since } = overviewDays(latest?.t, days);
    // The session runs in UTC, so a day is a UTC day, as the ISO strings in SQLite are.
    const turnsPerDay = await this.all<{ day: string; platform: string; turns: number }>(
      `select to_char(timestamp, 'YYYY-MM-DD') as day, channel_type as platform,
         count(*) as turns
       from messages where not is_summary and timestamp >= @since::timestamptz
       group by 1, 2 order by 1, channel_type collate "C"`,
      { since },
    );
    const [totals] = await this.all<Overview['totals']>(
      `select (select count(*) from conversations) as conversations,
         (select count(*) from messages where not is_summary) as turns,
         (select count(*) from participants) as participants`,
    );
    const runsPerAgent = await this.all<{
      agentId: string;
      answered: number;
      failed: number;
      other: number;
    }>(
      `select agent_id as "agentId",
         count(*) filter (where status = 'answered') as answered,
         count(*) filter (where status in ('failed', 'expired', 'unconfirmed')) as failed,
         count(*) filter (where status not in ('answered', 'failed', 'expired', 'unconfirmed'))
           as other
       from agent_runs group by agent_id order by agent_id collate "C"`,
    );
    const tokensPerDay = await this.all<{ day: string; agentId: string; tokens: number }>(
      `select to_char(created_at, 'YYYY-MM-DD') as day, agent_id as "agentId",
         coalesce(sum(input_tokens), 0) + coalesce(sum(output_tokens), 0) as tokens
       from agent_runs where created_at >= @since::timestamptz
       group by 1, 2 order by 1, agent_id collate "C"`,
      { since },
    );
    return {
      days: dayList,
      turnsPerDay,
      totals: totals ?? { conversations: 0, turns: 0, participants: 0 },
      runsPerAgent,
      tokensPerDay,
    };
  }

  async participants(limit: number, options: { counts?: boolean } = {}): Promise<ParticipantRow[]> {
    let rows = await this.all<ParticipantSqlRow>(
      `select id, kind, display_name, last_seen_at, 0 as messages
       from participants order by last_seen_at desc, id collate "C" limit @limit`,
      { limit },
    );
    if (options.counts && rows.length > 0) {
      const counts = await this.all<{ id: string; n: number }>(
        `select participant_id as id, count(*) as n from messages
         where participant_id = any(@ids::text[]) group by participant_id`,
        { ids: rows.map((row) => row.id) },
      );
      rows = withTurnCounts(rows, counts);
    }
    return rows.map(participantRow);
  }

  async participant(id: string): Promise<ParticipantDetail | undefined> {
    const [row] = await this.all<ParticipantSqlDetail>(participantSql('s.is_summary'), { id });
    return row === undefined ? undefined : participantDetail(row);
  }

  forget(participantId: string): Promise<number> {
    const open = () => PostgresConversationStore.open({ connectionString: this.url, max: 2 });
    return forgetThrough(this.writable, open, participantId);
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  /** What a page of turns needs besides the turns: revisions and runs. */
  private extras(): TurnExtras {
    return {
      revisions: (seqs) =>
        this.all<RevisionSqlRow>(
          `select message_seq, content, replaced_at from message_revisions
           where message_seq = any(@seqs::bigint[]) order by id`,
          { seqs },
        ),
      runs: (column, ids) =>
        this.all<RunSqlRow>(`select * from agent_runs where ${column} = any(@ids::text[])`, {
          ids,
        }),
    };
  }

  /** Runs `sql`, written with `@name` parameters, and answers its rows. */
  private async all<T>(sql: string, params: Record<string, unknown> = {}): Promise<T[]> {
    const { text, values } = positional(sql, params);
    return (await this.pool.query(text, values)).rows as T[];
  }
}

const CONVERSATION_SELECT = `select c.id, c.channel_type, c.channel_id, c.channel_name,
    c.thread_id, c.scope, c.message_count, c.created_at, c.last_message_at, c.title
  from conversations c`;

const TURN_SELECT = turnSelect();
