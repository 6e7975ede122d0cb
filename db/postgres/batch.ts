import type pg from 'pg';
import { type AgentRun, tokenCount } from '../../src/runs.js';
import type { NewMessage } from '../../src/types.js';
import { withMetadata } from '../../src/types.js';
import { normalizeTimestamp, toInsert } from '../rows.js';
import { storableJson, withoutNul } from './errors.js';

/**
 * Many new turns in one statement (group commit): the message insert is the claim, as in
 * `PG.append`, over arrays; the conversations and participants of the turns it inserted are
 * created when missing (counted and tallied as the transaction commits, `commitTransaction`),
 * and their mentions written. Answers the seq of each turn it inserted, by id; a turn repeated
 * (stored before, or twice in the batch) is left out.
 */
const APPEND_MANY = `WITH m AS (
    INSERT INTO messages (id, conversation_id, participant_id, content, timestamp, scope,
      channel_type, channel_id, thread_id, platform_message_id, reply_to_message_id,
      reply_to_participant_id, is_summary, summary_for_agent_id, metadata, trace_id, sources,
      reasoning, delegation_id, delegated_by, delegated_to, attachments)
    SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::timestamptz[],
      $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::text[], $12::text[],
      $13::boolean[], $14::text[], $15::jsonb[], $16::text[], $17::jsonb[], $18::text[],
      $19::text[], $20::text[], $21::text[], $34::jsonb[])
    ON CONFLICT DO NOTHING
    RETURNING seq, id, conversation_id, participant_id, timestamp),
  who AS (
    SELECT * FROM unnest($22::text[], $23::text[], $24::text[]) AS w(id, kind, display_name)),
  p AS (
    INSERT INTO participants (id, kind, display_name, first_seen_at, last_seen_at)
    SELECT w.id, w.kind, w.display_name, s.first, s.last
    FROM (SELECT participant_id, min(timestamp) AS first, max(timestamp) AS last
          FROM m GROUP BY participant_id) s JOIN who w ON w.id = s.participant_id
    ON CONFLICT (id) DO NOTHING),
  place AS (
    SELECT * FROM unnest($25::text[], $26::text[], $27::text[], $28::text[], $29::text[],
      $30::text[]) AS pl(id, channel_type, channel_id, channel_name, thread_id, scope)),
  c AS (
    INSERT INTO conversations (id, channel_type, channel_id, channel_name, thread_id, scope,
      created_at, last_message_at, message_count)
    SELECT pl.id, pl.channel_type, pl.channel_id, pl.channel_name, pl.thread_id, pl.scope,
      s.first, s.first, 0
    FROM (SELECT conversation_id, min(timestamp) AS first FROM m GROUP BY conversation_id) s
      JOIN place pl ON pl.id = s.conversation_id
    ON CONFLICT (id) DO NOTHING),
  mentions AS (
    INSERT INTO message_mentions (message_seq, conversation_id, participant_id, timestamp,
      position)
    SELECT m.seq, m.conversation_id, x.participant_id, m.timestamp, min(x.position)
    FROM unnest($31::text[], $32::text[], $33::int[]) AS x(message_id, participant_id, position)
    JOIN m ON m.id = x.message_id
    GROUP BY m.seq, m.conversation_id, x.participant_id, m.timestamp)
  SELECT seq, id FROM m`;

/** A turn of the batch as the statement writes it, and its timestamp as stored. */
interface Prepared {
  message: NewMessage;
  timestamp: string;
}

/**
 * Inserts `messages` in one statement; answers, per message in order, its new seq, or
 * undefined when it was not inserted (stored already, or earlier in the batch).
 */
export async function appendMany(
  client: pg.PoolClient,
  messages: readonly NewMessage[],
): Promise<{ prepared: Prepared[]; seqs: (number | undefined)[] }> {
  const prepared = messages.map((given) => {
    const message = withMetadata(given);
    const context = { conversationId: message.conversationId, messageId: message.id };
    return { message, timestamp: normalizeTimestamp(message.timestamp, 'timestamp', context) };
  });
  const rows = prepared.map(({ message, timestamp }) => toInsert(message, timestamp));
  const column = <K extends keyof (typeof rows)[number]>(key: K) => rows.map((row) => row[key]);
  const people = new Map<string, [string, string | null]>();
  const places = new Map<string, (string | null)[]>();
  const mentions: [string[], string[], number[]] = [[], [], []];
  for (const { message } of prepared) {
    const { participant, metadata } = message;
    const known = people.get(participant.id);
    people.set(participant.id, [participant.kind, participant.displayName ?? known?.[1] ?? null]);
    const place = places.get(message.conversationId);
    places.set(message.conversationId, [
      metadata.channelType,
      metadata.channelId,
      metadata.channelName ?? place?.[2] ?? null,
      place?.[3] ?? metadata.threadId ?? null,
      message.scope,
    ]);
    (metadata.mentions ?? []).forEach((id, position) => {
      mentions[0].push(message.id);
      mentions[1].push(id);
      mentions[2].push(position);
    });
  }
  const values = withoutNul([
    column('id'),
    column('conversationId'),
    column('participantId'),
    column('content'),
    column('timestamp'),
    column('scope'),
    column('channelType'),
    column('channelId'),
    column('threadId'),
    column('platformMessageId'),
    column('replyToMessageId'),
    column('replyToParticipantId'),
    rows.map((row) => row.isSummary === 1),
    column('summaryForAgentId'),
    rows.map((row) => storableJson(row.metadata)),
    column('traceId'),
    rows.map((row) => storableJson(row.sources)),
    column('reasoning'),
    column('delegationId'),
    column('delegatedBy'),
    column('delegatedTo'),
    [...people.keys()],
    [...people.values()].map(([kind]) => kind),
    [...people.values()].map(([, name]) => name),
    [...places.keys()],
    ...[0, 1, 2, 3, 4].map((i) => [...places.values()].map((place) => place[i] ?? null)),
    ...mentions,
    rows.map((row) => storableJson(row.attachments)),
  ]);
  const { rows: inserted } = await client.query<{ seq: number; id: string }>(APPEND_MANY, values);
  const seqOf = new Map(inserted.map((row) => [row.id, row.seq]));
  // A turn twice in the batch: the first was inserted, the second repeats it.
  const seqs = prepared.map(({ message }) => {
    const seq = seqOf.get(message.id);
    seqOf.delete(message.id);
    return seq;
  });
  return { prepared, seqs };
}

/**
 * New runs in one statement, from arrays (`runColumns`); a run recorded already is left as it
 * is, and none is created for an interaction stored refused (`takesRuns`).
 */
export const CREATE_RUNS = `INSERT INTO agent_runs (id, message_id, conversation_id, agent_id,
    status, created_at, started_at, finished_at, model, input_tokens, output_tokens, reply_id,
    error, attempts, prompt)
  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[],
    $6::timestamptz[], $7::timestamptz[], $8::timestamptz[], $9::text[], $10::int[],
    $11::int[], $12::text[], $13::text[], $14::int[], $15::text[]) AS r(id, message_id)
  WHERE NOT EXISTS (SELECT 1 FROM messages m WHERE m.id = r.message_id
    AND (m.metadata -> 'interaction' ->> 'refused') IS NOT NULL)
  ON CONFLICT DO NOTHING`;

/** The 15 arrays `CREATE_RUNS` takes, in its column order. */
export function runColumns(runs: readonly AgentRun[]): unknown[] {
  const column = <K extends keyof AgentRun>(key: K) => runs.map((run) => run[key] ?? null);
  return withoutNul([
    column('id'),
    column('messageId'),
    column('conversationId'),
    column('agentId'),
    column('status'),
    column('createdAt'),
    column('startedAt'),
    column('finishedAt'),
    column('model'),
    runs.map((run) => tokenCount(run.inputTokens) ?? null),
    runs.map((run) => tokenCount(run.outputTokens) ?? null),
    column('replyId'),
    column('error'),
    column('attempts'),
    column('prompt'),
  ]);
}

/** Records new runs in one statement (a run recorded already is left as it is). */
export async function createRuns(client: pg.PoolClient, runs: readonly AgentRun[]) {
  await client.query(CREATE_RUNS, runColumns(runs));
}
