ALTER TABLE `conversations` ADD `title` text;--> statement-breakpoint
ALTER TABLE `conversations` ADD `metadata` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `trace_id` text;--> statement-breakpoint
ALTER TABLE `messages` ADD `sources` text;--> statement-breakpoint
CREATE INDEX `messages_trace_idx` ON `messages` (`trace_id`) WHERE "messages"."trace_id" is not null;--> statement-breakpoint
CREATE INDEX `messages_sources_idx` ON `messages` (`seq`) WHERE "messages"."sources" is not null;--> statement-breakpoint
-- One row per source an agent's reply cites (messages.sources, a JSON array).
CREATE VIEW `message_sources` AS
SELECT m.seq AS message_seq, m.id AS message_id, m.conversation_id, m.participant_id,
  m.timestamp, m.trace_id, s.key + 1 AS position,
  json_extract(s.value, '$.documentId') AS document_id,
  json_extract(s.value, '$.name') AS name,
  json_extract(s.value, '$.chunk') AS chunk,
  json_extract(s.value, '$.score') AS score
FROM messages m, json_each(m.sources) s
WHERE m.sources IS NOT NULL;
