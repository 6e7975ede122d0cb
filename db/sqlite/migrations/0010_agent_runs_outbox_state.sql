CREATE TABLE `agent_runs` (
	`id` text PRIMARY KEY NOT NULL,
	`message_id` text NOT NULL,
	`conversation_id` text NOT NULL,
	`agent_id` text NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`started_at` text,
	`finished_at` text,
	`model` text,
	`input_tokens` integer,
	`output_tokens` integer,
	`reply_id` text,
	`error` text,
	`attempts` integer DEFAULT 0 NOT NULL,
	`prompt` text
);
--> statement-breakpoint
CREATE INDEX `agent_runs_message_idx` ON `agent_runs` (`message_id`);--> statement-breakpoint
CREATE INDEX `agent_runs_reply_idx` ON `agent_runs` (`reply_id`) WHERE "agent_runs"."reply_id" is not null;--> statement-breakpoint
CREATE INDEX `agent_runs_unfinished_idx` ON `agent_runs` (`status`,`created_at`) WHERE "agent_runs"."status" in ('pending', 'running');--> statement-breakpoint
CREATE INDEX `agent_runs_created_idx` ON `agent_runs` (`created_at`);--> statement-breakpoint
CREATE TABLE `colloquy_state` (
	`key` text PRIMARY KEY NOT NULL,
	`value` text NOT NULL,
	`updated_at` text NOT NULL
);
--> statement-breakpoint
ALTER TABLE `messages` ADD `delivery` text;