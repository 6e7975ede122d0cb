CREATE TABLE "scheduled_posts" (
	"id" text PRIMARY KEY NOT NULL,
	"conversation_id" text NOT NULL,
	"channel_type" text NOT NULL,
	"message" jsonb NOT NULL,
	"participant" jsonb NOT NULL,
	"due_at" timestamp(3) with time zone NOT NULL,
	"status" text NOT NULL,
	"created_at" timestamp(3) with time zone NOT NULL,
	"claimed_by" text,
	"claimed_until" timestamp(3) with time zone,
	"error" text
);
--> statement-breakpoint
CREATE INDEX "scheduled_posts_due_idx" ON "scheduled_posts" USING btree ("due_at") WHERE "scheduled_posts"."status" = 'pending';
