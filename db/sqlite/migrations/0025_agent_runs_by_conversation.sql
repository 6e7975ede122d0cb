CREATE INDEX `agent_runs_conversation_idx` ON `agent_runs` (`conversation_id`,`status`);
