CREATE TABLE "member_settings" (
	"guild_id" text NOT NULL,
	"user_id" text NOT NULL,
	"notify_when_done" boolean,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "member_settings_guild_id_user_id_pk" PRIMARY KEY("guild_id","user_id")
);
--> statement-breakpoint
ALTER TABLE "guilds" ADD COLUMN "notify_when_done" boolean DEFAULT false NOT NULL;--> statement-breakpoint
ALTER TABLE "member_settings" ADD CONSTRAINT "member_settings_guild_id_guilds_id_fk" FOREIGN KEY ("guild_id") REFERENCES "public"."guilds"("id") ON DELETE cascade ON UPDATE no action;