-- One row per slash command or button press (`messages.metadata.interaction`): what was run
-- or pressed, by whom, on which message, and which agent answered it (or why it was refused).
CREATE INDEX `messages_interaction_idx` ON `messages` (`seq`) WHERE json_extract(`metadata`, '$.interaction.type') IS NOT NULL;
--> statement-breakpoint
CREATE VIEW `interactions` AS
SELECT
	`m`.`seq` AS `message_seq`,
	`m`.`id` AS `message_id`,
	`m`.`conversation_id` AS `conversation_id`,
	`m`.`channel_type` AS `channel_type`,
	`m`.`timestamp` AS `timestamp`,
	`m`.`participant_id` AS `participant_id`,
	coalesce(`p`.`display_name`, `m`.`participant_id`) AS `person`,
	json_extract(`m`.`metadata`, '$.interaction.type') AS `kind`,
	json_extract(`m`.`metadata`, '$.interaction.name') AS `command`,
	json_extract(`m`.`metadata`, '$.interaction.args') AS `args`,
	json_extract(`m`.`metadata`, '$.interaction.id') AS `action_id`,
	json_extract(`m`.`metadata`, '$.interaction.value') AS `value`,
	json_extract(`m`.`metadata`, '$.interaction.on') AS `on_message_id`,
	json_extract(`m`.`metadata`, '$.interaction.agent') AS `agent_id`,
	json_extract(`m`.`metadata`, '$.interaction.refused') AS `refused`,
	`m`.`content` AS `text`
FROM `messages` `m`
LEFT JOIN `participants` `p` ON `p`.`id` = `m`.`participant_id`
WHERE json_extract(`m`.`metadata`, '$.interaction.type') IS NOT NULL;
