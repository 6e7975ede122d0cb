import type { Command } from 'commander';
import { queryWords } from '../../search.js';
import { openStudioSource } from '../database.js';
import { CliError, UsageError } from '../errors.js';
import { dbPathOf, note, print } from '../context.js';
import { positiveInteger } from '../parse.js';
import { type Hit, formatHit } from '../hits.js';

interface SearchOptions {
  conversation?: string;
  limit: number;
}

/** What FTS5 would read as syntax; the search takes it as text, and says so. */
const OPERATORS = /["*^()]|(^|\s)[-+]|\b(AND|OR|NOT|NEAR)\b/;

/**
 * `colloquy search <words>`: turns that hold the words, best first, one per line, the words
 * highlighted on a terminal. In one conversation (`--conversation`) it is the store's own
 * search (any of the words, BM25 over the conversation, as agents' `conversation_search`
 * sees it); across every conversation, the turns holding every word, ranked by the
 * database's full-text rank.
 */
export function registerSearch(program: Command): void {
  program
    .command('search')
    .description('find turns by their words, best first (every conversation, or one)')
    .argument('<words...>', 'plain words; quotes, *, - and AND/OR/NOT are searched as text')
    .option('-c, --conversation <id>', 'only this conversation (any of the words)')
    .option('-n, --limit <count>', 'most turns to print', positiveInteger, 20)
    .addHelpText(
      'after',
      `
Words are highlighted when the output is a terminal (not with NO_COLOR set).

Examples:
  $ colloquy search refund
  $ colloquy search order 1234 --conversation telegram:5551002
  $ colloquy search "late delivery" --limit 5`,
    )
    .action(async (words: string[], options: SearchOptions, command: Command) => {
      const query = words.join(' ');
      if (queryWords(query).length === 0) {
        throw new UsageError(
          `nothing to search for in ${JSON.stringify(query)}: give at least one word of letters or digits`,
        );
      }
      if (OPERATORS.test(query)) {
        note('note: quotes, *, -, parentheses and AND/OR/NOT/NEAR are searched as plain text');
      }
      const { source } = await openStudioSource(dbPathOf(command));
      try {
        const hits = await find(source, query, options);
        const color = process.stdout.isTTY === true && !noColor(process.env);
        for (const hit of hits) print(formatHit(hit, query, { color }));
        if (hits.length === 0) note(`no turns found for ${JSON.stringify(query)}`);
      } finally {
        await source.close();
      }
    });
}

async function find(
  source: Awaited<ReturnType<typeof openStudioSource>>['source'],
  query: string,
  options: SearchOptions,
): Promise<Hit[]> {
  const id = options.conversation;
  if (id === undefined) return source.search(query, options.limit);
  if ((await source.conversation(id)) === undefined) {
    throw new CliError(`no conversation ${id} (list them with: colloquy conversations)`);
  }
  const found = await source.store.search(id, query, {
    limit: options.limit,
    tokenCap: Number.POSITIVE_INFINITY,
  });
  return found.map((message) => ({
    conversationId: message.conversationId,
    speakerName: message.participant.displayName ?? message.participant.id,
    timestamp: message.timestamp,
    content: message.content,
  }));
}

/** The NO_COLOR convention: any non-empty value turns colour off. */
function noColor(env: NodeJS.ProcessEnv): boolean {
  return env.NO_COLOR !== undefined && env.NO_COLOR !== '';
}
