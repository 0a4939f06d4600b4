package bridge

import (
	"sync"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// clockState keeps the offset between GPS time and the system clock, so that readings without a
// time of their own (sound levels, tachograph frames without a valid time) are timed on the GPS
// time base, and so that each batch says honestly where its times came from.
type clockState struct {
	mu     sync.Mutex
	offset time.Duration // GPS time − system time at receipt
	lastAt time.Time     // system time of the last GPS fix
}

// gpsValidity is how long a GPS time keeps the clock "gps" after the last fix: the system
// clock drifts by well under a millisecond in that time.
const gpsValidity = 10 * time.Minute

// observeGPS records a fix's GPS time against the system time it was received at.
func (c *clockState) observeGPS(gpsTime, received time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.offset = gpsTime.Sub(received)
	c.lastAt = received
}

// at converts a system time to the bridge's best time base.
func (c *clockState) at(system time.Time) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.lastAt.IsZero() && system.Sub(c.lastAt) < gpsValidity {
		// The receive latency of an NMEA sentence (tens of ms) stays in the offset: GPS time is
		// the time the fix was computed, a little before its sentence was read.
		return system.Add(c.offset)
	}
	return system
}

func (c *clockState) now() time.Time { return c.at(time.Now()) }

// known reports whether a GPS time has been observed.
func (c *clockState) known() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.lastAt.IsZero()
}

// source is the batch's clock: gps while a recent fix disciplines the time base, else rtc when
// the Pi has a real-time clock, else system (never evidence).
func (c *clockState) source(rtc bool) wire.Clock {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.lastAt.IsZero() && time.Since(c.lastAt) < gpsValidity {
		return wire.ClockGPS
	}
	if rtc {
		return wire.ClockRTC
	}
	return wire.ClockSystem
}
