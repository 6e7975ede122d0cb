-- Conversation numbers: existing conversations take their rowid, new ones max + 1 (a trigger,
-- so rows inserted with plain SQL get one too).
UPDATE `conversations` SET `number` = `rowid` WHERE `number` IS NULL;
--> statement-breakpoint
CREATE TRIGGER `conversations_number_after_insert` AFTER INSERT ON `conversations`
WHEN new.`number` IS NULL BEGIN
	UPDATE `conversations`
	SET `number` = (SELECT coalesce(max(`number`), 0) + 1 FROM `conversations`)
	WHERE `rowid` = new.`rowid`;
END;
--> statement-breakpoint
-- Full-text search over messages.content. Contentless (the text lives once, in `messages`),
-- with `contentless_delete` so edits and deletes remove a turn's words. The rowid is
-- (conversations.number << 32) | (4294967295 - messages.seq): one conversation's turns are
-- one rowid range, newest first, so a search inside a conversation reads only the start of
-- that range of each word's list (FTS5 seeks fast in ascending rowid order, not descending).
CREATE VIRTUAL TABLE `messages_fts` USING fts5(
	`content`,
	content = '',
	contentless_delete = 1,
	tokenize = 'unicode61 remove_diacritics 2'
);
--> statement-breakpoint
-- Index the rows of a database created before this migration, in rowid order (FTS5 writes
-- ascending rowids without flushing).
INSERT INTO `messages_fts` (`rowid`, `content`)
SELECT (`c`.`number` << 32) | (4294967295 - `m`.`seq`), `m`.`content`
FROM `conversations` `c`
JOIN `messages` `m` ON `m`.`conversation_id` = `c`.`id`
ORDER BY 1;
--> statement-breakpoint
INSERT INTO `messages_fts` (`messages_fts`) VALUES ('optimize');
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
-- Deleting a conversation cascades to its turns after its row is gone, when their rowids can
-- no longer be computed: drop its whole range first.
CREATE TRIGGER `conversations_fts_before_delete` BEFORE DELETE ON `conversations` BEGIN
	DELETE FROM `messages_fts`
	WHERE `rowid` BETWEEN old.`number` << 32 AND (old.`number` << 32) | 4294967295;
END;
