-- The addressed-only read's "turns it wrote" no longer needs an index entry for every turn:
-- the agent's aliases are agents (or the system), so `messages_conversation_author_idx` holds
-- only the turns whose author is not a person, marked by `author_kind` (kept equal to the
-- author's kind in `participant_rows`). Who wrote in a conversation at all, which the listing
-- and the web page filter by, is `conversation_authors`, one row per pair.
CREATE TABLE `conversation_authors` (
	`conversation_id` text NOT NULL,
	`participant_id` text NOT NULL,
	PRIMARY KEY(`conversation_id`, `participant_id`)
) WITHOUT ROWID;
--> statement-breakpoint
INSERT INTO `conversation_authors` (`conversation_id`, `participant_id`)
SELECT DISTINCT `conversation_id`, `participant_id` FROM `messages`;
--> statement-breakpoint
DROP INDEX `messages_conversation_participant_idx`;
--> statement-breakpoint
ALTER TABLE `messages` ADD `author_kind` text DEFAULT 'user' NOT NULL;
--> statement-breakpoint
UPDATE `messages` SET `author_kind` = `p`.`kind`
FROM `participant_rows` `p`
WHERE `p`.`id` = `messages`.`participant_id` AND `p`.`kind` <> 'user';
--> statement-breakpoint
CREATE INDEX `messages_conversation_author_idx` ON `messages` (`conversation_id`,`participant_id`,`timestamp`) WHERE "messages"."author_kind" <> 'user';
--> statement-breakpoint
-- Every inserted turn names its pair, however it is inserted; written only when it is new.
CREATE TRIGGER `messages_authors_after_insert` AFTER INSERT ON `messages` BEGIN
	INSERT OR IGNORE INTO `conversation_authors` (`conversation_id`, `participant_id`)
	VALUES (new.`conversation_id`, new.`participant_id`);
END;
--> statement-breakpoint
CREATE TRIGGER `messages_authors_after_update` AFTER UPDATE OF `conversation_id`,
	`participant_id` ON `messages` BEGIN
	INSERT OR IGNORE INTO `conversation_authors` (`conversation_id`, `participant_id`)
	VALUES (new.`conversation_id`, new.`participant_id`);
END;
--> statement-breakpoint
-- A person who becomes an agent (or back) moves their turns into (or out of) the index.
CREATE TRIGGER `participant_rows_kind_after_update` AFTER UPDATE OF `kind` ON `participant_rows`
WHEN new.`kind` IS NOT old.`kind` BEGIN
	UPDATE `messages` SET `author_kind` = new.`kind` WHERE `participant_id` = new.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `conversation_rows_authors_after_delete` AFTER DELETE ON `conversation_rows` BEGIN
	DELETE FROM `conversation_authors` WHERE `conversation_id` = old.`id`;
END;
--> statement-breakpoint
CREATE TRIGGER `participant_rows_authors_after_delete` AFTER DELETE ON `participant_rows` BEGIN
	DELETE FROM `conversation_authors` WHERE `participant_id` = old.`id`;
END;
