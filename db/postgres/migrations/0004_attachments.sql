ALTER TABLE "messages" ADD COLUMN "attachments" jsonb;--> statement-breakpoint
CREATE INDEX "messages_attachments_idx" ON "messages" USING btree ("timestamp") WHERE "messages"."attachments" is not null;--> statement-breakpoint
-- One row per file a turn carried (messages.attachments, a JSON array of references).
CREATE VIEW message_attachments AS
SELECT m.seq AS message_seq, m.id AS message_id, m.conversation_id, m.participant_id,
	m.timestamp, m.channel_type, a.position,
	a.value ->> 'kind' AS kind,
	a.value ->> 'name' AS name,
	a.value ->> 'mimeType' AS mime_type,
	(a.value ->> 'size')::bigint AS size,
	a.value ->> 'platformFileId' AS platform_file_id,
	a.value ->> 'url' AS url
FROM messages m
CROSS JOIN LATERAL jsonb_array_elements(m.attachments) WITH ORDINALITY AS a(value, position)
WHERE m.attachments IS NOT NULL;
