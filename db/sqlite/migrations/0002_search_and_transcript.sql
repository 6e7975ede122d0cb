-- Full-text search over messages.content. External content (the text lives once, in
-- `messages`); `conversation_key` is one token per conversation ('c' || hex(conversation_id))
-- so a search ANDs it into the MATCH and FTS itself restricts to one conversation.
CREATE VIRTUAL TABLE `messages_fts` USING fts5(
	`content`,
	`conversation_key`,
	content = 'messages',
	content_rowid = 'seq',
	tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
-- `rank` is bm25 over the text only; the conversation token carries no weight.
INSERT INTO `messages_fts` (`messages_fts`, `rank`) VALUES ('rank', 'bm25(1.0, 0.0)');
--> statement-breakpoint
-- Index the rows of a database created before this migration.
INSERT INTO `messages_fts` (`messages_fts`) VALUES ('rebuild');
--> statement-breakpoint
CREATE TRIGGER `messages_fts_after_insert` AFTER INSERT ON `messages` BEGIN
	INSERT INTO `messages_fts` (`rowid`, `content`, `conversation_key`)
	VALUES (new.`seq`, new.`content`, new.`conversation_key`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_after_delete` AFTER DELETE ON `messages` BEGIN
	INSERT INTO `messages_fts` (`messages_fts`, `rowid`, `content`, `conversation_key`)
	VALUES ('delete', old.`seq`, old.`content`, old.`conversation_key`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_after_update` AFTER UPDATE OF `content`, `conversation_id` ON `messages` BEGIN
	INSERT INTO `messages_fts` (`messages_fts`, `rowid`, `content`, `conversation_key`)
	VALUES ('delete', old.`seq`, old.`content`, old.`conversation_key`);
	INSERT INTO `messages_fts` (`rowid`, `content`, `conversation_key`)
	VALUES (new.`seq`, new.`content`, new.`conversation_key`);
END;
--> statement-breakpoint
-- One readable row per turn, in order. Summary rows (is_summary = 1) are left out: they are
-- the summarizer's notes, not something anyone said. Tombstones stay, flagged by is_deleted.
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
