package bridge

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// The service switch is read from a value file (a GPIO's sysfs value): the state at start and
// every change travel as service readings; a value that is not 0 or 1 marks the input missing.
func TestServiceInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "value")
	write := func(v string) {
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("0\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan reading, 16)
	st := &deviceState{states: map[string]string{}}
	var clock clockState
	done := make(chan struct{})
	go func() {
		pollService(ctx, slog.New(slog.DiscardHandler), &ServiceInput{Path: path, Every: 10 * time.Millisecond}, &clock, out, st, func() {})
		close(done)
	}()
	next := func() *wire.Service {
		t.Helper()
		select {
		case r := <-out:
			return r.Service
		case <-time.After(10 * time.Second):
			t.Fatal("no service reading")
			return nil
		}
	}
	if s := next(); s == nil || s.On {
		t.Fatalf("state at start: %+v", s)
	}
	write("1\n")
	if s := next(); s == nil || !s.On {
		t.Fatalf("after switching on: %+v", s)
	}
	write("0")
	if s := next(); s == nil || s.On {
		t.Fatalf("after switching off: %+v", s)
	}
	write("x")
	deadline := time.Now().Add(10 * time.Second)
	for st.snapshot()["service"] != wire.DeviceMissing && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := st.snapshot()["service"]; got != wire.DeviceMissing {
		t.Fatalf("garbage in the value file: state %q", got)
	}
	select {
	case r := <-out:
		t.Fatalf("a reading from garbage: %+v", r)
	default:
	}
	cancel()
	<-done

	// Active low: 0 is on.
	write("0")
	ctx2, cancel2 := context.WithCancel(context.Background())
	defer cancel2()
	go pollService(ctx2, slog.New(slog.DiscardHandler), &ServiceInput{Path: path, ActiveLow: true, Every: 10 * time.Millisecond}, &clock, out, st, func() {})
	if s := next(); s == nil || !s.On {
		t.Fatalf("active low, 0: %+v", s)
	}
}

// A service reading reaches the batch.
func TestServiceInBatch(t *testing.T) {
	var b Bridge
	var cur wire.Batch
	s := wire.Service{T: wire.NewTime(time.Now()), On: true}
	b.add(&cur, reading{Service: &s})
	if len(cur.Service) != 1 || !cur.Service[0].On {
		t.Fatalf("%+v", cur.Service)
	}
}

// The passenger door's contact is read by the same polling as the service switch: its state at
// start and every change travel as door readings, active low inverts it, garbage marks "door"
// missing in the status, and the batcher puts door readings in the batch's door member.
func TestDoorInput(t *testing.T) {
	path := filepath.Join(t.TempDir(), "value")
	write := func(v string) {
		if err := os.WriteFile(path, []byte(v), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("1\n")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan reading, 16)
	st := &deviceState{states: map[string]string{}}
	var clock clockState
	go pollDoor(ctx, slog.New(slog.DiscardHandler), &DoorInput{Path: path, ActiveLow: true, Every: 10 * time.Millisecond}, &clock, out, st, func() {})
	next := func() reading {
		t.Helper()
		select {
		case r := <-out:
			return r
		case <-time.After(10 * time.Second):
			t.Fatal("no door reading")
			return reading{}
		}
	}
	if r := next(); r.Door == nil || r.Service != nil || r.Door.Open || r.Door.T.IsZero() {
		t.Fatalf("state at start (active low, 1: closed): %+v", r)
	}
	write("0")
	r := next()
	if r.Door == nil || !r.Door.Open {
		t.Fatalf("after opening: %+v", r)
	}
	if got := st.snapshot()["door"]; got != wire.DeviceOK {
		t.Fatalf("door state %q", got)
	}
	write("")
	deadline := time.Now().Add(10 * time.Second)
	for st.snapshot()["door"] != wire.DeviceMissing && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if got := st.snapshot()["door"]; got != wire.DeviceMissing {
		t.Fatalf("empty value file: state %q", got)
	}
	if _, ok := st.snapshot()["service"]; ok {
		t.Fatal("the door input reports itself as the service switch")
	}

	var b Bridge
	var cur wire.Batch
	b.add(&cur, r)
	if len(cur.Door) != 1 || !cur.Door[0].Open || cur.Readings() != 1 {
		t.Fatalf("batch %+v", cur)
	}
}

// Without a real-time clock, an input's first reading waits for the GPS time base (a Pi boots
// with a wrong system time until GPS sets it), and is then timed on it.
func TestInputAwaitsGPSTime(t *testing.T) {
	path := filepath.Join(t.TempDir(), "value")
	if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan reading, 16)
	st := &deviceState{states: map[string]string{}}
	var clock clockState
	go pollService(ctx, slog.New(slog.DiscardHandler), &ServiceInput{Path: path, Every: 10 * time.Millisecond, AwaitGPS: true}, &clock, out, st, func() {})
	select {
	case r := <-out:
		t.Fatalf("a reading before any GPS time: %+v", r.Service)
	case <-time.After(300 * time.Millisecond):
	}
	gps := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)
	clock.observeGPS(gps, time.Now())
	select {
	case r := <-out:
		if r.Service == nil || !r.Service.On || r.Service.T.Sub(gps) < 0 || r.Service.T.Sub(gps) > 10*time.Second {
			t.Fatalf("reading %+v, want on, timed just after %v", r.Service, gps)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no reading after the GPS time came")
	}
}
