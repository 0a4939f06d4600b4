package bridge

import (
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

func TestClockWithoutGPS(t *testing.T) {
	var c clockState
	sys := time.Date(2026, 11, 29, 15, 0, 0, 250e6, time.UTC)
	if got := c.at(sys); !got.Equal(sys) {
		t.Errorf("at(%v) = %v before any fix; want the system time", sys, got)
	}
	if got := c.source(false); got != wire.ClockSystem {
		t.Errorf("source without RTC = %q, want %q", got, wire.ClockSystem)
	}
	if got := c.source(true); got != wire.ClockRTC {
		t.Errorf("source with RTC = %q, want %q", got, wire.ClockRTC)
	}
}

func TestClockFollowsGPS(t *testing.T) {
	var c clockState
	// The Pi's clock is 3 min 20.5 s behind GPS time; the fix was read 40 ms after its time.
	received := time.Now()
	offset := 3*time.Minute + 20*time.Second + 500*time.Millisecond
	gpsTime := received.Add(offset)
	c.observeGPS(gpsTime, received)

	for _, rtc := range []bool{false, true} {
		if got := c.source(rtc); got != wire.ClockGPS {
			t.Errorf("source(rtc=%v) after a fresh fix = %q, want %q", rtc, got, wire.ClockGPS)
		}
	}
	for _, d := range []time.Duration{0, time.Second, gpsValidity - time.Nanosecond} {
		if got, want := c.at(received.Add(d)), gpsTime.Add(d); !got.Equal(want) {
			t.Errorf("at(fix + %v) = %v, want %v (GPS time base)", d, got, want)
		}
	}
	// gpsValidity after the fix the offset is no longer trusted.
	late := received.Add(gpsValidity)
	if got := c.at(late); !got.Equal(late) {
		t.Errorf("at(fix + %v) = %v, want the system time %v", gpsValidity, got, late)
	}

	before := time.Now()
	now := c.now()
	after := time.Now()
	if now.Before(before.Add(offset)) || now.After(after.Add(offset)) {
		t.Errorf("now() = %v, want between %v and %v", now, before.Add(offset), after.Add(offset))
	}

	// A later fix replaces the offset: the receiver's time is authoritative.
	received2 := received.Add(time.Second)
	gps2 := received2.Add(-2 * time.Second)
	c.observeGPS(gps2, received2)
	if got, want := c.at(received2.Add(500*time.Millisecond)), gps2.Add(500*time.Millisecond); !got.Equal(want) {
		t.Errorf("at after a second fix = %v, want %v", got, want)
	}
}

func TestClockStaleGPS(t *testing.T) {
	var c clockState
	received := time.Now().Add(-gpsValidity - time.Minute)
	c.observeGPS(received.Add(time.Hour), received)
	if got := c.source(false); got != wire.ClockSystem {
		t.Errorf("source without RTC, last fix %v ago = %q, want %q", gpsValidity+time.Minute, got, wire.ClockSystem)
	}
	if got := c.source(true); got != wire.ClockRTC {
		t.Errorf("source with RTC, last fix %v ago = %q, want %q", gpsValidity+time.Minute, got, wire.ClockRTC)
	}
	now := time.Now()
	if got := c.at(now); !got.Equal(now) {
		t.Errorf("at(now) = %v with a stale fix; want the system time %v", got, now)
	}
}

func TestClockConcurrentUse(t *testing.T) {
	var c clockState
	var wg sync.WaitGroup
	base := time.Now()
	for i := range 4 {
		wg.Add(2)
		go func() {
			defer wg.Done()
			for j := range 500 {
				r := base.Add(time.Duration(i*500+j) * time.Millisecond)
				c.observeGPS(r.Add(time.Second), r)
			}
		}()
		go func() {
			defer wg.Done()
			for range 500 {
				_ = c.now()
				_ = c.source(i%2 == 0)
			}
		}()
	}
	wg.Wait()
	if got := c.source(false); got != wire.ClockGPS {
		t.Errorf("source = %q, want gps", got)
	}
}
