-- A platform's or a retriever's bad value (a file size or a score that is not a number, a
-- list that is not a list) reads as NULL in its own row of the views, never fails the query.
CREATE OR REPLACE VIEW message_attachments AS
SELECT m.seq AS message_seq, m.id AS message_id, m.conversation_id, m.participant_id,
	m.timestamp, m.channel_type, a.position,
	a.value ->> 'kind' AS kind,
	a.value ->> 'name' AS name,
	a.value ->> 'mimeType' AS mime_type,
	CASE WHEN jsonb_typeof(a.value -> 'size') = 'number'
		AND (a.value ->> 'size') ~ '^[0-9]{1,18}$' THEN (a.value ->> 'size')::bigint END AS size,
	a.value ->> 'platformFileId' AS platform_file_id,
	a.value ->> 'url' AS url
FROM messages m
CROSS JOIN LATERAL jsonb_array_elements(
	CASE WHEN jsonb_typeof(m.attachments) = 'array' THEN m.attachments END)
	WITH ORDINALITY AS a(value, position)
WHERE m.attachments IS NOT NULL;
--> statement-breakpoint
CREATE OR REPLACE VIEW message_sources AS
SELECT m.seq AS message_seq, m.id AS message_id, m.conversation_id, m.participant_id,
	m.timestamp, m.trace_id, s.position,
	s.value ->> 'documentId' AS document_id,
	s.value ->> 'name' AS name,
	s.value ->> 'chunk' AS chunk,
	CASE WHEN jsonb_typeof(s.value -> 'score') = 'number'
		THEN (s.value ->> 'score')::double precision END AS score
FROM messages m
CROSS JOIN LATERAL jsonb_array_elements(
	CASE WHEN jsonb_typeof(m.sources) = 'array' THEN m.sources END)
	WITH ORDINALITY AS s(value, position)
WHERE m.sources IS NOT NULL;
