-- The addressed-only read's "turns it wrote" no longer needs an index entry for every turn:
-- an agent's aliases are agents (or the system), so `messages_conversation_author_idx` holds
-- only the turns whose author did not write as a person, marked by `author_kind` (the kind
-- the turn was written as). `conversation_authors` says who wrote in a conversation at all,
-- and as what kind, one row each: the listing and the web page filter by it, and a read
-- asking for a person's turns knows from it whether the conversation holds any.
CREATE TABLE `conversation_authors` (
	`conversation_id` text NOT NULL,
	`participant_id` text NOT NULL,
	`author_kind` text NOT NULL,
	PRIMARY KEY(`conversation_id`, `participant_id`, `author_kind`)
) WITHOUT ROWID;
--> statement-breakpoint
DROP INDEX `messages_conversation_participant_idx`;
--> statement-breakpoint
ALTER TABLE `messages` ADD `author_kind` text DEFAULT 'user' NOT NULL;
--> statement-breakpoint
-- What each turn was written as is not known for the turns already stored: their author's
-- kind now stands for it.
UPDATE `messages` SET `author_kind` = `p`.`kind`
FROM `participant_rows` `p`
WHERE `p`.`id` = `messages`.`participant_id` AND `p`.`kind` <> 'user';
--> statement-breakpoint
INSERT INTO `conversation_authors` (`conversation_id`, `participant_id`, `author_kind`)
SELECT DISTINCT `conversation_id`, `participant_id`, `author_kind` FROM `messages`;
--> statement-breakpoint
CREATE INDEX `messages_conversation_author_idx` ON `messages` (`conversation_id`,`participant_id`,`timestamp`) WHERE "messages"."author_kind" <> 'user';
--> statement-breakpoint
-- Every inserted turn names its author's row, however it is inserted; written only when new.
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
CREATE TRIGGER `conversation_rows_authors_after_delete` AFTER DELETE ON `conversation_rows` BEGIN
	DELETE FROM `conversation_authors` WHERE `conversation_id` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `participant_rows_authors_after_delete` AFTER DELETE ON `participant_rows` BEGIN
	DELETE FROM `conversation_authors` WHERE `participant_id` = old.`id`;
END;
