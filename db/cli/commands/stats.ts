import { statSync } from 'node:fs';
import type { Command } from 'commander';
import { type CliDb, openDb } from '../database.js';
import { dbPathOf, print } from '../context.js';
import { formatBytes } from '../../../src/attachments.js';
import { formatCount, formatTable } from '../format.js';

interface StatsOptions {
  json?: boolean;
}

/** Everything `colloquy stats` reports. */
export interface Stats {
  database: { path: string; bytes: number };
  messages: number;
  summaries: number;
  deleted: number;
  conversations: number;
  participants: number;
  firstMessageAt: string | null;
  lastMessageAt: string | null;
  byChannelType: { channelType: string; conversations: number; messages: number }[];
  byParticipantKind: { kind: string; participants: number; messages: number }[];
  busiestConversations: { id: string; messages: number; lastMessageAt: string }[];
}

/** `colloquy stats`: counts, time range, file size and the busiest conversations. */
export function registerStats(program: Command): void {
  program
    .command('stats')
    .description(
      'counts per platform and participant kind, time range, file size, busiest conversations',
    )
    .option('--json', 'print one JSON object')
    .addHelpText('after', '\nExample:\n  $ colloquy --db /var/lib/bot/colloquy.db stats')
    .action(async (options: StatsOptions, command: Command) => {
      const path = dbPathOf(command);
      const db = await openDb(path);
      try {
        const stats = await collectStats(db);
        print(options.json ? JSON.stringify(stats, null, 2) : renderStats(stats));
      } finally {
        await db.close();
      }
    });
}

async function collectStats(db: CliDb): Promise<Stats> {
  const one = async <T>(sql: string) => (await db.all<T>(sql))[0] as T;
  const all = <T>(sql: string) => db.all<T>(sql);
  const totals = await one<{
    messages: number;
    summaries: number;
    deleted: number;
    first: string | null;
    last: string | null;
  }>(
    `select count(*) filter (where not is_summary) as messages,
       count(*) filter (where is_summary) as summaries,
       count(*) filter (where deleted_at is not null) as deleted,
       min(timestamp) filter (where not is_summary) as first,
       max(timestamp) filter (where not is_summary) as last
     from messages`,
  );
  const bytes =
    db.dialect === 'postgres'
      ? (await one<{ n: number }>('select pg_database_size(current_database()) as n')).n
      : fileBytes(db.where);
  return {
    database: { path: db.where, bytes },
    messages: totals.messages,
    summaries: totals.summaries,
    deleted: totals.deleted,
    conversations: (await one<{ n: number }>('select count(*) as n from conversations')).n,
    participants: (await one<{ n: number }>('select count(*) as n from participants')).n,
    firstMessageAt: totals.first,
    lastMessageAt: totals.last,
    byChannelType: await all(
      `select c.channel_type as "channelType", count(*) as conversations,
         (select count(*) from messages m
           where m.channel_type = c.channel_type and not m.is_summary) as messages
       from conversations c group by c.channel_type order by messages desc, "channelType"`,
    ),
    byParticipantKind: await all(
      `select p.kind as kind, count(*) as participants,
         (select count(*) from messages m join participants q on q.id = m.participant_id
           where q.kind = p.kind and not m.is_summary) as messages
       from participants p group by p.kind order by messages desc, kind`,
    ),
    busiestConversations: await all(
      `select id, message_count as messages, last_message_at as "lastMessageAt"
       from conversations order by message_count desc, last_message_at desc limit 5`,
    ),
  };
}

/** The database file plus its write-ahead log, which holds not yet checkpointed pages. */
function fileBytes(path: string): number {
  const size = (p: string) => {
    try {
      return statSync(p).size;
    } catch {
      return 0;
    }
  };
  return size(path) + size(`${path}-wal`);
}

function renderStats(stats: Stats): string {
  const summary = [
    ['database', `${stats.database.path} (${formatBytes(stats.database.bytes)})`],
    ['messages', messagesLine(stats)],
    ['conversations', formatCount(stats.conversations)],
    ['participants', formatCount(stats.participants)],
    ['first message', stats.firstMessageAt ?? '—'],
    ['last message', stats.lastMessageAt ?? '—'],
  ];
  const width = Math.max(...summary.map(([label]) => (label ?? '').length));
  const head = summary.map(([label, value]) => `${(label ?? '').padEnd(width)}  ${value}`);
  if (stats.conversations === 0) return `${head.join('\n')}\n\nno conversations yet`;
  const section = (title: string, columns: string[], rows: unknown[][]) =>
    `\n${title}\n${formatTable({ columns, rows }, { footer: false }).trimEnd()}`;
  return [
    head.join('\n'),
    section(
      'by channel type',
      ['channel', 'conversations', 'messages'],
      stats.byChannelType.map((r) => [r.channelType, r.conversations, r.messages]),
    ),
    section(
      'by participant kind',
      ['kind', 'participants', 'messages'],
      stats.byParticipantKind.map((r) => [r.kind, r.participants, r.messages]),
    ),
    section(
      'busiest conversations',
      ['conversation', 'messages', 'last message'],
      stats.busiestConversations.map((r) => [r.id, r.messages, r.lastMessageAt]),
    ),
  ].join('\n');
}

function messagesLine(stats: Stats): string {
  const extras = [
    stats.deleted > 0 ? `${formatCount(stats.deleted)} deleted` : '',
    stats.summaries > 0 ? `plus ${formatCount(stats.summaries)} summaries` : '',
  ].filter(Boolean);
  const count = formatCount(stats.messages);
  return extras.length === 0 ? count : `${count} (${extras.join(', ')})`;
}
