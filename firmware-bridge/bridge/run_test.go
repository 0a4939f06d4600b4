package bridge

import (
	"context"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/firmware-bridge/serialport"
	"github.com/trenzinho/trenzinho/firmware-bridge/slm"
	"github.com/trenzinho/trenzinho/firmware-bridge/spool"
	"github.com/trenzinho/trenzinho/wire"
)

// lastGPSTime is the GPS time of the last fix the batcher took (zero before any).
func (c *clockState) lastGPSTime() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.lastAt.IsZero() {
		return time.Time{}
	}
	return c.lastAt.Add(c.offset)
}

// TestRunSpoolsWhatTheDevicesHoldWhenStopped: stopping the bridge (SIGTERM) stops the devices
// first and closes the last batch with what they still held — the GPS epoch in progress and the
// sound second in progress — all through the real serial code on pseudo-terminals. No broker is
// reachable: everything stays in the spool for the next start.
func TestRunSpoolsWhatTheDevicesHoldWhenStopped(t *testing.T) {
	gpsPTY, slmPTY := openPTY(t, ""), openPTY(t, "")
	defer gpsPTY.Close()
	defer slmPTY.Close()
	dir := t.TempDir()
	b := newTestBridge(t, Config{
		StateDir:      dir,
		GPS:           &Device{Port: serialport.Config{Path: gpsPTY.Path, Baud: 9600}},
		SLM:           &Device{Port: serialport.Config{Path: slmPTY.Path, Baud: 115200}, Protocol: "pce322a"},
		BatchInterval: time.Hour,
		MQTT:          config.MQTT{URL: "tcp://127.0.0.1:1"}, // refused
	})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	runDone := make(chan error, 1)
	go func() { runDone <- b.Run(ctx) }()

	// Keep both lines busy with bytes that decode to nothing, so that no read times out: only
	// the stop can hand over what the decoders hold.
	keepDone := make(chan struct{})
	stopKeep := make(chan struct{})
	go func() {
		defer close(keepDone)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stopKeep:
				return
			case <-tick.C:
				gpsPTY.Master.Write([]byte("# keepalive\r\n"))
				slmPTY.Master.Write([]byte{0x00})
			}
		}
	}()
	defer func() {
		select {
		case <-stopKeep:
		default:
			close(stopKeep)
		}
		<-keepDone
	}()

	t0 := time.Now().UTC().Truncate(time.Second).Add(-time.Minute)
	var nmea []byte
	for i := range 3 {
		nmea = append(nmea, epochNMEA(t0.Add(time.Duration(i)*time.Second))...)
	}
	gpsPTY.Master.Write(nmea)
	// Five samples in meter second s0, three in the next: the meter's clock times them.
	s0 := t0.Add(30 * time.Second)
	var frames []byte
	for i := range 8 {
		at := s0
		if i >= 5 {
			at = s0.Add(time.Second)
		}
		frames = append(frames, slm.EncodePCE(slm.PCEFrame{DeciDB: 700, Time: at})...)
	}
	slmPTY.Master.Write(frames)

	// The second epoch reached the batcher once the third started; the first meter second was
	// handed over once the next one started.
	eventually(t, "the second GPS epoch batched", func() bool { return b.clock.lastGPSTime().Equal(t0.Add(time.Second)) })
	eventually(t, "the first sound second", func() bool { return b.devs.snapshot()["slm"] == wire.DeviceOK })
	cancel()
	select {
	case err := <-runDone:
		if err != nil {
			t.Fatalf("Run: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("Run did not return after cancel")
	}
	close(stopKeep)

	sp, err := spool.Open(dir, spool.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer sp.Close()
	recs, err := sp.Pending(0, 100)
	if err != nil {
		t.Fatal(err)
	}
	batches := decodeRecords(t, "TEST-001", recs)
	var gpsT []time.Time
	var sound []wire.Sound
	for _, bt := range batches {
		gpsT = append(gpsT, gpsTimes([]*wire.Batch{bt})...)
		sound = append(sound, bt.Sound...)
	}
	if len(gpsT) != 3 {
		t.Errorf("%d GPS epochs spooled, want 3: %v", len(gpsT), gpsT)
	}
	for i, tm := range gpsT {
		if want := t0.Add(time.Duration(i) * time.Second); !tm.Equal(want) {
			t.Errorf("epoch %d at %v, want %v", i, tm, want)
		}
	}
	if len(sound) != 2 {
		t.Fatalf("%d sound readings spooled, want 2 (the held second included): %+v", len(sound), sound)
	}
	for i, want := range []struct {
		t   time.Time
		dur float64
	}{{s0, 0.5}, {s0.Add(time.Second), 0.3}} {
		if !sound[i].T.Equal(want.t) || *sound[i].DurS != want.dur || *sound[i].LAeqDB != 70 {
			t.Errorf("sound %d: %v, %v s, %v dB; want %v, %v s, 70 dB", i, sound[i].T, *sound[i].DurS, *sound[i].LAeqDB, want.t, want.dur)
		}
	}
}
