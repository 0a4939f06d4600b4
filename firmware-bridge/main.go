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
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdout, os.Stderr))
}

const usage = `firmware-bridge reads a trenzinho's instruments over serial and publishes them over MQTT.

Usage:
  firmware-bridge run [flags]                 the service: read, spool, publish
  firmware-bridge decode nmea|d8|slm FILE      decode a captured serial log to JSON lines
  firmware-bridge version                      the version (also --version)
  firmware-bridge simulate [flags]             play simulated vehicles into pseudo-terminals
  firmware-bridge probe [flags]                list serial ports and test the configured devices

Run "firmware-bridge COMMAND --help" for the flags of a command.
`

// run runs the command of args and returns the exit status: 0, 1 when the command failed, 2
// for a command line that cannot be run (which is named).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(ctx, args[1:])
	case "decode":
		err = cmdDecode(args[1:], stdout, stderr)
	case "simulate":
		err = cmdSimulate(ctx, args[1:])
	case "probe":
		err = cmdProbe(ctx, args[1:], stdout)
	case "-h", "-help", "--help", "help":
		fmt.Fprint(stdout, usage)
		return 0
	case "version", "-version", "--version":
		fmt.Fprintln(stdout, version)
		return 0
	default:
		fmt.Fprintf(stderr, "firmware-bridge: unknown command %q\n\n%s", args[0], usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		if err != errUsage { // it says what is wrong
			fmt.Fprintf(stderr, "firmware-bridge %s: %s\n", args[0], strings.TrimPrefix(err.Error(), errUsage.Error()+": "))
		}
		return 2
	case errors.Is(err, errFailed):
		return 1 // the command said why
	}
	if args[0] == "run" {
		slog.Error(err.Error()) // the service logs to the journal, key=value
		return 1
	}
	fmt.Fprintf(stderr, "firmware-bridge %s: %v\n", args[0], err)
	return 1
}

// errUsage is a command line that cannot be run; the usage has been printed. Wrapped, it says
// what is wrong, and run prints that too.
var errUsage = errors.New("usage")

// errFailed is a command that failed and has already said why (probe's verdict).
var errFailed = errors.New("failed")

// flagErr makes an error of the flag package (a bad flag, a bad value; it names the flag, and
// the package has printed the usage) a usage error; --help stays flag.ErrHelp.
func flagErr(err error) error {
	if errors.Is(err, flag.ErrHelp) {
		return err
	}
	return fmt.Errorf("%w: %w", errUsage, err)
}
