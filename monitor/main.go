// Command monitor is the control-room server of the trenzinho monitor: it judges the fleet's
// telemetry against the municipality's legal profile, keeps the episodes in SQLite and serves the
// HTTP API and the dashboard.
//
//	monitor [serve]                       the server (default)
//	monitor geofences import-osm IN OUT   convert an OpenStreetMap export to sensitive sites, streets and landmarks
//	monitor backup DEST                   online backup of the SQLite database
//	monitor verify DRAFT.json             check an exported draft offline
//	monitor vehicle add VEHICLE_ID        enrol a vehicle's bridge (password, key, ACL, registry)
//	monitor whatif --from D --to D --profile P.yaml   what a proposed profile would have done (docs/whatif.md)
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

const usage = `monitor judges the trenzinhos' telemetry and serves the control room.

Usage:
  monitor [serve] [flags]                  run the server (the default)
  monitor geofences import-osm IN OUT      convert an OpenStreetMap export to sensitive sites, streets and landmarks
  monitor backup [flags] DEST              online backup of the SQLite database to DEST
  monitor verify [--key HEX] DRAFT.json    check an exported draft (hash, signature) offline
  monitor vehicle add [flags] VEHICLE_ID   enrol a vehicle: MQTT password, signing key, bridge.env for its Pi
  monitor whatif --from DATE --to DATE --profile PROPOSED.yaml [flags]
                                           replay the archived telemetry of a period under the profile in force and a proposed one
  monitor help                             this text (also -h, --help)
  monitor version                          the version (also --version)

Run "monitor COMMAND --help" for the flags of a command ("monitor serve --help" for the server's).
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

// run runs the command of args; the top-level usage, help and version go to stdout and stderr,
// the subcommands write where they always did.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	cmd := "serve"
	if len(args) > 0 {
		switch a := args[0]; {
		case a == "-h" || a == "-help" || a == "--help":
			cmd, args = "help", args[1:]
		case a == "-version" || a == "--version":
			cmd, args = "version", args[1:]
		case len(a) > 0 && a[0] != '-':
			cmd, args = a, args[1:]
		}
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
	case "whatif":
		err = cmdWhatif(ctx, args, stdout, stderr)
	case "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version":
		fmt.Fprintln(stdout, version)
		return 0
	default:
		fmt.Fprintf(stderr, "monitor: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		if err != errUsage { // it says what is wrong: a missing argument or flag
			fmt.Fprintf(stderr, "monitor %s: %s\n", cmd, strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		}
		return 2
	case errors.Is(err, errIntegrity):
		return 1
	}
	slog.Error(err.Error())
	return 1
}

// errUsage is a command line that cannot be run; the usage has been printed. Wrapped (usageErr),
// it says what is wrong, and run prints that too.
var errUsage = errors.New("usage")

// flagErr makes an error of the flag package (a bad flag, a bad value; it names the flag) a usage
// error; --help stays flag.ErrHelp.
func flagErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %w", errUsage, err)
}

// usageErr is errUsage with what is wrong: "missing --passwd".
func usageErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errUsage}, args...)...)
}
