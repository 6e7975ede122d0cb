import type { Command } from 'commander';
import { openDb } from '../database.js';
import { dbPathOf, print } from '../context.js';
import { formatJson, formatTable } from '../format.js';
import { nonNegativeInteger, positiveInteger } from '../parse.js';

interface ConversationsOptions {
  channelType?: string;
  participant?: string;
  agent?: string;
  limit: number;
  offset: number;
  json?: boolean;
}

const COLUMNS = [
  'id',
  'channel',
  'scope',
  'name',
  'title',
  'messages',
  'participants',
  'first',
  'last',
];

const QUERY = `
select c.id, c.channel_type, c.scope, c.channel_name, c.title, c.message_count,
  (select count(distinct m.participant_id) from messages m where m.conversation_id = c.id),
  c.created_at, c.last_message_at
from conversations c
where (cast(@channelType as text) is null or c.channel_type = @channelType)
  and (cast(@participant as text) is null or exists (
    select 1 from messages m where m.conversation_id = c.id and m.participant_id = @participant))
  and (cast(@agent as text) is null or exists (
    select 1 from messages m join participants p on p.id = m.participant_id
    where m.conversation_id = c.id and m.participant_id = @agent and p.kind = 'agent'))
order by c.last_message_at desc, c.id desc
limit @limit offset @offset`;

/** `colloquy conversations`: conversations with their counts, newest activity first. */
export function registerConversations(program: Command): void {
  program
    .command('conversations')
    .description('list conversations, newest activity first, with message and participant counts')
    .option('--channel-type <type>', 'only this platform (slack, discord, telegram, console, …)')
    .option('--participant <id>', 'only conversations this participant wrote in')
    .option('--agent <id>', 'only conversations this agent took part in')
    .option('--limit <n>', 'most conversations to list', positiveInteger, 50)
    .option('--offset <n>', 'skip this many first (the next page)', nonNegativeInteger, 0)
    .option('--json', 'print a JSON array')
    .addHelpText(
      'after',
      `
Examples:
  $ colloquy conversations --channel-type slack --limit 10
  $ colloquy conversations --participant telegram:1001 --json
  $ colloquy conversations --agent support-agent --limit 20 --offset 20`,
    )
    .action(async (options: ConversationsOptions, command: Command) => {
      const db = await openDb(dbPathOf(command));
      try {
        const rows = await db.raw(QUERY, {
          channelType: options.channelType ?? null,
          participant: options.participant ?? null,
          agent: options.agent ?? null,
          limit: options.limit,
          offset: options.offset,
        });
        if (options.json) return print(formatJson({ columns: JSON_COLUMNS, rows }));
        if (rows.length === 0) return print(emptyAnswer(options));
        print(formatTable({ columns: COLUMNS, rows }, { nullText: '' }));
      } finally {
        await db.close();
      }
    });
}

const JSON_COLUMNS = [
  'id',
  'channelType',
  'scope',
  'channelName',
  'title',
  'messageCount',
  'participantCount',
  'firstMessageAt',
  'lastMessageAt',
];

function emptyAnswer(options: ConversationsOptions): string {
  const filtered = [options.channelType, options.participant, options.agent].some(
    (value) => value !== undefined,
  );
  if (!filtered && options.offset === 0) {
    return 'no conversations yet';
  }
  return 'no conversations match';
}
