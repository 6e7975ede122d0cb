CREATE INDEX "agent_runs_conversation_idx" ON "agent_runs" USING btree ("conversation_id","status");
