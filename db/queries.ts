import type { GetOptions } from '../src/store.js';

/**
 * A statement text and its named parameters (better-sqlite3 `@name` binding).
 *
 * @example
 * ```ts
 * const { sql, params }: BuiltQuery = buildGetQuery('telegram:42', { limit: 20 }, SQLITE_DIALECT);
 * ```
 */
export interface BuiltQuery {
  sql: string;
  params: Record<string, string | number>;
}

/**
 * What differs between the SQL dialects in `buildGetQuery`: the selected columns (in
 * `MESSAGE_COLUMN_NAMES` order) and how a summary is told apart.
 */
export interface GetDialect {
  columns: string;
  notSummary: string;
  /**
   * Whether `concerning` reads a DM's turns from `messages_dm_time_idx`. Without that index
   * (SQLite), the store asks for a DM's turns without `concerning`: all of them concern it.
   */
  dmIndex: boolean;
  /**
   * The branches that read the turns `@<alias>` wrote in `@conversation`, each newest first;
   * `where` is the filters every branch ends with.
   */
  wrote(alias: string, where: string): string[];
}

/**
 * `LIMIT @limit` for statements prepared once and run many times. SQLite's planner reads the
 * value bound to a bare `LIMIT @limit`, so binding it again re-prepares the statement at every
 * call; cast, the limit is an expression the statement evaluates, and the statement stays
 * prepared. Postgres takes either.
 */
export const LIMIT = 'LIMIT CAST(@limit AS INTEGER)';

/**
 * Past this many authors or aliases, `buildGetQuery` filters one newest-first read of the
 * conversation instead of merging branches per id: SQLite takes at most 500 terms in a
 * compound SELECT.
 */
const MOST_BRANCHED_IDS = 32;

/**
 * The SQL of `store.get`. Without `concerning` or `participantIds` it walks
 * `messages_conversation_time_idx` backwards. With `participantIds` alone it merges the
 * dialect's `wrote` branches, one author at a time. With `concerning` it merges index ranges
 * read newest first, stopping after `limit` turns, so its cost does not grow with the
 * conversation:
 *
 * - per alias: turns it wrote (the dialect's `wrote`), turns replying to it
 *   (`messages_conversation_reply_to_idx`), turns mentioning it (`message_mentions_time_idx`);
 * - turns in a DM (`messages_dm_time_idx`, a partial index), where the dialect has it.
 *
 * The statement text depends only on which options are set and how many ids they hold, so
 * callers can cache prepared statements by it.
 *
 * @example
 * ```ts
 * const { sql, params } = buildGetQuery('telegram:42', { concerning: { aliases: ['bot'] } }, SQLITE_DIALECT);
 * db.prepare(sql).all(params);
 * ```
 */
export function buildGetQuery(
  conversationId: string,
  options: GetOptions,
  dialect: GetDialect,
): BuiltQuery {
  const params: Record<string, string | number> = {
    conversation: conversationId,
    limit: Math.max(0, Math.floor(options.limit ?? 100)),
  };
  const filters: string[] = [];
  if (options.scope !== undefined) {
    filters.push('m.scope = @scope');
    params.scope = options.scope;
  }
  if (options.sinceTimestamp !== undefined) {
    filters.push('m.timestamp >= @since');
    params.since = options.sinceTimestamp;
  }
  if (options.before !== undefined) {
    filters.push('m.timestamp < @before');
    params.before = options.before;
  }
  // Asked for by a few authors alone, the turns are read author by author (the dialect's
  // `wrote`); beside `concerning`, or for many authors, the authors filter the read.
  const few = (ids: readonly string[]) => ids.length <= MOST_BRANCHED_IDS;
  const { participantIds, concerning: asked } = options;
  const authors =
    asked === undefined && participantIds && few(participantIds) ? participantIds : undefined;
  if (participantIds !== undefined && authors === undefined) {
    filters.push(`m.participant_id IN (${bind(params, 'p', participantIds)})`);
  }
  const concerning = asked && few(asked.aliases) ? asked : undefined;
  if (asked !== undefined && concerning === undefined) {
    // The rule of `concerns()`, for an agent known by many aliases.
    const ids = bind(params, 'a', asked.aliases);
    filters.push(`(m.scope = 'dm' OR m.participant_id IN (${ids})
      OR m.reply_to_participant_id IN (${ids}) OR EXISTS (SELECT 1 FROM message_mentions mm
        WHERE mm.message_seq = m.seq AND mm.participant_id IN (${ids})))`);
  }
  if (options.replyTo !== undefined) {
    // Read from `messages_conversation_reply_to_idx`: the replies to that participant.
    filters.push('m.reply_to_participant_id = @replyToParticipant');
    filters.push('m.reply_to_message_id = @replyToMessage');
    params.replyToParticipant = options.replyTo.participantId;
    params.replyToMessage = options.replyTo.messageId;
  }
  if (options.includeSummaries !== true) filters.push(dialect.notSummary);
  if (options.includeDeleted !== true) filters.push('m.deleted_at IS NULL');
  const where = filters.map((f) => ` AND ${f}`).join('');
  const newestFirst = `ORDER BY m.timestamp DESC, m.seq DESC ${LIMIT}`;

  if (concerning === undefined && authors === undefined) {
    return {
      sql: `SELECT ${dialect.columns} FROM messages m JOIN participants p ON p.id = m.participant_id
        WHERE m.conversation_id = @conversation${where} ${newestFirst}`,
      params,
    };
  }

  // Each branch reads an index in (timestamp, seq) order; a compound SELECT with ORDER BY
  // merges them (SQLite's merge of co-routines, no temp B-tree) and stops after `limit`
  // rows, so it reads about `limit` turns however many each branch could return. UNION
  // drops a turn found by two branches.
  const branches: string[] = [];
  authors?.forEach((author, i) => {
    params[`p${i}`] = author;
    branches.push(...dialect.wrote(`p${i}`, where));
  });
  if (dialect.dmIndex && concerning !== undefined) {
    branches.push(`SELECT m.seq, m.timestamp FROM messages m
      WHERE m.conversation_id = @conversation AND m.scope = 'dm'${where}`);
  }
  concerning?.aliases.forEach((alias, i) => {
    params[`a${i}`] = alias;
    branches.push(
      ...dialect.wrote(`a${i}`, where),
      `SELECT m.seq, m.timestamp FROM messages m
        WHERE m.conversation_id = @conversation AND m.reply_to_participant_id = @a${i}${where}`,
      `SELECT mm.message_seq, mm.timestamp FROM message_mentions mm
        JOIN messages m ON m.seq = mm.message_seq
        WHERE mm.conversation_id = @conversation AND mm.participant_id = @a${i}${where}`,
    );
  });
  // No author, alias or DM branch: no turn is wanted.
  if (branches.length === 0) branches.push('SELECT m.seq, m.timestamp FROM messages m WHERE 1 = 0');
  return {
    sql: `WITH top(seq, ts) AS MATERIALIZED (${branches.join('\nUNION ')}
        ORDER BY 2 DESC, 1 DESC ${LIMIT})
      SELECT ${dialect.columns} FROM top h
      JOIN messages m ON m.seq = h.seq JOIN participants p ON p.id = m.participant_id
      ORDER BY h.ts DESC, h.seq DESC`,
    params,
  };
}

function bind(params: Record<string, string | number>, prefix: string, values: string[]): string {
  if (values.length === 0) return 'NULL';
  return values
    .map((value, i) => {
      params[`${prefix}${i}`] = value;
      return `@${prefix}${i}`;
    })
    .join(', ');
}
