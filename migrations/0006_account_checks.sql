CREATE TABLE "account_checks" (
	"id" bigserial PRIMARY KEY NOT NULL,
	"checked_at" timestamp with time zone DEFAULT now() NOT NULL,
	"source" text NOT NULL,
	"credits" double precision NOT NULL,
	"extra_credits" double precision NOT NULL,
	"balance" double precision NOT NULL,
	"upstream_spent_total" bigint NOT NULL,
	"expected" double precision,
	"drift" double precision,
	"low_threshold" integer NOT NULL,
	"low_alert_armed" boolean NOT NULL,
	"low_alert_sent" boolean DEFAULT false NOT NULL
);
