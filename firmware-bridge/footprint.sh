#!/bin/sh
# footprint.sh measures the bridge's resident memory and CPU at 10 Hz GPS + 1 Hz tachograph +
# 10 Hz sound-level meter (one simulated vehicle through real pseudo-terminals, publishing every
# 5 s to a local Mosquitto), for the x86-64 build run natively and the arm64 and armv7 builds run
# under qemu-user — the Raspberry Pi's instruction sets on this machine (docs/benchmarks.md,
# "Bridge footprint"). qemu's RSS includes the emulator's own (about 20–30 MB of translation
# cache and its binary), so the arm figures bound the Pi's from above; the CPU ratio against the
# native build says how much work a batch takes relative to x86, not the Pi's absolute load.
#
# Usage (from the repository root): sh firmware-bridge/footprint.sh [seconds]
#   COACH=1: with a configuration bundle in force (the Piúma profile and sample geofences), so the
#            driver's coach runs; by default the bridge has none.
#   ARCHES="amd64": the builds to measure (default "amd64 arm64 armv7").
# Needs: go, mosquitto, qemu-user-static (apt-get install -y qemu-user-static mosquitto).
set -eu
secs=${1:-60}
coach=${COACH:-0}
arches=${ARCHES:-amd64 arm64 armv7}
warm=20
dir=$(mktemp -d)
port=18839
trap 'kill $(cat "$dir"/*.pid 2>/dev/null) 2>/dev/null || true; rm -rf "$dir"' EXIT INT TERM

go build -o "$dir/bridge-amd64" ./firmware-bridge
GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -o "$dir/bridge-arm64" ./firmware-bridge
GOOS=linux GOARCH=arm GOARM=7 CGO_ENABLED=0 go build -o "$dir/bridge-armv7" ./firmware-bridge

{
	cat deploy/mosquitto/mosquitto.conf
	echo "listener $port 127.0.0.1"
	echo "allow_anonymous true"
	echo "persistence_location $dir/"
} >"$dir/mosquitto.conf"
mosquitto -c "$dir/mosquitto.conf" >"$dir/mosquitto.log" 2>&1 &
echo $! >"$dir/mosquitto.pid"
sleep 1

# cpu_s PID: utime+stime of PID in seconds.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ print ($14 + $15) / hz }' "/proc/$1/stat"; }

measure() { # name, command…
	name=$1
	shift
	rm -rf "$dir/sim" "$dir/state"
	key=""
	if [ "$coach" = 1 ]; then
		TRENZINHO_FOOTPRINT_BUNDLE="$dir/state" go test -count 1 -run '^TestFootprintBundle$' ./firmware-bridge/coach/ >/dev/null
		key=$(cat "$dir/state/config.key")
	fi
	"$dir/bridge-amd64" simulate --vehicles 1 --prefix FP --dir "$dir/sim" --gps-hz 10 --duration $((secs + warm + 10))s >"$dir/sim.log" 2>&1 &
	echo $! >"$dir/sim.pid"
	sleep 2
	TRENZINHO_CONFIG_KEY=$key TRENZINHO_MQTT_URL=tcp://127.0.0.1:$port "$@" run --vehicle FP-001 --state-dir "$dir/state" \
		--gps-port "$dir/sim/FP-001-gps" --tacho-port "$dir/sim/FP-001-tacho" --slm-port "$dir/sim/FP-001-slm" >"$dir/$name.log" 2>&1 &
	pid=$!
	echo $pid >"$dir/bridge.pid"
	sleep $warm
	c0=$(cpu_s $pid)
	t0=$(date +%s.%N)
	sleep "$secs"
	c1=$(cpu_s $pid)
	t1=$(date +%s.%N)
	rss=$(awk '/^VmRSS/ { print $2 / 1024 }' "/proc/$pid/status")
	if [ "$coach" = 1 ] && ! grep -q "coach configured" "$dir/$name.log"; then
		echo "$name: the coach did not take the bundle:" >&2
		cat "$dir/$name.log" >&2
	fi
	hwm=$(awk '/^VmHWM/ { print $2 / 1024 }' "/proc/$pid/status")
	kill $pid "$(cat "$dir/sim.pid")" 2>/dev/null || true
	wait $pid 2>/dev/null || true
	wait "$(cat "$dir/sim.pid")" 2>/dev/null || true
	awk -v n="$name" -v c0="$c0" -v c1="$c1" -v t0="$t0" -v t1="$t1" -v rss="$rss" -v hwm="$hwm" \
		'BEGIN { printf "%-6s CPU %.2f s in %.0f s (%.2f%% of a core); VmRSS %.1f MB, VmHWM %.1f MB\n", n, c1 - c0, t1 - t0, 100 * (c1 - c0) / (t1 - t0), rss, hwm }'
}

echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
for a in $arches; do
	case $a in
	amd64) measure amd64 "$dir/bridge-amd64" ;;
	arm64) measure arm64 qemu-aarch64-static "$dir/bridge-arm64" ;;
	armv7) measure armv7 qemu-arm-static "$dir/bridge-armv7" ;;
	esac
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
