import type Database from 'better-sqlite3';

/**
 * Counts the conversations' and participants' tallies again from `messages` when a record of
 * how far they were folded (`messages_folded_seq` and `participants_folded_seq` in
 * `colloquy_state`, migrations 0013 and 0016) is gone, say after `DELETE FROM colloquy_state`:
 * without it the views could not tell which turns the stored tallies hold. Returns whether it
 * had to. One transaction; a full pass over `messages`.
 *
 * @example
 * ```ts
 * recountTalliesIfLost(db); // false
 * ```
 */
export function recountTalliesIfLost(db: Database.Database): boolean {
  const kept = db
    .prepare(
      `SELECT count(*) = 2 FROM colloquy_state
      WHERE key IN ('messages_folded_seq', 'participants_folded_seq')`,
    )
    .pluck();
  if (kept.get() === 1) return false;
  const recount = db.transaction(() => {
    // Another process may have recounted since.
    if (kept.get() === 1) return false;
    db.exec(`
      UPDATE conversation_rows SET
        message_count = coalesce(t.n, 0),
        created_at = coalesce(t.first_at, created_at),
        last_message_at = coalesce(t.last_at, last_message_at)
      FROM (SELECT c.id, (SELECT count(*) FROM messages m WHERE m.conversation_id = c.id) AS n,
          (SELECT min(timestamp) FROM messages m WHERE m.conversation_id = c.id) AS first_at,
          (SELECT max(timestamp) FROM messages m WHERE m.conversation_id = c.id) AS last_at
        FROM conversation_rows c) AS t
      WHERE conversation_rows.id = t.id;
      UPDATE participant_rows SET
        first_seen_at = min(first_seen_at, t.first_at),
        last_seen_at = max(last_seen_at, t.last_at)
      FROM (SELECT participant_id, min(timestamp) AS first_at, max(timestamp) AS last_at
        FROM messages GROUP BY participant_id) AS t
      WHERE participant_rows.id = t.participant_id;
      INSERT INTO colloquy_state (key, value, updated_at)
      SELECT key, coalesce((SELECT max(seq) FROM messages), 0),
        strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
      FROM (SELECT 'messages_folded_seq' AS key UNION ALL SELECT 'participants_folded_seq')
      WHERE true -- without a WHERE, SQLite would read the upsert's ON as a join's
      ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at;`);
    return true;
  });
  return recount.immediate();
}
