-- The same view as the SQLite schema's `interactions`: one row per slash command or button
-- press (`messages.metadata.interaction`).
CREATE INDEX messages_interaction_idx ON messages (seq) WHERE (metadata -> 'interaction' ->> 'type') IS NOT NULL;
--> statement-breakpoint
CREATE VIEW interactions AS
SELECT
	m.seq AS message_seq,
	m.id AS message_id,
	m.conversation_id,
	m.channel_type,
	m.timestamp,
	m.participant_id,
	coalesce(p.display_name, m.participant_id) AS person,
	m.metadata -> 'interaction' ->> 'type' AS kind,
	m.metadata -> 'interaction' ->> 'name' AS command,
	m.metadata -> 'interaction' ->> 'args' AS args,
	m.metadata -> 'interaction' ->> 'id' AS action_id,
	m.metadata -> 'interaction' ->> 'value' AS value,
	m.metadata -> 'interaction' ->> 'on' AS on_message_id,
	m.metadata -> 'interaction' ->> 'agent' AS agent_id,
	m.metadata -> 'interaction' ->> 'refused' AS refused,
	m.content AS text
FROM messages m
LEFT JOIN participants p ON p.id = m.participant_id
WHERE (m.metadata -> 'interaction' ->> 'type') IS NOT NULL;
