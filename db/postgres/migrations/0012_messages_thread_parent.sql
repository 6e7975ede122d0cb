-- The same index as the SQLite schema's `messages_thread_parent_idx`: the few thread turns
-- (`metadata.threadParent`), by the turn they retell, which forgetting a person looks up.
-- ANALYZE keeps no statistics for a partial index's expression; those on the expression tell
-- the planner how few turns are a thread's, so it reads them from the index.
CREATE INDEX "messages_thread_parent_idx" ON "messages" USING btree (("metadata"->'threadParent'->>'id')) WHERE "messages"."metadata"->'threadParent'->>'id' IS NOT NULL;
--> statement-breakpoint
CREATE STATISTICS "messages_thread_parent_stats" ON (("metadata"->'threadParent'->>'id')) FROM "messages";
