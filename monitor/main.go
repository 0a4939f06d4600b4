// Command monitor is the control-room server of the trenzinho monitor: it judges the fleet's
// telemetry against the municipality's legal profile, keeps the episodes in SQLite and serves the
// HTTP API and the dashboard.
//
//	monitor [serve]                       the server (default)
//	monitor geofences import-osm IN OUT   convert an OpenStreetMap export to sensitive sites
//	monitor backup DEST                   online backup of the SQLite database
//	monitor verify DRAFT.json             check an exported draft offline
//	monitor vehicle add VEHICLE_ID        enrol a vehicle's bridge (password, key, ACL, registry)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `monitor judges the trenzinhos' telemetry and serves the control room.

Usage:
  monitor [serve] [flags]                  run the server (the default)
  monitor geofences import-osm IN OUT      convert an OpenStreetMap GeoJSON export to sensitive sites
  monitor backup [flags] DEST              online backup of the SQLite database to DEST
  monitor verify [--key HEX] DRAFT.json    check an exported draft (hash, signature) offline
  monitor vehicle add [flags] VEHICLE_ID   enrol a vehicle: MQTT password, signing key, bridge.env for its Pi

Run "monitor COMMAND --help" for the flags of a command.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

func run(ctx context.Context, args []string) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	var err error
	switch cmd {
	case "serve":
		err = cmdServe(ctx, args)
	case "geofences":
		err = cmdGeofences(args)
	case "backup":
		err = cmdBackup(ctx, args)
	case "verify":
		err = cmdVerify(args, os.Stdout)
	case "vehicle":
		err = cmdVehicle(args, os.Stdout)
	case "help":
		fmt.Print(usage)
		return 0
	case "version":
		fmt.Println(version)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "monitor: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.Is(err, errIntegrity):
		return 1
	}
	slog.Error(err.Error())
	return 1
}

var errUsage = errors.New("usage")
