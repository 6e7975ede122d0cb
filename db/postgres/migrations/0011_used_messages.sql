-- The same table as the SQLite schema's `used_messages`: one row per message whose `once`
-- buttons a press used, taken in the commit that stores the press.
CREATE TABLE "used_messages" (
	"message_seq" bigint PRIMARY KEY NOT NULL,
	"press_id" text NOT NULL
);
--> statement-breakpoint
ALTER TABLE "used_messages" ADD CONSTRAINT "used_messages_message_seq_messages_seq_fk" FOREIGN KEY ("message_seq") REFERENCES "public"."messages"("seq") ON DELETE cascade ON UPDATE no action;
