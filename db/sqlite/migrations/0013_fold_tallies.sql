-- A turn no longer rewrites its conversation's and author's rows: their tallies (the turn
-- count, the first and latest times) are folded in every 256 turns (`FOLD_EVERY`, by the
-- trigger below, whoever inserts), and the documented `conversations` and `participants`
-- become views that add the turns not folded yet (those past `messages_folded_seq`), so they
-- read exactly as before. The rows themselves are written when a conversation or person
-- first appears or changes.
ALTER TABLE `conversations` RENAME TO `conversation_rows`;
--> statement-breakpoint
ALTER TABLE `participants` RENAME TO `participant_rows`;
--> statement-breakpoint
INSERT INTO `colloquy_state` (`key`, `value`, `updated_at`)
VALUES ('messages_folded_seq', coalesce((SELECT max(`seq`) FROM `messages`), 0),
	strftime('%Y-%m-%dT%H:%M:%fZ', 'now'));
--> statement-breakpoint
-- The 256th turn past the folded ones counts them all into their conversations and authors.
CREATE TRIGGER `messages_fold_tallies` AFTER INSERT ON `messages`
WHEN new.`seq` - (SELECT CAST(`value` AS INTEGER) FROM `colloquy_state`
	WHERE `key` = 'messages_folded_seq') >= 256 BEGIN
	UPDATE `conversation_rows` SET
		`message_count` = `message_count` + `t`.`n`,
		`created_at` = CASE WHEN `message_count` = 0 THEN `t`.`first_at`
			ELSE min(`created_at`, `t`.`first_at`) END,
		`last_message_at` = CASE WHEN `message_count` = 0 THEN `t`.`last_at`
			ELSE max(`last_message_at`, `t`.`last_at`) END
	FROM (SELECT `conversation_id`, count(*) AS `n`, min(`timestamp`) AS `first_at`,
			max(`timestamp`) AS `last_at`
		FROM `messages` NOT INDEXED
		WHERE `seq` > (SELECT CAST(`value` AS INTEGER) FROM `colloquy_state`
			WHERE `key` = 'messages_folded_seq') AND `seq` <= new.`seq`
		GROUP BY `conversation_id`) AS `t`
	WHERE `conversation_rows`.`id` = `t`.`conversation_id`;
	UPDATE `participant_rows` SET
		`first_seen_at` = min(`first_seen_at`, `t`.`first_at`),
		`last_seen_at` = max(`last_seen_at`, `t`.`last_at`)
	FROM (SELECT `participant_id`, min(`timestamp`) AS `first_at`, max(`timestamp`) AS `last_at`
		FROM `messages` NOT INDEXED
		WHERE `seq` > (SELECT CAST(`value` AS INTEGER) FROM `colloquy_state`
			WHERE `key` = 'messages_folded_seq') AND `seq` <= new.`seq`
		GROUP BY `participant_id`) AS `t`
	WHERE `participant_rows`.`id` = `t`.`participant_id`
		AND (`t`.`first_at` < `first_seen_at` OR `t`.`last_at` > `last_seen_at`);
	UPDATE `colloquy_state` SET `value` = new.`seq`,
		`updated_at` = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
	WHERE `key` = 'messages_folded_seq';
END;
--> statement-breakpoint
-- The unfolded turns are the newest rows: NOT INDEXED keeps their scan a rowid range.
CREATE VIEW `conversations` AS
SELECT `c`.`id`, `c`.`channel_type`, `c`.`channel_id`, `c`.`channel_name`, `c`.`thread_id`,
	`c`.`scope`,
	CASE WHEN `t`.`n` IS NULL THEN `c`.`created_at`
		WHEN `c`.`message_count` = 0 THEN `t`.`first_at`
		ELSE min(`c`.`created_at`, `t`.`first_at`) END AS `created_at`,
	CASE WHEN `t`.`n` IS NULL THEN `c`.`last_message_at`
		WHEN `c`.`message_count` = 0 THEN `t`.`last_at`
		ELSE max(`c`.`last_message_at`, `t`.`last_at`) END AS `last_message_at`,
	`c`.`message_count` + coalesce(`t`.`n`, 0) AS `message_count`,
	`c`.`number`, `c`.`title`, `c`.`metadata`
FROM `conversation_rows` `c`
LEFT JOIN (
	SELECT `conversation_id`, count(*) AS `n`, min(`timestamp`) AS `first_at`,
		max(`timestamp`) AS `last_at`
	FROM `messages` NOT INDEXED
	WHERE `seq` > (SELECT CAST(`value` AS INTEGER) FROM `colloquy_state`
		WHERE `key` = 'messages_folded_seq')
	GROUP BY `conversation_id`
) `t` ON `t`.`conversation_id` = `c`.`id`;
--> statement-breakpoint
CREATE VIEW `participants` AS
SELECT `p`.`id`, `p`.`kind`, `p`.`display_name`,
	CASE WHEN `t`.`first_at` IS NULL THEN `p`.`first_seen_at`
		ELSE min(`p`.`first_seen_at`, `t`.`first_at`) END AS `first_seen_at`,
	CASE WHEN `t`.`last_at` IS NULL THEN `p`.`last_seen_at`
		ELSE max(`p`.`last_seen_at`, `t`.`last_at`) END AS `last_seen_at`
FROM `participant_rows` `p`
LEFT JOIN (
	SELECT `participant_id`, min(`timestamp`) AS `first_at`, max(`timestamp`) AS `last_at`
	FROM `messages` NOT INDEXED
	WHERE `seq` > (SELECT CAST(`value` AS INTEGER) FROM `colloquy_state`
		WHERE `key` = 'messages_folded_seq')
	GROUP BY `participant_id`
) `t` ON `t`.`participant_id` = `p`.`id`;
--> statement-breakpoint
-- Writing through the views, as `colloquy sql --write` users did with the tables.
CREATE TRIGGER `conversations_instead_of_insert` INSTEAD OF INSERT ON `conversations` BEGIN
	INSERT INTO `conversation_rows` (`id`, `channel_type`, `channel_id`, `channel_name`,
		`thread_id`, `scope`, `created_at`, `last_message_at`, `message_count`, `number`, `title`,
		`metadata`)
	VALUES (new.`id`, new.`channel_type`, new.`channel_id`, new.`channel_name`, new.`thread_id`,
		new.`scope`, new.`created_at`, new.`last_message_at`, coalesce(new.`message_count`, 0),
		new.`number`, new.`title`, new.`metadata`);
END;
--> statement-breakpoint
CREATE TRIGGER `participants_instead_of_insert` INSTEAD OF INSERT ON `participants` BEGIN
	INSERT INTO `participant_rows` (`id`, `kind`, `display_name`, `first_seen_at`, `last_seen_at`)
	VALUES (new.`id`, new.`kind`, new.`display_name`, new.`first_seen_at`, new.`last_seen_at`);
END;
--> statement-breakpoint
CREATE TRIGGER `conversations_instead_of_delete` INSTEAD OF DELETE ON `conversations` BEGIN
	DELETE FROM `conversation_rows` WHERE `id` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `conversations_instead_of_update` INSTEAD OF UPDATE OF `channel_name`, `title`,
	`metadata` ON `conversations` BEGIN
	UPDATE `conversation_rows`
	SET `channel_name` = new.`channel_name`, `title` = new.`title`, `metadata` = new.`metadata`
	WHERE `id` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `participants_instead_of_delete` INSTEAD OF DELETE ON `participants` BEGIN
	DELETE FROM `participant_rows` WHERE `id` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `participants_instead_of_update` INSTEAD OF UPDATE OF `kind`, `display_name`
	ON `participants` BEGIN
	UPDATE `participant_rows` SET `kind` = new.`kind`, `display_name` = new.`display_name`
	WHERE `id` = old.`id`;
END;
