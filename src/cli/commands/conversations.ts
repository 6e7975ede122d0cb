import type { Command } from 'commander';
import { openSql } from '../database.js';
import { dbPathOf, print } from '../context.js';
import { formatJson, formatTable } from '../format.js';
import { positiveInteger } from '../parse.js';

interface ConversationsOptions {
  channelType?: string;
  participant?: string;
  limit: number;
  json?: boolean;
}

const COLUMNS = ['id', 'channel', 'scope', 'name', 'messages', 'participants', 'first', 'last'];

const QUERY = `
select c.id, c.channel_type, c.scope, c.channel_name, c.message_count,
  (select count(distinct m.participant_id) from messages m where m.conversation_id = c.id),
  c.created_at, c.last_message_at
from conversations c
where (@channelType is null or c.channel_type = @channelType)
  and (@participant is null or exists (
    select 1 from messages m where m.conversation_id = c.id and m.participant_id = @participant))
order by c.last_message_at desc, c.id
limit @limit`;

/** `colloquy conversations`: conversations with their counts, newest activity first. */
export function registerConversations(program: Command): void {
  program
    .command('conversations')
    .description('list conversations, newest activity first, with message and participant counts')
    .option('--channel-type <type>', 'only this platform (slack, discord, telegram, console, …)')
    .option('--participant <id>', 'only conversations this participant wrote in')
    .option('--limit <n>', 'most conversations to list', positiveInteger, 50)
    .option('--json', 'print a JSON array')
    .addHelpText(
      'after',
      `
Examples:
  $ colloquy conversations --channel-type slack --limit 10
  $ colloquy conversations --participant telegram:1001 --json`,
    )
    .action(async (options: ConversationsOptions, command: Command) => {
      const db = await openSql(dbPathOf(command));
      try {
        const rows = db
          .prepare(QUERY)
          .raw(true)
          .all({
            channelType: options.channelType ?? null,
            participant: options.participant ?? null,
            limit: options.limit,
          }) as unknown[][];
        if (options.json) return print(formatJson({ columns: JSON_COLUMNS, rows }));
        if (rows.length === 0) return print(emptyAnswer(options));
        print(formatTable({ columns: COLUMNS, rows }, { nullText: '' }));
      } finally {
        db.close();
      }
    });
}

const JSON_COLUMNS = [
  'id',
  'channelType',
  'scope',
  'channelName',
  'messageCount',
  'participantCount',
  'firstMessageAt',
  'lastMessageAt',
];

function emptyAnswer(options: ConversationsOptions): string {
  if (options.channelType === undefined && options.participant === undefined) {
    return 'no conversations yet';
  }
  return 'no conversations match';
}
