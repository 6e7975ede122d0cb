import type Database from 'better-sqlite3';
import type { MessageMetadata, ParticipantKind, StoredMessage } from '../types.js';

/** An earlier text of an edited turn. */
export interface ExportedRevision {
  content: string;
  replacedAt: string;
}

/** One line of `colloquy export --format jsonl`: a StoredMessage plus its earlier texts. */
export type ExportedMessage = StoredMessage & { revisions?: ExportedRevision[] };

interface MessageRow {
  seq: number;
  id: string;
  conversationId: string;
  participantId: string;
  kind: ParticipantKind;
  displayName: string | null;
  content: string;
  timestamp: string;
  scope: StoredMessage['scope'];
  channelType: string;
  channelId: string;
  threadId: string | null;
  platformMessageId: string | null;
  replyToMessageId: string | null;
  replyToParticipantId: string | null;
  isSummary: number;
  summaryForAgentId: string | null;
  editedAt: string | null;
  deletedAt: string | null;
  metadata: string;
  mentions: string;
  revisions: string | null;
}

/** Only there when a conversation is asked for, so SQLite can use its index then. */
const where = (conversation: string | undefined) =>
  conversation === undefined ? '' : 'where m.conversation_id = @conversation';
const params = (conversation: string | undefined): Record<string, string> =>
  conversation === undefined ? {} : { conversation };

const select = (conversation: string | undefined) => `
select m.seq, m.id, m.conversation_id as conversationId, m.participant_id as participantId,
  p.kind, p.display_name as displayName, m.content, m.timestamp, m.scope,
  m.channel_type as channelType, m.channel_id as channelId,
  m.thread_id as threadId, m.platform_message_id as platformMessageId,
  m.reply_to_message_id as replyToMessageId, m.reply_to_participant_id as replyToParticipantId,
  m.is_summary as isSummary, m.summary_for_agent_id as summaryForAgentId,
  m.edited_at as editedAt, m.deleted_at as deletedAt, m.metadata,
  (select json_group_array(participant_id) from (select participant_id from message_mentions
    where message_seq = m.seq order by rowid)) as mentions,
  (select json_group_array(json_object('content', r.content, 'replacedAt', r.replaced_at))
    from (select content, replaced_at from message_revisions
          where message_seq = m.seq order by id) r
    having count(*) > 0) as revisions
from messages m
join participants p on p.id = m.participant_id
${where(conversation)}
order by m.seq`;

/** How many messages an export will write. */
export function countMessages(db: Database.Database, conversation: string | undefined): number {
  const row = db
    .prepare<Record<string, string>, { n: number }>(
      `select count(*) as n from messages m ${where(conversation)}`,
    )
    .get(params(conversation));
  return row?.n ?? 0;
}

/**
 * Every message (of one conversation, or all) in sequence order, read one row at a time
 * with `.iterate()` so memory stays flat however large the database is.
 */
export function* iterateMessages(
  db: Database.Database,
  conversation: string | undefined,
): Generator<ExportedMessage> {
  const statement = db.prepare<Record<string, string>, MessageRow>(select(conversation));
  for (const row of statement.iterate(params(conversation))) {
    yield toMessage(row);
  }
}

/** A row back into the StoredMessage shape (absent optional fields stay absent). */
function toMessage(row: MessageRow): ExportedMessage {
  const extra = JSON.parse(row.metadata || '{}') as Record<string, unknown>;
  const metadata: MessageMetadata = {
    ...extra,
    channelType: row.channelType,
    channelId: row.channelId,
    mentions: JSON.parse(row.mentions) as string[],
  };
  setIfPresent(metadata, 'threadId', row.threadId);
  setIfPresent(metadata, 'messageId', row.platformMessageId);
  setIfPresent(metadata, 'replyToMessageId', row.replyToMessageId);
  setIfPresent(metadata, 'replyToParticipantId', row.replyToParticipantId);
  if (row.isSummary) metadata.isSummary = true;
  setIfPresent(metadata, 'summaryForAgentId', row.summaryForAgentId);

  const message: ExportedMessage = {
    id: row.id,
    conversationId: row.conversationId,
    participant: { kind: row.kind, id: row.participantId },
    content: row.content,
    timestamp: row.timestamp,
    scope: row.scope,
    metadata,
    sequence: row.seq,
  };
  if (row.displayName !== null) message.participant.displayName = row.displayName;
  if (row.editedAt !== null) message.editedAt = row.editedAt;
  if (row.deletedAt !== null) message.deletedAt = row.deletedAt;
  if (row.revisions !== null) message.revisions = JSON.parse(row.revisions) as ExportedRevision[];
  return message;
}

function setIfPresent(target: MessageMetadata, key: string, value: string | null): void {
  if (value !== null) target[key] = value;
}
