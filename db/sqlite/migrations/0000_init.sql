CREATE TABLE `conversations` (
	`id` text PRIMARY KEY NOT NULL,
	`channel_type` text NOT NULL,
	`channel_id` text NOT NULL,
	`channel_name` text,
	`thread_id` text,
	`scope` text NOT NULL,
	`created_at` text NOT NULL,
	`last_message_at` text NOT NULL,
	`message_count` integer DEFAULT 0 NOT NULL
);
--> statement-breakpoint
CREATE INDEX `conversations_last_message_at_idx` ON `conversations` (`last_message_at`);--> statement-breakpoint
CREATE INDEX `conversations_channel_type_last_idx` ON `conversations` (`channel_type`,`last_message_at`);--> statement-breakpoint
CREATE TABLE `message_mentions` (
	`message_seq` integer NOT NULL,
	`conversation_id` text NOT NULL,
	`participant_id` text NOT NULL,
	PRIMARY KEY(`message_seq`, `participant_id`),
	FOREIGN KEY (`message_seq`) REFERENCES `messages`(`seq`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `message_mentions_lookup_idx` ON `message_mentions` (`conversation_id`,`participant_id`,`message_seq`);--> statement-breakpoint
CREATE INDEX `message_mentions_participant_idx` ON `message_mentions` (`participant_id`);--> statement-breakpoint
CREATE TABLE `message_revisions` (
	`id` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`message_seq` integer NOT NULL,
	`content` text NOT NULL,
	`replaced_at` text NOT NULL,
	FOREIGN KEY (`message_seq`) REFERENCES `messages`(`seq`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `message_revisions_message_idx` ON `message_revisions` (`message_seq`,`id`);--> statement-breakpoint
CREATE TABLE `messages` (
	`seq` integer PRIMARY KEY AUTOINCREMENT NOT NULL,
	`id` text NOT NULL,
	`conversation_id` text NOT NULL,
	`participant_id` text NOT NULL,
	`content` text NOT NULL,
	`timestamp` text NOT NULL,
	`scope` text NOT NULL,
	`channel_type` text NOT NULL,
	`channel_id` text NOT NULL,
	`thread_id` text,
	`platform_message_id` text,
	`reply_to_message_id` text,
	`reply_to_participant_id` text,
	`is_summary` integer DEFAULT false NOT NULL,
	`summary_for_agent_id` text,
	`edited_at` text,
	`deleted_at` text,
	`metadata` text DEFAULT '{}' NOT NULL,
	`created_at` text DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now')) NOT NULL,
	FOREIGN KEY (`conversation_id`) REFERENCES `conversations`(`id`) ON UPDATE no action ON DELETE cascade,
	FOREIGN KEY (`participant_id`) REFERENCES `participants`(`id`) ON UPDATE no action ON DELETE no action
);
--> statement-breakpoint
CREATE UNIQUE INDEX `messages_id_uq` ON `messages` (`id`);--> statement-breakpoint
CREATE UNIQUE INDEX `messages_platform_uq` ON `messages` (`channel_type`,`channel_id`,`platform_message_id`) WHERE "messages"."platform_message_id" is not null;--> statement-breakpoint
CREATE INDEX `messages_conversation_time_idx` ON `messages` (`conversation_id`,`timestamp`,`seq`);--> statement-breakpoint
CREATE INDEX `messages_conversation_participant_idx` ON `messages` (`conversation_id`,`participant_id`,`timestamp`);--> statement-breakpoint
CREATE INDEX `messages_participant_time_idx` ON `messages` (`participant_id`,`timestamp`);--> statement-breakpoint
CREATE INDEX `messages_conversation_reply_to_idx` ON `messages` (`conversation_id`,`reply_to_participant_id`,`timestamp`);--> statement-breakpoint
CREATE INDEX `messages_summary_idx` ON `messages` (`conversation_id`,`summary_for_agent_id`,`seq`) WHERE "messages"."is_summary" = 1;--> statement-breakpoint
CREATE TABLE `participants` (
	`id` text PRIMARY KEY NOT NULL,
	`kind` text NOT NULL,
	`display_name` text,
	`first_seen_at` text NOT NULL,
	`last_seen_at` text NOT NULL
);
