import type { ConversationPeople } from './source.js';

// Who wrote in each conversation of a page and its newest turn, as the list shows them: each
// dialect's source reads the rows (its own SQL), this makes the same values of them.

/** Most participants a conversation names; the rest are counted. */
export const NAMED_PARTICIPANTS = 5;

/** Most characters of the newest turn a list row shows. */
const PREVIEW = 120;

/** One author of a conversation: `conversation_authors` (SQLite) or its turns (Postgres). */
export interface AuthorSqlRow {
  conversation_id: string;
  participant_id: string;
  kind: string;
  display_name: string | null;
}

/** The newest turn people saw in a conversation (no rolling summary, no tool step). */
export interface LastTurnSqlRow {
  conversation_id: string;
  speaker: string;
  content: string;
  /** 0/1 in SQLite, a boolean in Postgres. */
  deleted: number | boolean;
}

/**
 * The people and newest turn of each conversation, by id: people before bots, then by name
 * and id, at most `NAMED_PARTICIPANTS` named; the turn's text on one line, cut to a preview.
 *
 * @example
 * ```ts
 * const people = conversationPeople(await readAuthors(ids), await readLastTurns(ids));
 * people.get('telegram:42')?.participants; // [{ id: 'telegram:1001', name: 'Alice', kind: 'user' }]
 * ```
 */
export function conversationPeople(
  authors: readonly AuthorSqlRow[],
  lastTurns: readonly LastTurnSqlRow[],
): Map<string, ConversationPeople> {
  const byConversation = new Map<string, AuthorSqlRow[]>();
  for (const row of authors) {
    const list = byConversation.get(row.conversation_id) ?? [];
    list.push(row);
    byConversation.set(row.conversation_id, list);
  }
  const last = new Map(lastTurns.map((row) => [row.conversation_id, row]));
  const ids = new Set([...byConversation.keys(), ...last.keys()]);
  return new Map(
    [...ids].map((id) => {
      const sorted = (byConversation.get(id) ?? [])
        .map((row) => ({
          id: row.participant_id,
          name: row.display_name ?? row.participant_id,
          kind: row.kind,
        }))
        .sort(
          (a, b) =>
            Number(b.kind === 'user') - Number(a.kind === 'user') ||
            compare(a.name, b.name) ||
            compare(a.id, b.id),
        );
      const turn = last.get(id);
      const people: ConversationPeople = {
        participants: sorted.slice(0, NAMED_PARTICIPANTS),
        moreParticipants: Math.max(0, sorted.length - NAMED_PARTICIPANTS),
        ...(turn === undefined
          ? {}
          : {
              lastTurn: {
                speakerName: turn.speaker,
                preview: preview(turn.content),
                deleted: Boolean(turn.deleted),
              },
            }),
      };
      return [id, people];
    }),
  );
}

/** What a conversation with no turns yet shows. */
export const NOBODY: ConversationPeople = { participants: [], moreParticipants: 0 };

function preview(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  const chars = [...line];
  return chars.length <= PREVIEW ? line : `${chars.slice(0, PREVIEW - 1).join('')}…`;
}

/** Code-unit order, the same in every dialect and locale. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
