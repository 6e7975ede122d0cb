-- While the writer thread commits a batch of turns it puts one row here (never committed), and
-- indexes the batch's new turns at its end, in rowid order: FTS5 then writes them as one
-- segment, where one by one (each turn newest-first in its range) costs a segment each.
CREATE TABLE `messages_fts_pending` (
	`after_seq` integer PRIMARY KEY NOT NULL
);
--> statement-breakpoint
DROP TRIGGER `messages_fts_after_insert`;
--> statement-breakpoint
-- Turns inserted any other way (plain SQL included) are indexed as they are inserted.
CREATE TRIGGER `messages_fts_after_insert` AFTER INSERT ON `messages`
WHEN NOT EXISTS (SELECT 1 FROM `messages_fts_pending`) BEGIN
	INSERT INTO `messages_fts` (`rowid`, `content`)
	SELECT (`c`.`number` << 32) | (4294967295 - new.`seq`), new.`content`
	FROM `conversations` `c` WHERE `c`.`id` = new.`conversation_id`;
END;
