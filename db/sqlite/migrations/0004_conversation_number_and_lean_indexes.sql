DROP INDEX `message_mentions_lookup_idx`;--> statement-breakpoint
DROP INDEX `messages_conversation_reply_to_idx`;--> statement-breakpoint
CREATE INDEX `messages_conversation_reply_to_idx` ON `messages` (`conversation_id`,`reply_to_participant_id`,`timestamp`) WHERE "messages"."reply_to_participant_id" is not null;--> statement-breakpoint
ALTER TABLE `messages` DROP COLUMN `conversation_key`;--> statement-breakpoint
ALTER TABLE `conversations` ADD `number` integer;--> statement-breakpoint
CREATE UNIQUE INDEX `conversations_number_uq` ON `conversations` (`number`);