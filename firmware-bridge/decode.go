package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/trenzinho/trenzinho/firmware-bridge/gps"
	"github.com/trenzinho/trenzinho/firmware-bridge/slm"
	"github.com/trenzinho/trenzinho/firmware-bridge/tacho"
	"github.com/trenzinho/trenzinho/wire"
)

// cmdDecode prints one JSON object per decoded reading (docs/bridge.md, "Decoding a capture") and the counters on
// standard error. The exit status is 0 unless the file cannot be read.
func cmdDecode(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	layout := fs.String("layout", "vdo", "d8: frame layout, vdo or stoneridge")
	protocol := fs.String("protocol", "pce322a", "slm: byte stream, pce322a or modbus-rtu")
	start := fs.String("start", "", "slm: time of the first sample (RFC 3339) when the frames carry no clock")
	rate := fs.Float64("rate", slm.DefaultRate, "slm: samples per second when the frames carry no clock")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: firmware-bridge decode nmea|d8|slm [flags] FILE")
		fs.PrintDefaults()
	}
	if len(args) < 1 {
		fs.Usage()
		return errUsage
	}
	kind := args[0]
	if kind == "-h" || kind == "--help" {
		fs.Usage()
		return flag.ErrHelp
	}
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return errUsage
	}
	f, err := os.Open(fs.Arg(0))
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	defer f.Close()
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	var stats any
	switch kind {
	case "nmea":
		rs, st, err := gps.DecodeFile(f)
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		for _, r := range rs {
			enc.Encode(struct {
				Type string `json:"type"`
				wire.GPS
			}{"gps", r})
		}
		stats = st
	case "d8":
		rs, st, err := tacho.DecodeStream(f, *layout)
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		for _, r := range rs {
			enc.Encode(tachoLine(r))
		}
		stats = st
	case "slm":
		var t0 time.Time
		if *start != "" {
			if t0, err = time.Parse(time.RFC3339Nano, *start); err != nil {
				return fmt.Errorf("decode: --start: %w", err)
			}
		}
		rs, st, err := slm.DecodeStream(f, *protocol, t0, *rate)
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		for _, r := range rs {
			enc.Encode(struct {
				Type string `json:"type"`
				wire.Sound
			}{"sound", r})
		}
		stats = st
	default:
		fs.Usage()
		return errUsage
	}
	b, _ := json.Marshal(stats)
	fmt.Fprintf(stderr, "%s\n", b)
	return nil
}

// tachoLine omits the time of a frame that carried none (a zero wire.Time cannot be encoded).
func tachoLine(r wire.Tacho) any {
	if r.T.IsZero() {
		return struct {
			Type       string   `json:"type"`
			SpeedKmh   *float64 `json:"speed_kmh,omitempty"`
			OdometerKm *float64 `json:"odometer_km,omitempty"`
			Card       string   `json:"card,omitempty"`
		}{"tacho", r.SpeedKmh, r.OdometerKm, r.Card}
	}
	return struct {
		Type string `json:"type"`
		wire.Tacho
	}{"tacho", r}
}
