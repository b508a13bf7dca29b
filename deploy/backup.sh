#!/usr/bin/env bash
# A dump of the bot's database in pg_dump's custom format, then the dumps older than the days
# to keep removed. A dump that fails leaves no file, and removes nothing.
#
#   deploy/backup.sh <folder> [days to keep, default 14]
#
# The database: DATABASE_URL, with a pg_dump of the server's major version on the PATH; or, with
# COMPOSE=1, the compose file's postgres service (run from the folder of docker-compose.yml).
# Prints the dump's path.
set -euo pipefail
folder=${1:?usage: deploy/backup.sh <folder> [days to keep]}
keep=${2:-14}
[[ "$keep" =~ ^[0-9]+$ ]] || { echo "days to keep: a whole number, not $keep" >&2; exit 2; }
mkdir -p "$folder"
file="$folder/musicbot-$(date -u +%Y-%m-%dT%H%M%SZ).dump"
trap 'rm -f "$file.partial"' EXIT
if [ "${COMPOSE:-0}" = 1 ]; then
  docker compose exec -T postgres pg_dump -U musicbot --format=custom musicbot >"$file.partial"
else
  pg_dump --format=custom --file="$file.partial" --dbname="${DATABASE_URL:?set DATABASE_URL, or COMPOSE=1}"
fi
mv "$file.partial" "$file"
find "$folder" -maxdepth 1 -name 'musicbot-*.dump' -mtime +"$keep" -delete
echo "$file"
