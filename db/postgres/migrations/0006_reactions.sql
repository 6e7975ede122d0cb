CREATE TABLE "message_reactions" (
	"message_seq" bigint NOT NULL,
	"message_id" text NOT NULL,
	"participant_id" text NOT NULL,
	"reaction" text NOT NULL,
	"added_at" timestamp(3) with time zone NOT NULL,
	"removed_at" timestamp(3) with time zone
);
--> statement-breakpoint
ALTER TABLE "message_reactions" ADD CONSTRAINT "message_reactions_message_seq_messages_seq_fk" FOREIGN KEY ("message_seq") REFERENCES "public"."messages"("seq") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "message_reactions_message_idx" ON "message_reactions" USING btree ("message_seq","participant_id","reaction");--> statement-breakpoint
CREATE INDEX "message_reactions_added_idx" ON "message_reactions" USING btree ("added_at");