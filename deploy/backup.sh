#!/usr/bin/env bash
# Backs up what the docker-compose deployment cannot rebuild (docs/operations.md §8), into
# DEST/YYYYMMDDTHHMMSSZ/ on this host:
#
#   monitor.db             the monitor's SQLite database (episodes, drafts, users, audit log),
#                          copied online by `monitor backup` (VACUUM INTO): the monitor keeps running
#   monitor-signing.key    the monitor's ed25519 key that signs the drafts (SECRET: whoever has it
#                          can sign drafts in the municipality's name)
#   registry/              the registry YAML (personal data of drivers), when there is one
#   influxdb/              `influx backup` of InfluxDB (readings; --no-influx leaves it out)
#   grafana.db             Grafana's users and preferences (the dashboards are in the repository)
#   SHA256SUMS
#
# Usage: deploy/backup.sh [--no-influx] [--keep-days N] [DEST]     (DEST default: ./backups)
#
#   --keep-days N   afterwards, delete backups in DEST older than N days (the backups hold
#                   personal data: keep them no longer than the municipality's rules say)
#
# Run it from the compose project directory, as a user allowed to run docker, e.g. daily from
# cron:   30 3 * * *  cd /srv/trenzinho && deploy/backup.sh --keep-days 35 /srv/backups/trenzinho
# Copy DEST off this machine. .env, certs/ and secrets/ are not copied: keep them, once, in the
# municipality's safe place for secrets.
set -euo pipefail

die() { echo "backup: $*" >&2; exit 1; }

influx=true
keep_days=""
dest=""
while [ $# -gt 0 ]; do
	case "$1" in
	--no-influx) influx=false; shift ;;
	--keep-days) keep_days="${2:?--keep-days needs a number}"; shift 2 ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) [ -z "$dest" ] || die "one destination only"; dest="$1"; shift ;;
	esac
done
dest="${dest:-./backups}"
case "$keep_days" in '' | *[!0-9]*) [ -z "$keep_days" ] || die "--keep-days: not a number: $keep_days" ;; esac
[ -f docker-compose.yml ] || die "run it from the compose project directory (where docker-compose.yml is)"
command -v docker >/dev/null || die "docker not found"

stamp="$(date -u +%Y%m%dT%H%M%SZ)"
out="$(mkdir -p "$dest" && cd "$dest" && pwd)/$stamp"
umask 077
mkdir -p "$out"
dc() { docker compose "$@"; }

# The monitor's database: a one-shot container of the monitor's image, with its volumes and
# TRENZINHO_DB, writes the copy straight into the backup directory. It runs as the image's user
# (65532), which may write only there.
mkdir -p "$out/monitor"
chown 65532:65532 "$out/monitor" 2>/dev/null || chmod 777 "$out/monitor"
dc run --rm --no-deps -T -v "$out/monitor:/backup" monitor /usr/local/bin/monitor backup /backup/monitor.db
mv "$out/monitor/monitor.db" "$out/monitor.db"
rmdir "$out/monitor"
echo "backup: monitor database"

# The signing key and the registry, from the running monitor.
dc cp monitor:/var/lib/trenzinho/monitor-signing.key "$out/monitor-signing.key"
if dc cp monitor:/var/lib/trenzinho/registry/. "$out/registry" 2>/dev/null && [ -n "$(ls -A "$out/registry")" ]; then
	echo "backup: registry"
else
	rm -rf "$out/registry"
	echo "backup: no registry"
fi

if $influx; then
	tmp="/tmp/trenzinho-backup-$stamp"
	# The influx CLI of the container uses the admin configuration made at setup.
	dc exec -T influxdb influx backup "$tmp" >/dev/null
	dc cp "influxdb:$tmp" "$out/influxdb"
	dc exec -T influxdb rm -rf "$tmp"
	echo "backup: InfluxDB"
fi

if dc cp grafana:/var/lib/grafana/grafana.db "$out/grafana.db" 2>/dev/null; then
	echo "backup: Grafana"
fi

chown -R "$(id -u):$(id -g)" "$out" 2>/dev/null || true
(cd "$out" && find . -type f ! -name SHA256SUMS -print0 | sort -z | xargs -0 sha256sum >SHA256SUMS)
echo "backup: written to $out ($(du -sh "$out" | cut -f1))"

if [ -n "$keep_days" ]; then
	find "$dest" -mindepth 1 -maxdepth 1 -type d -name '????????T??????Z' -mtime "+$keep_days" -print -exec rm -rf {} +
fi
