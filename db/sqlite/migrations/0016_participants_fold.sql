-- The authors' first and latest times are folded in every 1,024 turns (`FOLD_PARTICIPANTS_EVERY`)
-- instead of with the conversations' tallies every 256: a fold rewrote the row of nearly every
-- author of the last 256 turns, on as many pages, and only the `participants` view reads their
-- times. The view adds the turns past `participants_folded_seq`, so it reads as before.
INSERT INTO `colloquy_state` (`key`, `value`, `updated_at`)
SELECT 'participants_folded_seq', `value`, strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
FROM `colloquy_state` WHERE `key` = 'messages_folded_seq';
--> statement-breakpoint
DROP TRIGGER `messages_fold_tallies`;
--> statement-breakpoint
-- The 256th turn past the folded ones counts them all into their conversations.
CREATE TRIGGER `messages_fold_conversations` AFTER INSERT ON `messages`
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
	UPDATE `colloquy_state` SET `value` = new.`seq`,
		`updated_at` = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
	WHERE `key` = 'messages_folded_seq';
END;
--> statement-breakpoint
-- The 1,024th turn past the folded ones counts them all into their authors.
CREATE TRIGGER `messages_fold_participants` AFTER INSERT ON `messages`
WHEN new.`seq` - (SELECT CAST(`value` AS INTEGER) FROM `colloquy_state`
	WHERE `key` = 'participants_folded_seq') >= 1024 BEGIN
	UPDATE `participant_rows` SET
		`first_seen_at` = min(`first_seen_at`, `t`.`first_at`),
		`last_seen_at` = max(`last_seen_at`, `t`.`last_at`)
	FROM (SELECT `participant_id`, min(`timestamp`) AS `first_at`, max(`timestamp`) AS `last_at`
		FROM `messages` NOT INDEXED
		WHERE `seq` > (SELECT CAST(`value` AS INTEGER) FROM `colloquy_state`
			WHERE `key` = 'participants_folded_seq') AND `seq` <= new.`seq`
		GROUP BY `participant_id`) AS `t`
	WHERE `participant_rows`.`id` = `t`.`participant_id`
		AND (`t`.`first_at` < `first_seen_at` OR `t`.`last_at` > `last_seen_at`);
	UPDATE `colloquy_state` SET `value` = new.`seq`,
		`updated_at` = strftime('%Y-%m-%dT%H:%M:%fZ', 'now')
	WHERE `key` = 'participants_folded_seq';
END;
--> statement-breakpoint
DROP VIEW `participants`;
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
		WHERE `key` = 'participants_folded_seq')
	GROUP BY `participant_id`
) `t` ON `t`.`participant_id` = `p`.`id`;
--> statement-breakpoint
-- Dropped with the view: writing through it, as before.
CREATE TRIGGER `participants_instead_of_insert` INSTEAD OF INSERT ON `participants` BEGIN
	INSERT INTO `participant_rows` (`id`, `kind`, `display_name`, `first_seen_at`, `last_seen_at`)
	VALUES (new.`id`, new.`kind`, new.`display_name`, new.`first_seen_at`, new.`last_seen_at`);
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
