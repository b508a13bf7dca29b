CREATE TABLE "guild_blocked_words" (
	"guild_id" text NOT NULL,
	"entry" text NOT NULL,
	"added_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "guild_blocked_words_guild_id_entry_pk" PRIMARY KEY("guild_id","entry")
);
--> statement-breakpoint
ALTER TABLE "guilds" ADD COLUMN "blocklist_version" integer DEFAULT 0 NOT NULL;--> statement-breakpoint
ALTER TABLE "guild_blocked_words" ADD CONSTRAINT "guild_blocked_words_guild_id_guilds_id_fk" FOREIGN KEY ("guild_id") REFERENCES "public"."guilds"("id") ON DELETE cascade ON UPDATE no action;