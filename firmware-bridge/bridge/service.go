package bridge

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// ServiceInput is the driver's service switch wired to a GPIO of the Pi (docs/rules.md, "In service": when present
// it decides whether the vehicle is in service). The bridge reads a value file: the GPIO's sysfs
// value (/sys/class/gpio/gpioN/value, exported by a udev rule or the packaging's
// gpio-export) or any file holding "0" or "1". The kernel's GPIO character device needs ioctls
// the Go standard library does not wrap; the value file is what every Pi OS exposes with one
// line of configuration (see docs/bridge.md).
type ServiceInput struct {
	Path string
	// ActiveLow inverts the value (a switch wired to ground with a pull-up reads 0 when on).
	ActiveLow bool
	// Every is the polling interval (200 ms by default): a switch, not a signal.
	Every time.Duration
}

// pollService reads the input and hands every change of state (and the state at start) to the
// batcher as a service reading timed by the bridge's clock.
func pollService(ctx context.Context, log *slog.Logger, in *ServiceInput, clock *clockState, out chan<- reading, st *deviceState, onChange func()) {
	every := in.Every
	if every <= 0 {
		every = 200 * time.Millisecond
	}
	t := time.NewTicker(every)
	defer t.Stop()
	var last *bool
	for {
		b, err := os.ReadFile(in.Path)
		if err != nil {
			if st.set("service", wire.DeviceMissing) {
				log.Warn("service input unreadable", "path", in.Path, "err", err)
				onChange()
			}
		} else {
			v := bytes.TrimSpace(b)
			on := len(v) > 0 && v[0] == '1'
			if in.ActiveLow {
				on = !on
			}
			if len(v) == 0 || (v[0] != '0' && v[0] != '1') {
				if st.set("service", wire.DeviceMissing) {
					log.Warn("service input: not 0 or 1", "path", in.Path, "value", string(v))
					onChange()
				}
			} else {
				if st.set("service", wire.DeviceOK) {
					onChange()
				}
				if last == nil || *last != on {
					last = &on
					now := time.Now()
					s := wire.Service{T: wire.NewTime(clock.at(now)), On: on}
					if deliver(ctx, out, reading{Service: &s, received: now}) != nil {
						return
					}
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
