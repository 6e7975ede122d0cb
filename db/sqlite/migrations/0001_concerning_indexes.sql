ALTER TABLE `message_mentions` ADD `timestamp` text DEFAULT '' NOT NULL;--> statement-breakpoint
CREATE INDEX `message_mentions_time_idx` ON `message_mentions` (`conversation_id`,`participant_id`,`timestamp`,`message_seq`);--> statement-breakpoint
ALTER TABLE `messages` ADD `conversation_key` text GENERATED ALWAYS AS (('c' || hex(conversation_id))) VIRTUAL;--> statement-breakpoint
CREATE INDEX `messages_dm_time_idx` ON `messages` (`conversation_id`,`timestamp`,`seq`) WHERE "messages"."scope" = 'dm';--> statement-breakpoint
-- Mentions written before this migration get their turn's timestamp.
UPDATE `message_mentions` SET `timestamp` = coalesce((SELECT `m`.`timestamp` FROM `messages` `m` WHERE `m`.`seq` = `message_mentions`.`message_seq`), '') WHERE `timestamp` = '';
