ALTER TABLE `messages` ADD `reasoning` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `delegation_id` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `delegated_by` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `delegated_to` text;--> statement-breakpoint
CREATE INDEX `messages_delegation_idx` ON `messages` (`delegation_id`,`seq`) WHERE "messages"."delegation_id" is not null;