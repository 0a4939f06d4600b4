package bridge

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/firmware-bridge/serialport"
	"github.com/trenzinho/trenzinho/firmware-bridge/sim"
	"github.com/trenzinho/trenzinho/firmware-bridge/slm"
	"github.com/trenzinho/trenzinho/firmware-bridge/tacho"
	"github.com/trenzinho/trenzinho/wire"
)

// scriptedPort is a serial port fed by the test. Read returns the chunks sent on data, and
// (0, nil) — a read timeout — when idle passes without one (never when idle is 0) or when ctx
// is done; once data is closed it returns err.
type scriptedPort struct {
	ctx  context.Context
	data chan []byte
	idle atomic.Int64 // time.Duration
	err  error

	rest     []byte
	consumed atomic.Int64 // bytes returned by Read
	mu       sync.Mutex
	writes   bytes.Buffer
}

func newScriptedPort(ctx context.Context, idle time.Duration) *scriptedPort {
	p := &scriptedPort{ctx: ctx, data: make(chan []byte, 16), err: io.EOF}
	p.idle.Store(int64(idle))
	return p
}

func (p *scriptedPort) Read(b []byte) (int, error) {
	if len(p.rest) == 0 {
		var timeout <-chan time.Time
		if idle := time.Duration(p.idle.Load()); idle > 0 {
			timeout = time.After(idle)
		}
		select {
		case c, ok := <-p.data:
			if !ok {
				return 0, p.err
			}
			p.rest = c
		case <-timeout:
			return 0, nil
		case <-p.ctx.Done():
			return 0, nil
		}
	}
	n := copy(b, p.rest)
	p.rest = p.rest[n:]
	p.consumed.Add(int64(n))
	return n, nil
}

func (p *scriptedPort) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writes.Write(b)
}

func newDeviceState(names ...string) *deviceState {
	st := &deviceState{states: map[string]string{}}
	for _, n := range names {
		st.set(n, wire.DeviceMissing)
	}
	return st
}

// epochNMEA is the receiver output of one position epoch at time t.
func epochNMEA(t time.Time) []byte {
	return []byte(sim.NMEA(sim.State{T: t, Lat: -20.8367, Lon: -40.7292, SpeedKmh: 20, Course: 90}))
}

func receive(t *testing.T, out <-chan reading, what string) reading {
	t.Helper()
	select {
	case r := <-out:
		return r
	case <-time.After(20 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		return reading{}
	}
}

func TestIdleReader(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newScriptedPort(ctx, time.Millisecond)
	idles := 0
	r := &idleReader{ctx: ctx, rw: p, onIdle: func() { idles++ }}
	go func() {
		time.Sleep(30 * time.Millisecond)
		p.data <- []byte("abc")
	}()
	buf := make([]byte, 8)
	n, err := r.Read(buf)
	if err != nil || string(buf[:n]) != "abc" {
		t.Fatalf("Read = %q, %v; want \"abc\", nil", buf[:n], err)
	}
	if idles == 0 {
		t.Error("read timeouts did not call onIdle")
	}
	// Writes go to the port (the PCE start command).
	if _, err := r.Write([]byte{0xac, 0xff}); err != nil || !bytes.Equal(p.writes.Bytes(), []byte{0xac, 0xff}) {
		t.Errorf("Write: %v, port got %x", err, p.writes.Bytes())
	}
	// The port's errors come through as they are.
	p.err = io.ErrClosedPipe
	close(p.data)
	if n, err := r.Read(buf); n != 0 || !errors.Is(err, io.ErrClosedPipe) {
		t.Errorf("Read after the port failed = %d, %v; want 0, %v", n, err, io.ErrClosedPipe)
	}
	// Without onIdle, timeouts are skipped silently; a done context ends the read.
	r2 := &idleReader{ctx: ctx, rw: newScriptedPort(ctx, time.Millisecond)}
	go func() {
		time.Sleep(30 * time.Millisecond)
		cancel()
	}()
	if n, err := r2.Read(buf); n != 0 || !errors.Is(err, context.Canceled) {
		t.Errorf("Read after cancel = %d, %v; want 0, context.Canceled", n, err)
	}
}

// TestDeliverPrefersTheBatcher: a reading that fits in the channel is handed over even when
// the bridge is stopping; only a full channel and a done context drop it.
func TestDeliverPrefersTheBatcher(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out := make(chan reading, 100)
	for i := range 100 {
		if err := deliver(ctx, out, gpsReading(time.Now())); err != nil {
			t.Fatalf("deliver %d with room in the channel: %v", i, err)
		}
	}
	if err := deliver(ctx, out, gpsReading(time.Now())); !errors.Is(err, context.Canceled) {
		t.Errorf("deliver to a full channel after cancel = %v, want context.Canceled", err)
	}
}

// TestReadGPSReceiveTime: an epoch is completed by the first sentence of the next one, but its
// receive time (which sets the clock's offset) is when its own sentences were read.
func TestReadGPSReceiveTime(t *testing.T) {
	pr, pw := io.Pipe()
	out := make(chan reading, 10)
	st := newDeviceState("gps")
	done := make(chan error, 1)
	go func() { done <- readGPS(context.Background(), pr, out, st, func() {}) }()

	t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	wrote1 := time.Now()
	pw.Write(epochNMEA(t0))
	time.Sleep(300 * time.Millisecond)
	wrote2 := time.Now()
	pw.Write(epochNMEA(t0.Add(time.Second)))
	r := receive(t, out, "the first epoch")
	if !r.GPS.T.Equal(t0) {
		t.Fatalf("first reading at %v, want %v", r.GPS.T, t0)
	}
	if r.received.Before(wrote1) || !r.received.Before(wrote2) {
		t.Errorf("first epoch received at %v; its sentences were written at %v and the next epoch's at %v",
			r.received.Format(time.StampMicro), wrote1.Format(time.StampMicro), wrote2.Format(time.StampMicro))
	}
	if got := st.snapshot()["gps"]; got != wire.DeviceOK {
		t.Errorf("gps state %q after a fix, want ok", got)
	}
	// The end of the stream completes the last epoch.
	pw.Close()
	r = receive(t, out, "the last epoch")
	if !r.GPS.T.Equal(t0.Add(time.Second)) || r.received.Before(wrote2) {
		t.Errorf("last reading at %v received %v", r.GPS.T, r.received)
	}
	if err := <-done; !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("readGPS at the end of the stream = %v, want io.ErrUnexpectedEOF", err)
	}
}

// TestReadGPSIdleFlush: when the receiver falls silent, its last epoch is handed over at once,
// not when the receiver speaks again.
func TestReadGPSIdleFlush(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newScriptedPort(ctx, 5*time.Millisecond)
	out := make(chan reading, 10)
	st := newDeviceState("gps")
	done := make(chan error, 1)
	go func() { done <- readGPS(ctx, &idleReader{ctx: ctx, rw: p}, out, st, func() {}) }()
	t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	for i := range 3 {
		p.data <- epochNMEA(t0.Add(time.Duration(i) * time.Second))
		r := receive(t, out, "an epoch followed by silence")
		if want := t0.Add(time.Duration(i) * time.Second); !r.GPS.T.Equal(want) {
			t.Fatalf("reading at %v, want %v", r.GPS.T, want)
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("readGPS after cancel = %v", err)
	}
	if len(out) != 0 {
		t.Errorf("%d extra readings", len(out))
	}
}

// TestDevicesHandOverWhatTheyHoldWhenStopped: the GPS epoch and the sound second in progress
// reach the batcher when the bridge stops, however the stop races with the send.
func TestDevicesHandOverWhatTheyHoldWhenStopped(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		p := newScriptedPort(ctx, 0)
		out := make(chan reading, 10)
		done := make(chan error, 1)
		go func() { done <- readGPS(ctx, &idleReader{ctx: ctx, rw: p}, out, newDeviceState("gps"), func() {}) }()
		p.data <- append(epochNMEA(t0), epochNMEA(t0.Add(time.Second))...)
		receive(t, out, "the first epoch")
		cancel()
		<-done
		if len(out) != 1 {
			t.Fatalf("run %d: %d readings after the stop, want the held epoch", i, len(out))
		}
	}
	var clock clockState
	for i := range 20 {
		ctx, cancel := context.WithCancel(context.Background())
		p := newScriptedPort(ctx, 0)
		out := make(chan reading, 10)
		done := make(chan error, 1)
		go func() {
			done <- readPCE(ctx, &idleReader{ctx: ctx, rw: p}, &Device{OffsetDB: 1.5}, &clock, out, newDeviceState("slm"), func() {})
		}()
		var frames []byte
		for range 5 {
			frames = append(frames, slm.EncodePCE(slm.PCEFrame{DeciDB: 650})...)
		}
		p.data <- frames
		eventually(t, "the frames read", func() bool { return p.consumed.Load() == int64(len(frames)) })
		cancel()
		<-done
		if len(out) != 1 {
			t.Fatalf("run %d: %d sound readings after the stop, want the second in progress", i, len(out))
		}
		s := (<-out).Sound
		if *s.DurS != 0.5 || *s.LAeqDB != 66.5 || *s.LAmaxDB != 66.5 {
			t.Errorf("sound reading dur %v s, LAeq %v, LAmax %v; want 0.5 s at 66.5 dB (65.0 + 1.5 offset)", *s.DurS, *s.LAeqDB, *s.LAmaxDB)
		}
		if !bytes.Equal(p.writes.Bytes(), []byte{0xac, 0xff}) {
			t.Errorf("the meter was sent %x, want the start command ac ff", p.writes.Bytes())
		}
	}
}

// TestReadPCEIdleAndPortFailure: the sound second in progress is handed over when the meter
// falls silent and when its port fails, never lost with the port.
func TestReadPCEIdleAndPortFailure(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p := newScriptedPort(ctx, 5*time.Millisecond)
	p.err = errors.New("input/output error")
	out := make(chan reading, 10)
	st := newDeviceState("slm")
	var clock clockState
	done := make(chan error, 1)
	go func() { done <- readPCE(ctx, &idleReader{ctx: ctx, rw: p}, &Device{}, &clock, out, st, func() {}) }()
	frames := func(n int) []byte {
		var b []byte
		for range n {
			b = append(b, slm.EncodePCE(slm.PCEFrame{DeciDB: 700})...)
		}
		return b
	}
	p.data <- frames(3)
	r := receive(t, out, "the second before a silence")
	if *r.Sound.DurS != 0.3 || *r.Sound.LAeqDB != 70 {
		t.Errorf("after silence: dur %v, LAeq %v; want 0.3 s at 70 dB", *r.Sound.DurS, *r.Sound.LAeqDB)
	}
	if got := st.snapshot()["slm"]; got != wire.DeviceOK {
		t.Errorf("slm state %q, want ok", got)
	}
	p.idle.Store(0) // no more read timeouts: only the failure can hand the next second over
	p.data <- frames(2)
	close(p.data)
	r = receive(t, out, "the second before the port failed")
	if *r.Sound.DurS != 0.2 {
		t.Errorf("after the failure: dur %v, want 0.2 s", *r.Sound.DurS)
	}
	if err := <-done; err == nil || err.Error() != "input/output error" {
		t.Errorf("readPCE = %v, want the port's error", err)
	}
}

func TestReadTacho(t *testing.T) {
	t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	var stream []byte
	for i := range 3 {
		stream = append(stream, tacho.EncodeVDO(tacho.VDOFrame{Time: t0.Add(time.Duration(i) * time.Second), Speed: uint16((20 + i) * 256)})...)
	}
	stream = append(stream, tacho.EncodeVDO(tacho.VDOFrame{Speed: 23 * 256})...) // no valid time
	out := make(chan reading, 10)
	st := newDeviceState("tacho")
	err := readTacho(context.Background(), bytes.NewReader(stream), tacho.LayoutVDO, out, st, func() {})
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("readTacho at the end of the stream = %v, want io.ErrUnexpectedEOF", err)
	}
	if len(out) != 4 {
		t.Fatalf("%d readings, want 4", len(out))
	}
	for i := range 4 {
		r := <-out
		if *r.Tacho.SpeedKmh != float64(20+i) {
			t.Errorf("reading %d: %v km/h, want %d", i, *r.Tacho.SpeedKmh, 20+i)
		}
		if want := i == 3; r.needsTime != want {
			t.Errorf("reading %d: needsTime %v, want %v", i, r.needsTime, want)
		} else if !want && !r.Tacho.T.Equal(t0.Add(time.Duration(i)*time.Second)) {
			t.Errorf("reading %d at %v", i, r.Tacho.T)
		}
	}
	if got := st.snapshot()["tacho"]; got != wire.DeviceOK {
		t.Errorf("tacho state %q, want ok", got)
	}
}

// timeoutCounter counts the reads of a port that return nothing and no error: its read
// timeouts.
type timeoutCounter struct {
	io.ReadWriter
	n *atomic.Int64
}

func (c timeoutCounter) Read(p []byte) (int, error) {
	n, err := c.ReadWriter.Read(p)
	if n == 0 && err == nil {
		c.n.Add(1)
	}
	return n, err
}

func openPTY(t *testing.T, link string) *sim.PTY {
	t.Helper()
	p, err := sim.OpenPTY(link)
	if errors.Is(err, sim.ErrNoPTY) {
		t.Skipf("no pseudo-terminals: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestPortLoopReopensAVanishedPort: a serial port that disappears (the USB adapter unplugged:
// reads fail with EIO, opens fail) is reported missing and reopened with backoff when it comes
// back under the same name, and its readings continue — without restarting the process.
func TestPortLoopReopensAVanishedPort(t *testing.T) {
	link := filepath.Join(t.TempDir(), "gps")
	first := openPTY(t, link)

	st := newDeviceState("gps")
	var mu sync.Mutex
	var history []string
	onChange := func() {
		mu.Lock()
		defer mu.Unlock()
		history = append(history, st.snapshot()["gps"])
	}
	out := make(chan reading, 1000)
	ctx, cancel := context.WithCancel(context.Background())
	var timeouts atomic.Int64 // read timeouts of the port
	done := make(chan struct{})
	go func() {
		defer close(done)
		portLoop(ctx, testLogger(t), "gps", serialport.Config{Path: link, Baud: 9600}, st, onChange, func(rw io.ReadWriter) error {
			if ir, ok := rw.(*idleReader); ok {
				ir.rw = timeoutCounter{ReadWriter: ir.rw, n: &timeouts}
			}
			return readGPS(ctx, rw, out, st, onChange)
		})
	}()
	defer func() {
		cancel()
		<-done
	}()

	t0 := time.Now().UTC().Truncate(time.Second)
	play := func(p *sim.PTY, from, n int) {
		for i := from; i < from+n; i++ {
			if _, err := p.Master.Write(epochNMEA(t0.Add(time.Duration(i) * time.Second))); err != nil {
				t.Fatalf("write epoch %d: %v", i, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	expect := func(from, n int) {
		t.Helper()
		for i := from; i < from+n; i++ {
			r := receive(t, out, "an epoch")
			if want := t0.Add(time.Duration(i) * time.Second); !r.GPS.T.Equal(want) {
				t.Fatalf("epoch %d at %v, want %v", i, r.GPS.T, want)
			}
		}
	}
	play(first, 0, 10)
	expect(0, 10)
	if got := st.snapshot()["gps"]; got != wire.DeviceOK {
		t.Fatalf("gps state %q while reading, want ok", got)
	}
	// A receiver silent for longer than the read timeout is silent, not gone: three read
	// timeouts handled (the fourth has begun, so the third's handling is over) change nothing.
	mu.Lock()
	changes := len(history)
	mu.Unlock()
	mark := timeouts.Load()
	eventually(t, "four read timeouts", func() bool { return timeouts.Load() >= mark+4 })
	mu.Lock()
	quiet := history[changes:]
	mu.Unlock()
	if got := st.snapshot()["gps"]; got != wire.DeviceOK || len(quiet) > 0 {
		t.Fatalf("gps state %q after three read timeouts of silence, changes %v; want ok, no change", got, quiet)
	}

	// Unplugged: the pseudo-terminal goes away, its device node with it.
	first.Close()
	eventually(t, "the device reported missing", func() bool { return st.snapshot()["gps"] == wire.DeviceMissing })

	// Plugged back in: a new device behind the same name (as udev's symlink does).
	second := openPTY(t, link)
	defer second.Close()
	play(second, 10, 10)
	expect(10, 10)
	eventually(t, "the device ok again", func() bool { return st.snapshot()["gps"] == wire.DeviceOK })

	select {
	case <-done:
		t.Fatal("portLoop returned")
	default:
	}
	mu.Lock()
	h := append([]string(nil), history...)
	mu.Unlock()
	// The states seen in order, e.g. no_fix ok missing no_fix ok (no_fix until the first fix).
	want := []string{wire.DeviceOK, wire.DeviceMissing, wire.DeviceOK}
	k := 0
	for _, s := range h {
		if k < len(want) && s == want[k] {
			k++
		}
	}
	if k != len(want) || h[len(h)-1] != wire.DeviceOK {
		t.Errorf("device states %v; want ok, then missing, then ok", h)
	}
	if len(out) != 0 {
		t.Errorf("%d unexpected extra readings", len(out))
	}
}
