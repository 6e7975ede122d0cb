-- The same views as the SQLite schema: `transcript` (one readable line per turn) and
-- `message_sources` (one row per source an agent reply cites).
CREATE VIEW transcript AS
SELECT
	m.conversation_id,
	m.seq,
	m.timestamp,
	m.channel_type,
	coalesce(p.display_name, m.participant_id) AS speaker,
	m.participant_id AS speaker_id,
	p.kind AS speaker_kind,
	m.content AS text,
	coalesce(rp.display_name, m.reply_to_participant_id) AS replying_to,
	m.reply_to_participant_id AS replying_to_id,
	m.edited_at IS NOT NULL AS is_edited,
	m.deleted_at IS NOT NULL AS is_deleted,
	m.edited_at,
	m.deleted_at,
	'[' || to_char(m.timestamp AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') || '] '
		|| coalesce(p.display_name, m.participant_id) || ': ' || m.content
		|| CASE WHEN m.edited_at IS NOT NULL THEN ' (edited)' ELSE '' END
		|| CASE WHEN m.deleted_at IS NOT NULL THEN ' (deleted)' ELSE '' END AS line
FROM messages m
JOIN participants p ON p.id = m.participant_id
LEFT JOIN participants rp ON rp.id = m.reply_to_participant_id
WHERE NOT m.is_summary
ORDER BY m.conversation_id, m.timestamp, m.seq;
--> statement-breakpoint
CREATE VIEW message_sources AS
SELECT m.seq AS message_seq, m.id AS message_id, m.conversation_id, m.participant_id,
	m.timestamp, m.trace_id, s.position,
	s.value ->> 'documentId' AS document_id,
	s.value ->> 'name' AS name,
	s.value ->> 'chunk' AS chunk,
	(s.value ->> 'score')::double precision AS score
FROM messages m
CROSS JOIN LATERAL jsonb_array_elements(m.sources) WITH ORDINALITY AS s(value, position)
WHERE m.sources IS NOT NULL;
