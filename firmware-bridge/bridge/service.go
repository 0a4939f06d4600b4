package bridge

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// Input is a two-state input wired to a GPIO of the Pi: a switch or a contact, not a signal.
// The bridge reads a value file: the GPIO's sysfs value (/sys/class/gpio/gpioN/value, exported
// by a udev rule or the packaging's gpio-export) or any file holding "0" or "1". The kernel's
// GPIO character device needs ioctls the Go standard library does not wrap; the value file is
// what every Pi OS exposes with one line of configuration (see docs/bridge.md).
type Input struct {
	Path string
	// ActiveLow inverts the value (a switch wired to ground with a pull-up reads 0 when on).
	ActiveLow bool
	// Every is the polling interval (200 ms by default).
	Every time.Duration
	// AwaitGPS holds the first reading until the bridge has a GPS time base, for at most
	// inputClockWait: a Pi without a real-time clock boots with a wrong system time until GPS
	// sets it, and a state timed by it would not line up with the readings around it (Bridge
	// sets it when a GPS is fitted and the Pi has no RTC).
	AwaitGPS bool
}

// inputClockWait bounds how long an input's first reading waits for a GPS time base.
const inputClockWait = 5 * time.Second

// ServiceInput is the driver's service switch (docs/rules.md, "In service": when present it
// decides whether the vehicle is in service); on is "in service".
type ServiceInput = Input

// DoorInput is the contact of the passenger door (docs/rules.md, boarding_sound and
// boarding_outside_points); on is "open".
type DoorInput = Input

// pollService reads the service switch and hands every change of state (and the state at start)
// to the batcher as a service reading timed by the bridge's clock.
func pollService(ctx context.Context, log *slog.Logger, in *ServiceInput, clock *clockState, out chan<- reading, st *deviceState, onChange func()) {
	pollInput(ctx, log, "service", in, clock, st, onChange, func(now time.Time, on bool) error {
		s := wire.Service{T: wire.NewTime(clock.at(now)), On: on}
		return deliver(ctx, out, reading{Service: &s, received: now})
	})
}

// pollDoor reads the passenger door's contact and hands every change of state (and the state
// at start) to the batcher as a door reading timed by the bridge's clock.
func pollDoor(ctx context.Context, log *slog.Logger, in *DoorInput, clock *clockState, out chan<- reading, st *deviceState, onChange func()) {
	pollInput(ctx, log, "door", in, clock, st, onChange, func(now time.Time, open bool) error {
		d := wire.Door{T: wire.NewTime(clock.at(now)), Open: open}
		return deliver(ctx, out, reading{Door: &d, received: now})
	})
}

// pollInput polls a value file every in.Every and calls emit with the state at start and on
// every change; it returns when ctx is done or emit fails. An unreadable file or a value that is
// not 0 or 1 marks the device (named name in the status) missing, and emits nothing.
func pollInput(ctx context.Context, log *slog.Logger, name string, in *Input, clock *clockState, st *deviceState, onChange func(), emit func(now time.Time, on bool) error) {
	every := in.Every
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	started := time.Now()
	t := time.NewTicker(every)
	defer t.Stop()
	var last *bool
	for {
		b, err := os.ReadFile(in.Path)
		v := bytes.TrimSpace(b)
		switch {
		case err != nil:
			if st.set(name, wire.DeviceMissing) {
				log.Warn(name+" input unreadable", "path", in.Path, "err", err)
				onChange()
			}
		case len(v) == 0 || (v[0] != '0' && v[0] != '1'):
			if st.set(name, wire.DeviceMissing) {
				log.Warn(name+" input: not 0 or 1", "path", in.Path, "value", string(v))
				onChange()
			}
		default:
			if st.set(name, wire.DeviceOK) {
				onChange()
			}
			on := (v[0] == '1') != in.ActiveLow
			waiting := in.AwaitGPS && !clock.known() && time.Since(started) < inputClockWait
			if !waiting && (last == nil || *last != on) {
				last = &on
				if emit(time.Now(), on) != nil {
					return
				}
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
