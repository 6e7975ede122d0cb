-- `messages` numbers its turns itself (AUTOINCREMENT): SQLite never gives a seq twice, not
-- even after the newest turn is deleted, whoever inserts the turn. The table is rebuilt with
-- the same columns in the same order; seq values, and with them the search index's rowids,
-- stay as they are, and the next seq is past every seq ever given (the highest deleted one
-- included, read from colloquy_state's `messages_seq_floor`, which goes with its trigger).
CREATE TABLE `__new_messages` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
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
	`delivery` text,
	`author_kind` text DEFAULT 'user' NOT NULL,
	`attachments` text
);
--> statement-breakpoint
INSERT INTO `__new_messages` (`seq`, `id`, `conversation_id`, `participant_id`, `content`, `timestamp`, `scope`, `channel_type`, `channel_id`, `thread_id`, `platform_message_id`, `reply_to_message_id`, `reply_to_participant_id`, `is_summary`, `summary_for_agent_id`, `edited_at`, `deleted_at`, `metadata`, `created_at`, `trace_id`, `sources`, `reasoning`, `delegation_id`, `delegated_by`, `delegated_to`, `delivery`, `author_kind`, `attachments`)
SELECT `seq`, `id`, `conversation_id`, `participant_id`, `content`, `timestamp`, `scope`, `channel_type`, `channel_id`, `thread_id`, `platform_message_id`, `reply_to_message_id`, `reply_to_participant_id`, `is_summary`, `summary_for_agent_id`, `edited_at`, `deleted_at`, `metadata`, `created_at`, `trace_id`, `sources`, `reasoning`, `delegation_id`, `delegated_by`, `delegated_to`, `delivery`, `author_kind`, `attachments`
FROM `messages` ORDER BY `seq`;
--> statement-breakpoint
DELETE FROM `sqlite_sequence` WHERE `name` IN ('messages', '__new_messages');
--> statement-breakpoint
INSERT INTO `sqlite_sequence` (`name`, `seq`)
SELECT '__new_messages', max(coalesce((SELECT max(`seq`) FROM `__new_messages`), 0),
	coalesce((SELECT CAST(`value` AS INTEGER) FROM `colloquy_state`
		WHERE `key` = 'messages_seq_floor'), 0));
--> statement-breakpoint
DELETE FROM `colloquy_state` WHERE `key` = 'messages_seq_floor';
--> statement-breakpoint
-- The views and the trigger on `conversations` read `messages`: dropped while it is replaced,
-- created again below as they are.
DROP VIEW `transcript`;
--> statement-breakpoint
DROP VIEW `message_sources`;
--> statement-breakpoint
DROP VIEW `message_search`;
--> statement-breakpoint
DROP VIEW `message_attachments`;
--> statement-breakpoint
DROP VIEW `interactions`;
--> statement-breakpoint
DROP TRIGGER `conversations_messages_after_delete`;
--> statement-breakpoint
-- The store turns foreign keys off while it migrates, so the mentions, reactions and
-- revisions that reference these rows are not deleted with the old table.
DROP TABLE `messages`;
--> statement-breakpoint
ALTER TABLE `__new_messages` RENAME TO `messages`;
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_id_uq` ON `messages` (`id`);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_platform_uq` ON `messages` (`channel_type`,`channel_id`,`platform_message_id`) WHERE "messages"."platform_message_id" is not null;
--> statement-breakpoint
CREATE INDEX `messages_conversation_time_idx` ON `messages` (`conversation_id`,`timestamp`,`seq`);
--> statement-breakpoint
CREATE INDEX `messages_conversation_reply_to_idx` ON `messages` (`conversation_id`,`reply_to_participant_id`,`timestamp`) WHERE "messages"."reply_to_participant_id" is not null;
--> statement-breakpoint
CREATE INDEX `messages_summary_idx` ON `messages` (`conversation_id`,`summary_for_agent_id`,`seq`) WHERE "messages"."is_summary" = 1;
--> statement-breakpoint
CREATE INDEX `messages_delegation_idx` ON `messages` (`delegation_id`,`seq`) WHERE "messages"."delegation_id" is not null;
--> statement-breakpoint
CREATE INDEX `messages_trace_idx` ON `messages` (`trace_id`) WHERE "messages"."trace_id" is not null;
--> statement-breakpoint
CREATE INDEX `messages_sources_idx` ON `messages` (`seq`) WHERE "messages"."sources" is not null;
--> statement-breakpoint
CREATE INDEX `messages_conversation_author_idx` ON `messages` (`conversation_id`,`participant_id`,`timestamp`) WHERE "messages"."author_kind" <> 'user';
--> statement-breakpoint
CREATE INDEX `messages_attachments_idx` ON `messages` (`timestamp`) WHERE "messages"."attachments" is not null;
--> statement-breakpoint
CREATE INDEX `messages_interaction_idx` ON `messages` (`seq`) WHERE json_extract(`metadata`, '$.interaction.type') IS NOT NULL;
--> statement-breakpoint
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
CREATE TRIGGER `messages_authors_after_insert` AFTER INSERT ON `messages` BEGIN
	INSERT OR IGNORE INTO `conversation_authors` (`conversation_id`, `participant_id`,
		`author_kind`)
	VALUES (new.`conversation_id`, new.`participant_id`, new.`author_kind`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_authors_after_update` AFTER UPDATE OF `conversation_id`,
	`participant_id`, `author_kind` ON `messages` BEGIN
	INSERT OR IGNORE INTO `conversation_authors` (`conversation_id`, `participant_id`,
		`author_kind`)
	VALUES (new.`conversation_id`, new.`participant_id`, new.`author_kind`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_tallies_after_insert` AFTER INSERT ON `messages` BEGIN
	UPDATE `conversations` SET
		`message_count` = `message_count` + 1,
		`created_at` = CASE WHEN `message_count` = 0 THEN new.`timestamp`
			ELSE min(`created_at`, new.`timestamp`) END,
		`last_message_at` = CASE WHEN `message_count` = 0 THEN new.`timestamp`
			ELSE max(`last_message_at`, new.`timestamp`) END
	WHERE `id` = new.`conversation_id`;
	UPDATE `participants` SET
		`first_seen_at` = min(`first_seen_at`, new.`timestamp`),
		`last_seen_at` = max(`last_seen_at`, new.`timestamp`)
	WHERE `id` = new.`participant_id`
		AND (new.`timestamp` < `first_seen_at` OR new.`timestamp` > `last_seen_at`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_tallies_after_delete` AFTER DELETE ON `messages` BEGIN
	UPDATE `conversations` SET
		`message_count` = `message_count` - 1,
		`created_at` = coalesce((SELECT min(`timestamp`) FROM `messages`
			WHERE `conversation_id` = old.`conversation_id`), `created_at`),
		`last_message_at` = coalesce((SELECT max(`timestamp`) FROM `messages`
			WHERE `conversation_id` = old.`conversation_id`), `last_message_at`)
	WHERE `id` = old.`conversation_id`;
END;
--> statement-breakpoint
CREATE TRIGGER `messages_tallies_after_retime` AFTER UPDATE OF `timestamp` ON `messages`
WHEN new.`timestamp` IS NOT old.`timestamp` BEGIN
	UPDATE `conversations` SET
		`created_at` = coalesce((SELECT min(`timestamp`) FROM `messages`
			WHERE `conversation_id` = new.`conversation_id`), `created_at`),
		`last_message_at` = coalesce((SELECT max(`timestamp`) FROM `messages`
			WHERE `conversation_id` = new.`conversation_id`), `last_message_at`)
	WHERE `id` = new.`conversation_id`;
	UPDATE `participants` SET
		`first_seen_at` = min(`first_seen_at`, new.`timestamp`),
		`last_seen_at` = max(`last_seen_at`, new.`timestamp`)
	WHERE `id` = new.`participant_id`
		AND (new.`timestamp` < `first_seen_at` OR new.`timestamp` > `last_seen_at`);
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
--> statement-breakpoint
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
LEFT JOIN `participants` `p` ON `p`.`id` = `m`.`participant_id`
WHERE `m`.`is_summary` = 0;
--> statement-breakpoint
CREATE VIEW `message_attachments` AS
SELECT m.seq AS message_seq, m.id AS message_id, m.conversation_id, m.participant_id,
  m.timestamp, m.channel_type, a.key + 1 AS position,
  json_extract(a.value, '$.kind') AS kind,
  json_extract(a.value, '$.name') AS name,
  json_extract(a.value, '$.mimeType') AS mime_type,
  json_extract(a.value, '$.size') AS size,
  json_extract(a.value, '$.platformFileId') AS platform_file_id,
  json_extract(a.value, '$.url') AS url
FROM messages m, json_each(m.attachments) a
WHERE m.attachments IS NOT NULL;
--> statement-breakpoint
CREATE VIEW `interactions` AS
SELECT
	`m`.`seq` AS `message_seq`,
	`m`.`id` AS `message_id`,
	`m`.`conversation_id` AS `conversation_id`,
	`m`.`channel_type` AS `channel_type`,
	`m`.`timestamp` AS `timestamp`,
	`m`.`participant_id` AS `participant_id`,
	coalesce(`p`.`display_name`, `m`.`participant_id`) AS `person`,
	json_extract(`m`.`metadata`, '$.interaction.type') AS `kind`,
	json_extract(`m`.`metadata`, '$.interaction.name') AS `command`,
	json_extract(`m`.`metadata`, '$.interaction.args') AS `args`,
	json_extract(`m`.`metadata`, '$.interaction.id') AS `action_id`,
	json_extract(`m`.`metadata`, '$.interaction.value') AS `value`,
	json_extract(`m`.`metadata`, '$.interaction.on') AS `on_message_id`,
	json_extract(`m`.`metadata`, '$.interaction.agent') AS `agent_id`,
	json_extract(`m`.`metadata`, '$.interaction.refused') AS `refused`,
	`m`.`content` AS `text`
FROM `messages` `m`
LEFT JOIN `participants` `p` ON `p`.`id` = `m`.`participant_id`
WHERE json_extract(`m`.`metadata`, '$.interaction.type') IS NOT NULL;
