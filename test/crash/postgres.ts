import pg from 'pg';
import { RECORDED_UNANSWERED, type StoredTurns } from './harness.js';

/** Reads the turns and runs of a colloquy Postgres database (as `readStore` reads a file). */
export async function readPostgres(url: string): Promise<StoredTurns> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const byKey = new Map<string, string>();
    const { rows } = await client.query<{
      id: string;
      channel_id: string;
      platform_message_id: string | null;
      parts: string[] | null;
    }>(
      `SELECT id, channel_id, platform_message_id,
         ARRAY(SELECT jsonb_array_elements_text(metadata -> 'partMessageIds')) AS parts
       FROM messages`,
    );
    for (const row of rows) {
      if (row.platform_message_id !== null) {
        byKey.set(`${row.channel_id}:${row.platform_message_id}`, row.id);
      }
      for (const part of row.parts ?? []) byKey.set(`${row.channel_id}:${part}`, row.id);
    }
    const ids = async (sql: string) =>
      new Set((await client.query<{ id: string }>(sql)).rows.map((row) => row.id));
    return {
      byKey,
      recordedUnanswered: await ids(
        `SELECT message_id AS id FROM agent_runs WHERE ${RECORDED_UNANSWERED}`,
      ),
      unconfirmedReplyFor: await ids(
        `SELECT r.message_id AS id FROM agent_runs r JOIN messages m ON m.id = r.reply_id
         WHERE m.delivery = 'unconfirmed'`,
      ),
      replyTexts: await replyTexts(client),
      unconfirmedRuns: await ids(
        `SELECT message_id AS id FROM agent_runs WHERE status = 'unconfirmed'`,
      ),
      hasRuns: true,
    };
  } finally {
    await client.end();
  }
}

/** The text of every recorded reply, by the platform key of the turn it answers. */
async function replyTexts(client: pg.Client): Promise<Map<string, string[]>> {
  const { rows } = await client.query<{ key: string; content: string }>(
    `SELECT channel_id || ':' || coalesce(reply_to_message_id, '') AS key, content
       FROM messages WHERE delivery IS NOT NULL`,
  );
  const texts = new Map<string, string[]>();
  for (const { key, content } of rows) texts.set(key, [...(texts.get(key) ?? []), content]);
  return texts;
}
