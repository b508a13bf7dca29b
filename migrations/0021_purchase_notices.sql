ALTER TABLE "entitlements" ADD COLUMN "buyer_told_at" timestamp with time zone;--> statement-breakpoint
ALTER TABLE "premium_offers" ADD COLUMN "locale" text;