-- A turn given the platform's time when its delivery is confirmed moves its conversation's
-- times with it: `created_at` and `last_message_at` are the earliest and latest of the turns
-- that now stand (two lookups in messages_conversation_time_idx), also when the newest turn
-- moves earlier. Its author's seen times take the new time when it lies outside them.
CREATE TRIGGER `messages_tallies_after_retime` AFTER UPDATE OF `timestamp` ON `messages`
WHEN new.`timestamp` IS NOT old.`timestamp` BEGIN
	UPDATE `conversations` SET
		`created_at` = coalesce((SELECT min(`timestamp`) FROM `messages`
			WHERE `conversation_id` = new.`conversation_id`), `created_at`),
		`last_message_at` = coalesce((SELECT max(`timestamp`) FROM `messages`
			WHERE `conversation_id` = new.`conversation_id`), `last_message_at`)
	WHERE `id` = new.`conversation_id`;
	UPDATE `participants` SET
		`first_seen_at` = min(`first_seen_at`, new.`timestamp`),
		`last_seen_at` = max(`last_seen_at`, new.`timestamp`)
	WHERE `id` = new.`participant_id`
		AND (new.`timestamp` < `first_seen_at` OR new.`timestamp` > `last_seen_at`);
END;
