package sim

import (
	"context"
	"errors"
	"io"
	"math"
	"os"
	"time"

	"github.com/trenzinho/trenzinho/firmware-bridge/slm"
	"github.com/trenzinho/trenzinho/firmware-bridge/tacho"
)

// Outputs are where a vehicle's instruments write; a nil writer is an instrument not fitted.
type Outputs struct {
	GPS   io.Writer // NMEA 0183
	Tacho io.Writer // VDO D8 frames, one a second
	SLM   io.Writer // PCE-322A style frames, ten a second
	// Service and Door are the value files of the service switch and the passenger door, as
	// a Pi's GPIO exposes them ("1" on or open, "0" off or closed) and the bridge reads them
	// (TRENZINHO_SERVICE_INPUT, TRENZINHO_DOOR_INPUT); "": not wired.
	Service, Door string
}

// PlayConfig says how fast and from when a vehicle plays.
type PlayConfig struct {
	// Start is the device time of the first reading.
	Start time.Time
	// SpeedUp plays device time this many times faster than the wall clock (1 when zero).
	SpeedUp float64
	// GPSHz is the GPS fix rate (1 when zero).
	GPSHz int
	// Duration stops after this much device time (0: until ctx is cancelled).
	Duration time.Duration
	// Driver card inserted in the tachograph (none when empty).
	Card string
	// MeterClock sets the sound-level meter's clock to device time: its frames carry their
	// second, and the bridge times them by it. Without it the bridge times them on receipt,
	// which is device time only when playing in real time (SpeedUp 1).
	MeterClock bool
}

// Stats count what a player wrote and what it dropped because nobody read it in time.
type Stats struct {
	GPSEpochs, TachoFrames, SLMFrames int
	Dropped                           int
}

// Play drives v and writes its instruments' bytes until ctx is cancelled or cfg.Duration of
// device time has been played. Writes that block for more than a second are dropped, as a real
// instrument does not wait for its reader.
func Play(ctx context.Context, v *Vehicle, out Outputs, cfg PlayConfig) (Stats, error) {
	if cfg.SpeedUp <= 0 {
		cfg.SpeedUp = 1
	}
	if cfg.GPSHz <= 0 {
		cfg.GPSHz = 1
	}
	var st Stats
	step := time.Second / time.Duration(cfg.GPSHz)
	slmStep := 100 * time.Millisecond
	wallStart := time.Now()
	var card *tacho.Card
	if cfg.Card != "" {
		card = &tacho.Card{Type: 1, Nation: 0x0b, Number: cfg.Card}
	}
	write := func(w io.Writer, b []byte) {
		if f, ok := w.(*os.File); ok {
			_ = f.SetWriteDeadline(time.Now().Add(time.Second))
		}
		if _, err := w.Write(b); err != nil {
			st.Dropped++
		}
	}
	var last State
	var inputs [2]*bool // the states last written to Service and Door
	setInput := func(i int, path string, on bool) {
		if path == "" || inputs[i] != nil && *inputs[i] == on {
			return
		}
		if err := WriteValue(path, on); err != nil {
			st.Dropped++
			return
		}
		inputs[i] = &on
	}
	for elapsed := time.Duration(0); cfg.Duration == 0 || elapsed < cfg.Duration; elapsed += slmStep {
		// Wait for the wall clock to catch up with device time.
		due := wallStart.Add(time.Duration(float64(elapsed) / cfg.SpeedUp))
		if d := time.Until(due); d > 0 {
			select {
			case <-ctx.Done():
				return st, nil
			case <-time.After(d):
			}
		} else if ctx.Err() != nil {
			return st, nil
		}
		t := cfg.Start.Add(elapsed)
		if elapsed%step == 0 {
			last = v.Step(t, step)
			if out.GPS != nil {
				write(out.GPS, []byte(NMEA(last)))
				st.GPSEpochs++
			}
			setInput(0, out.Service, last.ServiceOn)
			setInput(1, out.Door, last.DoorOpen)
		}
		if out.Tacho != nil && elapsed%time.Second == 0 && !last.TachoSilent {
			write(out.Tacho, tacho.EncodeVDO(tacho.VDOFrame{
				Time:              t,
				LocalMinuteOffset: 0,
				LocalHourOffset:   -3,
				Speed:             uint16(math.Round(last.SpeedKmh * 256)),
				TotalDistance:     uint32(last.OdometerKm * 200),
				VIN:               "9BWZZZ377VT004251",
				Custom:            "TRENZINHO-SIM",
				Card1:             card,
			}))
			st.TachoFrames++
		}
		if out.SLM != nil {
			f := slm.PCEFrame{DeciDB: uint16(math.Round(noisy(last.LAeqDB, elapsed) * 10))}
			if cfg.MeterClock {
				f.Time = t.UTC().Truncate(time.Second)
			}
			write(out.SLM, slm.EncodePCE(f))
			st.SLMFrames++
		}
	}
	return st, nil
}

// WriteValue sets a GPIO value file as the kernel shows it, "1\n" or "0\n", atomically (a new file
// renamed over the old one), so that a reader never sees it half-written.
func WriteValue(path string, on bool) error {
	v := "0\n"
	if on {
		v = "1\n"
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(v), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// noisy varies a level by ±2 dB over a few seconds, as music does.
func noisy(db float64, t time.Duration) float64 {
	if db <= 0 {
		return 0
	}
	return db + 2*math.Sin(t.Seconds()*1.7)
}

// ErrNoPTY is returned when pseudo-terminals are not available.
var ErrNoPTY = errors.New("sim: pseudo-terminals not available")
