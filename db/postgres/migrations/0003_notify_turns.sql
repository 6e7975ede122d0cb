-- `colloquy tail --follow` listens on `colloquy_turns`: one notification per transaction that
-- stored turns (Postgres folds identical notifications of one transaction into one), sent at
-- commit. The follower then reads by its (txid, seq) cursor.
CREATE FUNCTION colloquy_notify_turns() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	PERFORM pg_notify('colloquy_turns', '');
	RETURN NULL;
END;
$$;
--> statement-breakpoint
CREATE TRIGGER messages_notify_turns AFTER INSERT ON messages
	FOR EACH STATEMENT EXECUTE FUNCTION colloquy_notify_turns();
