CREATE TABLE `scheduled_posts` (
	`id` text PRIMARY KEY NOT NULL,
	`conversation_id` text NOT NULL,
	`channel_type` text NOT NULL,
	`message` text NOT NULL,
	`participant` text NOT NULL,
	`due_at` text NOT NULL,
	`status` text NOT NULL,
	`created_at` text NOT NULL,
	`claimed_by` text,
	`claimed_until` text,
	`error` text
);
--> statement-breakpoint
CREATE INDEX `scheduled_posts_due_idx` ON `scheduled_posts` (`due_at`) WHERE "scheduled_posts"."status" = 'pending';
