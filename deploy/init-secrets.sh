#!/usr/bin/env bash
# Prepares the files the broker needs and the repository does not hold (docs/operations.md §3):
#
#   certs/ca/ca.key, ca.crt               a private certificate authority (10 years); ca.key never
#                                         leaves this directory (it is not mounted anywhere)
#   certs/mosquitto/ca.crt, server.crt,   the broker's TLS certificate for HOSTNAME, signed by
#                   server.key            that CA (825 days); vehicles trust ca.crt
#   secrets/mosquitto/passwd              the service accounts svc.ingest, svc.monitor and
#                                         svc.healthcheck with the passwords from .env
#
# Usage: deploy/init-secrets.sh [--env FILE] [--dir DIR] [--days N] [--renew-server] [HOSTNAME [NAME...]]
#
#   HOSTNAME   the name the vehicles connect to (TRENZINHO_MQTT_URL=ssl://HOSTNAME:8883);
#              NAMEs are further DNS names or IP addresses for the certificate. Needed only
#              while there is no server certificate (or with --renew-server).
#   --env      the compose settings (default: DIR/.env)
#   --dir      the compose project directory (default: the directory above this script)
#   --days     validity of a new server certificate (default 825)
#   --renew-server  make a new server certificate even if one exists (same CA: vehicles keep
#                   working); then: docker compose restart mosquitto
#
# It never overwrites the CA, keeps the vehicles' lines of the password file (it rewrites only
# the three service accounts), and can be run again at any time, e.g. after a password change in
# .env or after adding vehicles with mosquitto_passwd, to restore the files' owner and modes:
# the container's mosquitto user (uid 1883) must own them, nobody else may read them.
# Needs openssl, and mosquitto_passwd (Debian package mosquitto) or docker.
set -euo pipefail

die() { echo "init-secrets: $*" >&2; exit 1; }

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
dir="$(dirname "$here")"
env_file=""
days=825
renew=false
names=()
while [ $# -gt 0 ]; do
	case "$1" in
	--env) env_file="${2:?--env needs a file}"; shift 2 ;;
	--dir) dir="${2:?--dir needs a directory}"; shift 2 ;;
	--days) days="${2:?--days needs a number}"; shift 2 ;;
	--renew-server) renew=true; shift ;;
	-h | --help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	-*) die "unknown option $1 (see --help)" ;;
	*) names+=("$1"); shift ;;
	esac
done
[ -n "$env_file" ] || env_file="$dir/.env"
[ -f "$env_file" ] || die "$env_file not found: cp .env.example .env and fill it in first"
command -v openssl >/dev/null || die "openssl not found (apt-get install openssl)"
case "$days" in '' | *[!0-9]*) die "--days: not a number: $days" ;; esac

# env_value NAME: the value of NAME in the env file as docker compose reads it (the last
# assignment wins, surrounding quotes are removed, $$ is a literal $).
env_value() {
	local line value=""
	while IFS= read -r line || [ -n "$line" ]; do
		case "$line" in "$1="*) value="${line#*=}" ;; esac
	done <"$env_file"
	case "$value" in
	\"*\") value="${value:1:${#value}-2}" ;;
	\'*\') value="${value:1:${#value}-2}" ;;
	esac
	printf '%s' "${value//\$\$/\$}"
}

# The broker runs as uid/gid 1883 inside its container.
owner=1883:1883
is_root=false
[ "$(id -u)" = 0 ] && is_root=true
secure() { # secure MODE PATH...: chmod, and chown to the broker's user when root
	local mode="$1"; shift
	chmod "$mode" "$@"
	if $is_root; then chown "$owner" "$@"; fi
}

# --- TLS ------------------------------------------------------------------------------------------
ca_dir="$dir/certs/ca"
tls_dir="$dir/certs/mosquitto"
mkdir -p "$ca_dir" "$tls_dir"
chmod 700 "$ca_dir"
if [ ! -f "$ca_dir/ca.key" ]; then
	echo "init-secrets: creating the certificate authority in $ca_dir"
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$ca_dir/ca.key" 2>/dev/null
	chmod 600 "$ca_dir/ca.key"
	openssl req -x509 -new -key "$ca_dir/ca.key" -sha256 -days 3650 -subj "/O=trenzinho/CN=trenzinho MQTT CA" \
		-addext "basicConstraints=critical,CA:TRUE,pathlen:0" -addext "keyUsage=critical,keyCertSign,cRLSign" \
		-out "$ca_dir/ca.crt"
fi
if [ ! -f "$tls_dir/server.crt" ] || $renew; then
	[ ${#names[@]} -gt 0 ] || die "the broker's host name is needed for its certificate: deploy/init-secrets.sh mqtt.example.gov.br"
	san=""
	for n in "${names[@]}"; do
		if [[ "$n" =~ ^[0-9.]+$ || "$n" == *:* ]]; then san+="${san:+,}IP:$n"; else san+="${san:+,}DNS:$n"; fi
	done
	echo "init-secrets: creating the broker's certificate for $san ($days days)"
	tmp="$(mktemp -d)"
	trap 'rm -rf "$tmp"' EXIT
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$tmp/server.key" 2>/dev/null
	openssl req -new -key "$tmp/server.key" -subj "/O=trenzinho/CN=${names[0]}" -out "$tmp/server.csr"
	printf 'subjectAltName=%s\nbasicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyAgreement\nextendedKeyUsage=serverAuth\n' "$san" >"$tmp/ext"
	openssl x509 -req -in "$tmp/server.csr" -CA "$ca_dir/ca.crt" -CAkey "$ca_dir/ca.key" -CAcreateserial \
		-days "$days" -sha256 -extfile "$tmp/ext" -out "$tmp/server.crt" 2>/dev/null
	mv "$tmp/server.key" "$tls_dir/server.key"
	mv "$tmp/server.crt" "$tls_dir/server.crt"
fi
cp "$ca_dir/ca.crt" "$tls_dir/ca.crt"
secure 640 "$tls_dir/server.key"
secure 644 "$tls_dir/server.crt" "$tls_dir/ca.crt"
secure 750 "$tls_dir"
echo "init-secrets: $(openssl x509 -in "$tls_dir/server.crt" -noout -subject -enddate | tr '\n' ' ')"

# --- Password file --------------------------------------------------------------------------------
pw_dir="$dir/secrets/mosquitto"
mkdir -p "$pw_dir"
chmod 700 "$pw_dir"
[ -f "$pw_dir/passwd" ] || : >"$pw_dir/passwd"
chmod 600 "$pw_dir/passwd"
if command -v mosquitto_passwd >/dev/null; then
	set_password() { mosquitto_passwd -b "$pw_dir/passwd" "$1" "$2"; }
elif command -v docker >/dev/null; then
	set_password() {
		docker run --rm -v "$pw_dir:/p" eclipse-mosquitto:2 mosquitto_passwd -b /p/passwd "$1" "$2"
	}
else
	die "neither mosquitto_passwd (apt-get install mosquitto) nor docker found"
fi
for account in ingest:MQTT_INGEST_PASSWORD monitor:MQTT_MONITOR_PASSWORD healthcheck:MQTT_HEALTHCHECK_PASSWORD; do
	user="svc.${account%%:*}"
	var="${account#*:}"
	pw="$(env_value "$var")"
	[ ${#pw} -ge 12 ] || die "$var in $env_file: at least 12 characters needed"
	set_password "$user" "$pw"
done
secure 600 "$pw_dir/passwd"
secure 700 "$pw_dir"
echo "init-secrets: $pw_dir/passwd: $(grep -c . "$pw_dir/passwd") accounts"

if ! $is_root; then
	echo "init-secrets: not root: give the files to the container's mosquitto user with" >&2
	echo "  sudo chown -R 1883:1883 '$tls_dir' '$pw_dir'" >&2
fi
echo "init-secrets: vehicles trust $tls_dir/ca.crt (TRENZINHO_MQTT_CA on the Pi)"
