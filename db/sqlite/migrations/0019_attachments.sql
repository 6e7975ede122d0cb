ALTER TABLE `messages` ADD `attachments` text;--> statement-breakpoint
CREATE INDEX `messages_attachments_idx` ON `messages` (`timestamp`) WHERE "messages"."attachments" is not null;--> statement-breakpoint
-- One row per file a turn carried (messages.attachments, a JSON array of references).
CREATE VIEW `message_attachments` AS
SELECT m.seq AS message_seq, m.id AS message_id, m.conversation_id, m.participant_id,
  m.timestamp, m.channel_type, a.key + 1 AS position,
  json_extract(a.value, '$.kind') AS kind,
  json_extract(a.value, '$.name') AS name,
  json_extract(a.value, '$.mimeType') AS mime_type,
  json_extract(a.value, '$.size') AS size,
  json_extract(a.value, '$.platformFileId') AS platform_file_id,
  json_extract(a.value, '$.url') AS url
FROM messages m, json_each(m.attachments) a
WHERE m.attachments IS NOT NULL;
