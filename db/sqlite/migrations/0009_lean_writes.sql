-- One write path commits batches in one transaction, each op in a savepoint: the insert
-- trigger indexes every turn as it is inserted again, and the table that held it back goes.
DROP TRIGGER `messages_fts_after_insert`;
--> statement-breakpoint
CREATE TRIGGER `messages_fts_after_insert` AFTER INSERT ON `messages` BEGIN
	INSERT INTO `messages_fts` (`rowid`, `content`)
	SELECT (`c`.`number` << 32) | (4294967295 - new.`seq`), new.`content`
	FROM `conversations` `c` WHERE `c`.`id` = new.`conversation_id`;
END;
--> statement-breakpoint
DROP TABLE `messages_fts_pending`;
--> statement-breakpoint
-- Every turn moves its conversation's last_message_at: two index entries rewritten per commit
-- for a listing that sorts a few thousand rows at most.
DROP INDEX `conversations_last_message_at_idx`;
--> statement-breakpoint
DROP INDEX `conversations_channel_type_last_idx`;
--> statement-breakpoint
-- Only forget and the listing's participant filter read it; both go through
-- messages_conversation_participant_idx now.
DROP INDEX `messages_participant_time_idx`;
