-- One row per message whose `once` buttons a press used, written in the commit that stores the
-- press: a second press of the message, from any process, cannot take it too. Presses stored
-- before this table are not copied in: a press of a message answered then is refused by the
-- bot's read of the presses stored on it, which comes before any commit.
CREATE TABLE `used_messages` (
	`message_seq` integer PRIMARY KEY NOT NULL,
	`press_id` text NOT NULL,
	FOREIGN KEY (`message_seq`) REFERENCES `messages`(`seq`) ON UPDATE no action ON DELETE cascade
);
