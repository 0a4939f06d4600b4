// Command firmware-bridge runs on the trenzinho's Raspberry Pi: it reads the tachograph, the GPS
// receiver and the sound-level meter over serial and publishes their readings over MQTT without
// losing any (see package bridge). Subcommands:
//
//	firmware-bridge run       read, spool and publish (the service)
//	firmware-bridge decode    decode a captured serial log: decode nmea|d8|slm FILE
//	firmware-bridge simulate  play simulated vehicles into pseudo-terminals
//	firmware-bridge probe     list serial ports and show what each configured device sends
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

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:]))
}

const usage = `firmware-bridge reads a trenzinho's instruments over serial and publishes them over MQTT.

Usage:
  firmware-bridge run [flags]                 the service: read, spool, publish
  firmware-bridge decode nmea|d8|slm FILE      decode a captured serial log to JSON lines
  firmware-bridge simulate [flags]             play simulated vehicles into pseudo-terminals
  firmware-bridge probe [flags]                list serial ports and test the configured devices

Run "firmware-bridge COMMAND --help" for the flags of a command.
`

func run(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(os.Stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:])
	case "decode":
		err = cmdDecode(args[1:], os.Stdout, os.Stderr)
	case "simulate":
		err = cmdSimulate(ctx, args[1:])
	case "probe":
		err = cmdProbe(ctx, args[1:], os.Stdout)
	case "-h", "--help", "help":
		fmt.Fprint(os.Stdout, usage)
		return 0
	case "version", "--version":
		fmt.Println(version)
		return 0
	default:
		fmt.Fprintf(os.Stderr, "firmware-bridge: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	}
	slog.Error(err.Error())
	return 1
}

var errUsage = errors.New("usage")
