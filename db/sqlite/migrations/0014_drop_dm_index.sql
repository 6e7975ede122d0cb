-- A DM's addressed-only query is its whole history, so the store reads it without
-- `concerning` through messages_conversation_time_idx; every DM turn wrote this index for it.
DROP INDEX `messages_dm_time_idx`;
