-- Search moves to an FTS5 index whose rowids keep each conversation's turns together
-- (0005). First drop the index keyed by `conversation_key` and its triggers, so that 0004
-- can drop the `conversation_key` column they read.
DROP TRIGGER IF EXISTS `messages_fts_after_insert`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `messages_fts_after_delete`;
--> statement-breakpoint
DROP TRIGGER IF EXISTS `messages_fts_after_update`;
--> statement-breakpoint
DROP TABLE IF EXISTS `messages_fts`;
