CREATE TABLE "guild_member_blocks" (
	"guild_id" text NOT NULL,
	"user_id" text NOT NULL,
	"until" timestamp with time zone,
	"reason" text,
	"blocked_by" text NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "guild_member_blocks_guild_id_user_id_pk" PRIMARY KEY("guild_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "guild_member_blocks" ADD CONSTRAINT "guild_member_blocks_guild_id_guilds_id_fk" FOREIGN KEY ("guild_id") REFERENCES "public"."guilds"("id") ON DELETE cascade ON UPDATE no action;