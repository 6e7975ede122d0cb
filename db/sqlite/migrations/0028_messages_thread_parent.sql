-- The few thread turns (`metadata.threadParent`), by the turn they retell: forgetting a person
-- finds the threads under their turns here instead of reading every turn.
CREATE INDEX `messages_thread_parent_idx` ON `messages` (json_extract("metadata", '$.threadParent.id')) WHERE json_extract("messages"."metadata", '$.threadParent.id') IS NOT NULL;
