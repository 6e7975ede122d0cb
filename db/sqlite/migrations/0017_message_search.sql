-- Full-text search in plain SQL, as turns: `messages_fts` is contentless and its rowid packs
-- the conversation's number with the turn's seq, so a MATCH on it alone gives no text. The
-- view joins each match to its turn and its author: `WHERE message_search MATCH 'refund'`
-- (its `message_search` column is the index itself), best first with `ORDER BY rank`.
-- CROSS JOIN keeps the index first: a turn cannot be looked up in it by seq.
CREATE VIEW `message_search` AS
SELECT
	`m`.`conversation_id` AS `conversation_id`,
	`m`.`seq` AS `seq`,
	`m`.`timestamp` AS `timestamp`,
	coalesce(`p`.`display_name`, `m`.`participant_id`) AS `speaker`,
	`m`.`participant_id` AS `speaker_id`,
	`m`.`content` AS `text`,
	`m`.`deleted_at` IS NOT NULL AS `is_deleted`,
	`f`.`rank` AS `rank`,
	`f`.`messages_fts` AS `message_search`
FROM `messages_fts` `f`
CROSS JOIN `messages` `m` ON `m`.`seq` = 4294967295 - (`f`.`rowid` & 4294967295)
LEFT JOIN `participant_rows` `p` ON `p`.`id` = `m`.`participant_id`
WHERE `m`.`is_summary` = 0;
