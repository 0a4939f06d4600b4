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

// cmdDecode prints one JSON object per decoded reading (docs/bridge.md, "Decoding a capture")
// and the counters on standard error. It fails (non-zero exit) when the file cannot be read, is
// not the format asked for (nothing in it decodes: the count of undecodable bytes is reported)
// or, for a meter without a clock, no --start times its samples.
func cmdDecode(args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("decode", flag.ContinueOnError)
	fs.SetOutput(stderr)
	layout := fs.String("layout", "vdo", "d8: frame layout, vdo or stoneridge")
	protocol := fs.String("protocol", "pce322a", "slm: byte stream, pce322a or modbus-rtu")
	start := fs.String("start", "", "slm: time of the first sample (RFC 3339) when the frames carry no clock")
	rate := fs.Float64("rate", slm.DefaultRate, "slm: samples per second when the frames carry no clock")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: firmware-bridge decode nmea|d8|slm [flags] FILE [flags]")
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
	// Flags may come after FILE too (the flag package stops at the first argument that is not
	// a flag: parse again after each one).
	var files []string
	for rest := args[1:]; ; {
		if err := fs.Parse(rest); err != nil {
			return flagErr(err)
		}
		if fs.NArg() == 0 {
			break
		}
		files = append(files, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(files) != 1 {
		fs.Usage()
		return fmt.Errorf("%w: want one FILE, got %d", errUsage, len(files))
	}
	file, err := os.Open(files[0])
	if err != nil {
		return fmt.Errorf("decode: %w", err)
	}
	defer file.Close()
	f := &countingReader{r: file}
	out := bufio.NewWriter(stdout)
	defer out.Flush()
	enc := json.NewEncoder(out)
	var (
		stats any
		why   error  // the file is not what was asked for: non-zero exit
		note  string // why nothing was printed although the file is what was asked for
	)
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
		if st.Sentences == 0 && f.n > 0 {
			why = fmt.Errorf("not an NMEA capture: no valid sentence in %d bytes (%d bytes undecodable)", f.n, f.n)
		} else if len(rs) == 0 {
			note = fmt.Sprintf("no position: %d sentences, %d epochs without a valid fix", st.Sentences, st.InvalidFixes)
		}
	case "d8":
		rs, st, err := tacho.DecodeStream(f, *layout)
		if err != nil {
			return fmt.Errorf("decode: %w", err)
		}
		for _, r := range rs {
			enc.Encode(tachoLine(r))
		}
		stats = st
		if st.FramesOK == 0 && f.n > 0 {
			why = fmt.Errorf("not a D8 capture (layout %s): no good frame in %d bytes (%d bytes undecodable)", *layout, f.n, st.GarbageBytes)
		}
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
		switch {
		case st.FramesOK == 0 && f.n > 0:
			why = fmt.Errorf("not a %s capture: no good frame in %d bytes (%d bytes undecodable)", *protocol, f.n, st.GarbageBytes)
		case len(rs) == 0 && st.Untimed > 0:
			why = fmt.Errorf("no frame is timed: pass --start with the time of the first sample (RFC 3339, e.g. --start 2026-11-29T15:00:00Z) and --rate if it is not %g samples/s; %d samples dropped", *rate, st.Untimed)
		}
	default:
		fs.Usage()
		return errUsage
	}
	b, _ := json.Marshal(stats)
	fmt.Fprintf(stderr, "%s\n", b)
	if note != "" {
		fmt.Fprintf(stderr, "decode: %s\n", note)
	}
	return why
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
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
