-- `conversations` and `participants` are plain tables again: each turn inserted or deleted
-- updates its conversation's count and times and its author's times by trigger, whoever
-- writes. The stored rows take the values the views gave (tallies plus the turns not folded),
-- so no conversation or participant changes.
DROP TRIGGER `messages_fold_conversations`;
--> statement-breakpoint
DROP TRIGGER `messages_fold_participants`;
--> statement-breakpoint
CREATE TEMP TABLE `conversation_tallies` AS
SELECT `id`, `created_at`, `last_message_at`, `message_count` FROM `conversations`;
--> statement-breakpoint
CREATE TEMP TABLE `participant_times` AS
SELECT `id`, `first_seen_at`, `last_seen_at` FROM `participants`;
--> statement-breakpoint
UPDATE `conversation_rows` SET `created_at` = `t`.`created_at`,
	`last_message_at` = `t`.`last_message_at`, `message_count` = `t`.`message_count`
FROM `temp`.`conversation_tallies` `t` WHERE `t`.`id` = `conversation_rows`.`id`;
--> statement-breakpoint
UPDATE `participant_rows` SET `first_seen_at` = `t`.`first_seen_at`,
	`last_seen_at` = `t`.`last_seen_at`
FROM `temp`.`participant_times` `t` WHERE `t`.`id` = `participant_rows`.`id`;
--> statement-breakpoint
DROP TABLE `temp`.`conversation_tallies`;
--> statement-breakpoint
DROP TABLE `temp`.`participant_times`;
--> statement-breakpoint
-- Their INSTEAD OF triggers go with them: the tables take writes themselves.
DROP VIEW `conversations`;
--> statement-breakpoint
DROP VIEW `participants`;
--> statement-breakpoint
DROP TRIGGER `conversation_rows_authors_after_delete`;
--> statement-breakpoint
DROP TRIGGER `participant_rows_authors_after_delete`;
--> statement-breakpoint
-- The views and triggers that read the tables follow the new names.
ALTER TABLE `conversation_rows` RENAME TO `conversations`;
--> statement-breakpoint
ALTER TABLE `participant_rows` RENAME TO `participants`;
--> statement-breakpoint
DELETE FROM `colloquy_state` WHERE `key` IN ('messages_folded_seq', 'participants_folded_seq');
--> statement-breakpoint
CREATE TRIGGER `conversations_authors_after_delete` AFTER DELETE ON `conversations` BEGIN
	DELETE FROM `conversation_authors` WHERE `conversation_id` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `participants_authors_after_delete` AFTER DELETE ON `participants` BEGIN
	DELETE FROM `conversation_authors` WHERE `participant_id` = old.`id`;
END;
--> statement-breakpoint
-- A conversation's first turn sets its times (an empty conversation's are when it was made).
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
-- The times of the turns that remain (two lookups in messages_conversation_time_idx).
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
-- As in 0017, reading the authors' table by its name again (`colloquy migrate` restores a
-- dropped view from the statement that last created it).
DROP VIEW `message_search`;
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
