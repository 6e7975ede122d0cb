DELETE FROM "message_reactions" "r" USING "message_reactions" "o"
  WHERE "r"."removed_at" IS NULL AND "o"."removed_at" IS NULL AND "o"."message_seq" = "r"."message_seq"
    AND "o"."participant_id" = "r"."participant_id" AND "o"."reaction" = "r"."reaction"
    AND ("o"."added_at", "o"."ctid") < ("r"."added_at", "r"."ctid");--> statement-breakpoint
CREATE UNIQUE INDEX "message_reactions_open_uq" ON "message_reactions" USING btree ("message_seq","participant_id","reaction") WHERE "message_reactions"."removed_at" is null;
