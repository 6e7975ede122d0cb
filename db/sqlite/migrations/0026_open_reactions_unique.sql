DELETE FROM `message_reactions` WHERE `removed_at` IS NULL AND EXISTS (SELECT 1 FROM `message_reactions` `o`
  WHERE `o`.`removed_at` IS NULL AND `o`.`message_seq` = `message_reactions`.`message_seq`
    AND `o`.`participant_id` = `message_reactions`.`participant_id` AND `o`.`reaction` = `message_reactions`.`reaction`
    AND (`o`.`added_at`, `o`.`rowid`) < (`message_reactions`.`added_at`, `message_reactions`.`rowid`));--> statement-breakpoint
CREATE UNIQUE INDEX `message_reactions_open_uq` ON `message_reactions` (`message_seq`,`participant_id`,`reaction`) WHERE `message_reactions`.`removed_at` is null;
