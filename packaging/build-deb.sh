#!/usr/bin/env bash
# build-deb.sh assembles the trenzinho-bridge Debian package around a firmware-bridge binary
# built for the Raspberry Pi (make pi calls it; docs/bridge.md explains what it installs):
#
#   packaging/build-deb.sh --version VERSION --arch arm64|armhf --binary FILE --out DIR
#
# VERSION is the program's version (git describe); the package version derived from it is
# printed with the path of the package. Environment: GO (the go command, for the licenses of the
# Go modules linked into the binary), SOURCE_DATE_EPOCH (file times; default: the last commit's),
# DEB_MAINTAINER. Needs dpkg-deb, which every Debian system has.
set -euo pipefail

usage() {
	echo "usage: $0 --version VERSION --arch arm64|armhf --binary FILE --out DIR" >&2
	exit 2
}

version="" arch="" binary="" out=""
while [ $# -gt 0 ]; do
	case "$1" in
	--version) version=${2-}; shift 2 || usage ;;
	--arch) arch=${2-}; shift 2 || usage ;;
	--binary) binary=${2-}; shift 2 || usage ;;
	--out) out=${2-}; shift 2 || usage ;;
	*) usage ;;
	esac
done
if [ -z "$version" ] || [ -z "$arch" ] || [ -z "$binary" ] || [ -z "$out" ]; then
	usage
fi

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
GO=${GO:-go}
maintainer=${DEB_MAINTAINER:-"The trenzinho developers <maintainers@trenzinho.invalid>"}
if [ -z "${SOURCE_DATE_EPOCH:-}" ]; then
	SOURCE_DATE_EPOCH=$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)
fi
export SOURCE_DATE_EPOCH

# The binary must be the one for this architecture: static (no cgo), GOARM=7 on armhf.
buildinfo=$("$GO" version -m "$binary") || { echo "$binary: not a Go program" >&2; exit 1; }
setting() { printf '%s\n' "$buildinfo" | awk -v k="$1" '$1 == "build" { split($2, kv, "="); if (kv[1] == k) { sub(/^[^=]*=/, "", $2); print $2 } }'; }
case "$arch" in
arm64) want_goarch=arm64 ;;
armhf) want_goarch=arm ;;
*) echo "unknown architecture $arch (want arm64 or armhf)" >&2; exit 2 ;;
esac
if [ "$(setting GOOS)" != linux ] || [ "$(setting GOARCH)" != "$want_goarch" ]; then
	echo "$binary is for $(setting GOOS)/$(setting GOARCH), not linux/$want_goarch" >&2
	exit 1
fi
if [ "$(setting CGO_ENABLED)" != 0 ]; then
	echo "$binary was built with cgo; build it with CGO_ENABLED=0 (a static binary)" >&2
	exit 1
fi
if [ "$arch" = armhf ] && [ "$(setting GOARM)" != 7 ] && [ "$(setting GOARM)" != 7,hardfloat ]; then
	echo "$binary was built with GOARM=$(setting GOARM); armhf packages are built with GOARM=7" >&2
	exit 1
fi

# Debian version: a release tag v1.2.3[-N-gHASH][-dirty] becomes 1.2.3[+N+gHASH][+dirty]; any
# other version (a bare commit, "dev") sorts below every release: 0~TIMESTAMP.COMMIT.
v=${version#v}
if ! [[ $v =~ ^[0-9]+(\.[0-9]+)+ ]]; then
	v="0~$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d%H%M%S).$version"
fi
debversion=$(printf '%s' "$v" | sed 's/[^A-Za-z0-9.+~]/+/g')

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
chmod 0755 "$stage"
doc=usr/share/doc/trenzinho-bridge
install -d -m 0755 "$stage/DEBIAN" "$stage/usr/bin" "$stage/lib/systemd/system" \
	"$stage/lib/udev/rules.d" "$stage/etc/trenzinho" "$stage/$doc"
install -m 0755 "$binary" "$stage/usr/bin/firmware-bridge"
install -m 0644 "$here/deb/trenzinho-bridge.service" "$stage/lib/systemd/system/"
install -m 0644 "$here/deb/70-trenzinho-bridge.rules" "$stage/lib/udev/rules.d/"
# The settings may hold the broker password: root only (systemd reads it for the service).
install -m 0600 "$here/deb/bridge.env" "$stage/etc/trenzinho/bridge.env"
install -m 0644 "$root/docs/bridge.md" "$stage/$doc/bridge.md"
install -m 0755 "$here/deb/postinst" "$here/deb/prerm" "$here/deb/postrm" "$stage/DEBIAN/"
echo /etc/trenzinho/bridge.env >"$stage/DEBIAN/conffiles"

# copyright: the project's own terms, then those of everything the static binary contains.
indent() { sed -e 's/[[:space:]]*$//' -e 's/^$/./' -e 's/^/ /'; }
{
	cat <<EOF
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: trenzinho
Source: https://github.com/trenzinho/trenzinho

Files: *
Copyright: The trenzinho contributors
EOF
	if [ -f "$root/LICENSE" ]; then
		echo "License: trenzinho"
		indent <"$root/LICENSE"
	else
		echo "License: unspecified"
		echo " The trenzinho project has not published a license file yet; the terms are those"
		echo " of the LICENSE file of the repository named in Source once it has one."
	fi
	echo
	echo "Files: usr/bin/firmware-bridge"
	echo "Copyright: The Go Authors; the authors of the Go modules listed below"
	echo "License: Go-and-modules"
	{
		echo "usr/bin/firmware-bridge is a static Go program: besides the trenzinho code it"
		echo "contains the Go runtime and standard library ($(printf '%s\n' "$buildinfo" | head -1 | awk '{print $2}')) and these Go modules, each"
		echo "under the terms reproduced below:"
		echo
		printf '%s\n' "$buildinfo" | awk '$1 == "dep" { print "  " $2 " " $3 }'
		echo
		echo "==== Go runtime and standard library: LICENSE ===="
		cat "$("$GO" env GOROOT)/LICENSE"
		printf '%s\n' "$buildinfo" | awk '$1 == "dep" { print $2, $3 }' | while read -r mod ver; do
			dir=$(cd "$root" && "$GO" list -m -f '{{.Dir}}' "$mod" 2>/dev/null) || dir=""
			if [ -z "$dir" ] || [ ! -d "$dir" ]; then
				echo "cannot find the source of Go module $mod $ver (go mod download?)" >&2
				exit 1
			fi
			found=0
			for f in "$dir"/*; do
				case "$(basename "$f" | tr '[:upper:]' '[:lower:]')" in
				licen[cs]e* | copying* | notice* | patents* | edl-v* | epl-v*)
					echo
					echo "==== $mod $ver: $(basename "$f") ===="
					cat "$f"
					found=1
					;;
				esac
			done
			if [ "$found" = 0 ]; then
				echo "Go module $mod $ver has no license file in $dir" >&2
				exit 1
			fi
		done
	} | indent
} >"$stage/$doc/copyright"
chmod 0644 "$stage/$doc/copyright"

installed_size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
cat >"$stage/DEBIAN/control" <<EOF
Package: trenzinho-bridge
Version: $debversion
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: adduser
Recommends: systemd
Section: misc
Priority: optional
Homepage: https://github.com/trenzinho/trenzinho
Description: trenzinho firmware bridge: tachograph, GPS and sound meter to MQTT
 Runs on the Raspberry Pi of a recreational road train (trenzinho da alegria).
 It reads the tachograph's D8 output, a GPS receiver and a sound-level meter
 over serial, keeps every batch of readings in a crash-safe spool and
 publishes it over MQTT to the municipal control room.
 .
 The package installs a hardened systemd service running as the system user
 trenzinho, udev rules giving the serial adapters stable names
 (/dev/trenzinho-gps, -tacho, -slm) and the settings file
 /etc/trenzinho/bridge.env.
EOF
# md5sums of every file but the conffiles (everything under /etc), whose sums dpkg keeps itself.
(cd "$stage" && find . \( -path ./DEBIAN -o -path ./etc \) -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$stage/DEBIAN/md5sums"
chmod 0644 "$stage/DEBIAN/control" "$stage/DEBIAN/conffiles" "$stage/DEBIAN/md5sums"

find "$stage" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$out"
deb="$out/trenzinho-bridge_${debversion}_${arch}.deb"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$deb" >/dev/null
echo "$deb"
