CREATE TABLE `message_reactions` (
	`message_seq` integer NOT NULL,
	`message_id` text NOT NULL,
	`participant_id` text NOT NULL,
	`reaction` text NOT NULL,
	`added_at` text NOT NULL,
	`removed_at` text,
	FOREIGN KEY (`message_seq`) REFERENCES `messages`(`seq`) ON UPDATE no action ON DELETE cascade
);
--> statement-breakpoint
CREATE INDEX `message_reactions_message_idx` ON `message_reactions` (`message_seq`,`participant_id`,`reaction`);--> statement-breakpoint
CREATE INDEX `message_reactions_added_idx` ON `message_reactions` (`added_at`);
