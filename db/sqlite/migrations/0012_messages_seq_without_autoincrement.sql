-- `messages` without AUTOINCREMENT and without foreign keys: every append wrote the
-- sqlite_sequence page and looked up its conversation and author again. The store numbers a
-- turn past the highest seq ever stored itself, so a seq is still never reused: the highest
-- one deleted is kept in colloquy_state (`messages_seq_floor`). The table is rebuilt with
-- the same columns in the same order; seq values, and with them the search index's rowids,
-- stay as they are.
INSERT INTO `colloquy_state` (`key`, `value`, `updated_at`)
SELECT 'messages_seq_floor', `seq`, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM `sqlite_sequence` WHERE `name` = 'messages';
--> statement-breakpoint
CREATE TABLE `__new_messages` (
	`seq` integer PRIMARY KEY NOT NULL,
	`id` text NOT NULL,
	`conversation_id` text NOT NULL,
	`participant_id` text NOT NULL,
	`content` text NOT NULL,
	`timestamp` text NOT NULL,
	`scope` text NOT NULL,
	`channel_type` text NOT NULL,
	`channel_id` text NOT NULL,
	`thread_id` text,
	`platform_message_id` text,
	`reply_to_message_id` text,
	`reply_to_participant_id` text,
	`is_summary` integer DEFAULT false NOT NULL,
	`summary_for_agent_id` text,
	`edited_at` text,
	`deleted_at` text,
	`metadata` text DEFAULT '{}' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	`trace_id` text,
	`sources` text,
	`reasoning` text,
	`delegation_id` text,
	`delegated_by` text,
	`delegated_to` text,
	`delivery` text
);
--> statement-breakpoint
INSERT INTO `__new_messages` SELECT `seq`, `id`, `conversation_id`, `participant_id`, `content`,
	`timestamp`, `scope`, `channel_type`, `channel_id`, `thread_id`, `platform_message_id`,
	`reply_to_message_id`, `reply_to_participant_id`, `is_summary`, `summary_for_agent_id`,
	`edited_at`, `deleted_at`, `metadata`, `created_at`, `trace_id`, `sources`, `reasoning`,
	`delegation_id`, `delegated_by`, `delegated_to`, `delivery`
FROM `messages` ORDER BY `seq`;
--> statement-breakpoint
-- The views read `messages`: dropped while it is replaced, created again below as they were.
DROP VIEW `transcript`;
--> statement-breakpoint
DROP VIEW `message_sources`;
--> statement-breakpoint
-- The store turns foreign keys off while it migrates, so the mentions and revisions that
-- reference these rows are not deleted with the old table.
DROP TABLE `messages`;
--> statement-breakpoint
ALTER TABLE `__new_messages` RENAME TO `messages`;
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_id_uq` ON `messages` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `messages_platform_uq` ON `messages` (`channel_type`,`channel_id`,`platform_message_id`) WHERE "messages"."platform_message_id" is not null;--> statement-breakpoint
CREATE INDEX `messages_conversation_time_idx` ON `messages` (`conversation_id`,`timestamp`,`seq`);--> statement-breakpoint
CREATE INDEX `messages_conversation_participant_idx` ON `messages` (`conversation_id`,`participant_id`,`timestamp`);--> statement-breakpoint
CREATE INDEX `messages_conversation_reply_to_idx` ON `messages` (`conversation_id`,`reply_to_participant_id`,`timestamp`) WHERE "messages"."reply_to_participant_id" is not null;--> statement-breakpoint
CREATE INDEX `messages_summary_idx` ON `messages` (`conversation_id`,`summary_for_agent_id`,`seq`) WHERE "messages"."is_summary" = 1;--> statement-breakpoint
CREATE INDEX `messages_delegation_idx` ON `messages` (`delegation_id`,`seq`) WHERE "messages"."delegation_id" is not null;--> statement-breakpoint
CREATE INDEX `messages_trace_idx` ON `messages` (`trace_id`) WHERE "messages"."trace_id" is not null;--> statement-breakpoint
CREATE INDEX `messages_sources_idx` ON `messages` (`seq`) WHERE "messages"."sources" is not null;--> statement-breakpoint
CREATE INDEX `messages_dm_time_idx` ON `messages` (`conversation_id`,`timestamp`,`seq`) WHERE "messages"."scope" = 'dm';
--> statement-breakpoint
-- Deleting the newest turn keeps its seq as the floor the next one is numbered above.
CREATE TRIGGER `messages_seq_floor` AFTER DELETE ON `messages`
WHEN old.`seq` > coalesce((SELECT max(`seq`) FROM `messages`), 0) BEGIN
	INSERT INTO `colloquy_state` (`key`, `value`, `updated_at`)
	VALUES ('messages_seq_floor', old.`seq`, strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
	ON CONFLICT (`key`) DO UPDATE SET `value` = excluded.`value`, `updated_at` = excluded.`updated_at`
	WHERE CAST(`value` AS INTEGER) < CAST(excluded.`value` AS INTEGER);
END;
--> statement-breakpoint
-- The conversation's turns went with it through a foreign key; now a trigger deletes them.
CREATE TRIGGER `conversations_messages_after_delete` AFTER DELETE ON `conversations` BEGIN
	DELETE FROM `messages` WHERE `conversation_id` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_after_insert` AFTER INSERT ON `messages` BEGIN
	INSERT INTO `messages_fts` (`rowid`, `content`)
	SELECT (`c`.`number` << 32) | (4294967295 - new.`seq`), new.`content`
	FROM `conversations` `c` WHERE `c`.`id` = new.`conversation_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_after_delete` AFTER DELETE ON `messages` BEGIN
	DELETE FROM `messages_fts` WHERE `rowid` = (
		SELECT (`c`.`number` << 32) | (4294967295 - old.`seq`)
		FROM `conversations` `c` WHERE `c`.`id` = old.`conversation_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_after_update` AFTER UPDATE OF `content`, `conversation_id` ON `messages` BEGIN
	DELETE FROM `messages_fts` WHERE `rowid` = (
		SELECT (`c`.`number` << 32) | (4294967295 - old.`seq`)
		FROM `conversations` `c` WHERE `c`.`id` = old.`conversation_id`);
	INSERT INTO `messages_fts` (`rowid`, `content`)
	SELECT (`c`.`number` << 32) | (4294967295 - new.`seq`), new.`content`
	FROM `conversations` `c` WHERE `c`.`id` = new.`conversation_id`;
END;
--> statement-breakpoint
CREATE VIEW `transcript` AS
SELECT
	`m`.`conversation_id` AS `conversation_id`,
	`m`.`seq` AS `seq`,
	`m`.`timestamp` AS `timestamp`,
	`m`.`channel_type` AS `channel_type`,
	coalesce(`p`.`display_name`, `m`.`participant_id`) AS `speaker`,
	`m`.`participant_id` AS `speaker_id`,
	`p`.`kind` AS `speaker_kind`,
	`m`.`content` AS `text`,
	coalesce(`rp`.`display_name`, `m`.`reply_to_participant_id`) AS `replying_to`,
	`m`.`reply_to_participant_id` AS `replying_to_id`,
	`m`.`edited_at` IS NOT NULL AS `is_edited`,
	`m`.`deleted_at` IS NOT NULL AS `is_deleted`,
	`m`.`edited_at` AS `edited_at`,
	`m`.`deleted_at` AS `deleted_at`,
	'[' || `m`.`timestamp` || '] ' || coalesce(`p`.`display_name`, `m`.`participant_id`) || ': ' || `m`.`content`
		|| CASE WHEN `m`.`edited_at` IS NOT NULL THEN ' (edited)' ELSE '' END
		|| CASE WHEN `m`.`deleted_at` IS NOT NULL THEN ' (deleted)' ELSE '' END AS `line`
FROM `messages` `m`
JOIN `participants` `p` ON `p`.`id` = `m`.`participant_id`
LEFT JOIN `participants` `rp` ON `rp`.`id` = `m`.`reply_to_participant_id`
WHERE `m`.`is_summary` = 0
ORDER BY `m`.`conversation_id`, `m`.`timestamp`, `m`.`seq`;
--> statement-breakpoint
CREATE VIEW `message_sources` AS
SELECT m.seq AS message_seq, m.id AS message_id, m.conversation_id, m.participant_id,
  m.timestamp, m.trace_id, s.key + 1 AS position,
  json_extract(s.value, '$.documentId') AS document_id,
  json_extract(s.value, '$.name') AS name,
  json_extract(s.value, '$.chunk') AS chunk,
  json_extract(s.value, '$.score') AS score
FROM messages m, json_each(m.sources) s
WHERE m.sources IS NOT NULL;
