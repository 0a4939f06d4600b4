package e2e

// End-to-end tests of the firmware bridge's "done when" items: simulated instruments write
// into real pseudo-terminals, the real `firmware-bridge run` reads them through its serial code
// and publishes to a real Mosquitto running the repository's configuration, and a subscriber
// (paho, QoS 1, as ingest and the monitor are) checks what arrives. The three tests run in
// parallel, each with its own broker; the longest (broker down for 60 s) bounds the file at
// about two minutes. Timeouts are generous bounds on a broken run, never measurements.

import (
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// bridgeInFlight is the bridge's window of batches published and not yet acknowledged
// (bridge.Config.InFlight, 16 by default): a bridge killed at any moment replays at most
// these, so at most this many duplicates per kill.
const bridgeInFlight = 16

// checkSequence fails the test unless exactly one epoch arrived with every seq from 1 to last,
// each batch valid by the wire format; it returns what arrived of the epoch.
func checkSequence(t *testing.T, sink *telemetrySink, last uint64) epochReport {
	t.Helper()
	eps := sink.epochs()
	if len(eps) != 1 {
		t.Fatalf("%d epochs arrived, want 1 (the state directory is kept): %+v", len(eps), eps)
	}
	e := eps[0]
	if len(e.missing) > 0 {
		shown := e.missing
		if len(shown) > 20 {
			shown = shown[:20]
		}
		t.Errorf("epoch %s: %d seqs never arrived (gaps), the first: %v", e.epoch, len(e.missing), shown)
	}
	if e.maxSeq != last || uint64(e.distinct) != last {
		t.Errorf("epoch %s: %d distinct batches up to seq %d; the bridge says its last seq is %d", e.epoch, e.distinct, e.maxSeq, last)
	}
	if bad := sink.invalidMessages(); len(bad) > 0 {
		t.Errorf("%d messages the wire format rejects, e.g. %s", len(bad), bad[0])
	}
	return e
}

// stopBridge stops the bridge cleanly (SIGTERM), waits for the status it publishes last and for
// every batch up to the seq it names, and checks that its spool is empty.
func stopBridge(t *testing.T, bridge *testenv.Process, sink *telemetrySink) wire.Status {
	t.Helper()
	n := sink.statusCount()
	bridge.Stop()
	final := sink.finalStatus(t, n)
	if final.Seq == 0 || final.SpoolDepth == nil || *final.SpoolDepth != 0 || final.SpoolEvicted == nil || *final.SpoolEvicted != 0 {
		t.Errorf("final status: seq %d, spool depth %v, evicted %v; want a seq, an empty spool, nothing evicted", final.Seq, deref(final.SpoolDepth), deref(final.SpoolEvicted))
	}
	// What is still missing after a generous minute is reported by checkSequence.
	deadline := time.Now().Add(time.Minute)
	for !sink.complete(final.Seq) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	return final
}

func deref(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// TestBridgeDeliversEveryReading: simulator → pseudo-terminals → bridge → Mosquitto →
// subscriber. Every GPS epoch and tachograph frame the simulator wrote arrives once, in a
// sequence without gaps; sound arrives as one-second aggregates of the meter's ten frames a
// second: exactly one aggregate for every second of the run (the seconds of the GPS epochs),
// each of the second's ten frames, and none outside the run.
//
// The meter sets its clock (--meter-clock), so the bridge times each frame by the second the
// meter stamped on it. A meter without a clock has its frames timed by the bridge's clock when
// they are read, and on a loaded machine a frame read a few hundred milliseconds late falls
// into the next second: which second such a frame lands in is a property of the machine's
// load, not of the bridge, and was this test's only source of failure in CI. The timing on
// receipt is tested where the clock is the test's: the slm decoder's and the bridge's tests.
func TestBridgeDeliversEveryReading(t *testing.T) {
	t.Parallel()
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	const vehicle = "PTY-001"
	sink := subscribe(t, broker.URL(), "e2e-"+vehicle, false, vehicle)

	sim := startSimulation(t, bin, "--vehicles=1", "--prefix=PTY", "--scenario=20:45:68", "--duration=30s", "--speed-up=1", "--meter-clock")
	bridge := startBridge(t, bin, broker.URL(), vehicle, sim.devices[vehicle])
	wrote := sim.wait(t, 3*time.Minute)[vehicle]
	if wrote.Dropped != 0 || wrote.GPSEpochs != 30 || wrote.TachoFrames != 30 || wrote.SLMFrames != 300 {
		t.Fatalf("the simulator wrote %+v; want 30 GPS epochs, 30 tachograph frames, 300 meter frames, no write dropped", wrote)
	}
	count := func() (gps, tacho int) {
		for _, b := range sink.received() {
			gps += len(b.GPS)
			tacho += len(b.Tacho)
		}
		return gps, tacho
	}
	testenv.WaitFor(t, "every GPS epoch and tachograph frame", time.Minute, func() bool {
		g, tc := count()
		return g >= wrote.GPSEpochs && tc >= wrote.TachoFrames
	})
	final := stopBridge(t, bridge, sink)
	e := checkSequence(t, sink, final.Seq)

	var gpsT []time.Time
	var tacho []wire.Tacho
	var sound []wire.Sound
	for _, b := range sink.received() {
		for _, g := range b.GPS {
			gpsT = append(gpsT, g.T.Time)
		}
		tacho = append(tacho, b.Tacho...)
		sound = append(sound, b.Sound...)
	}
	if len(gpsT) != wrote.GPSEpochs {
		t.Errorf("%d GPS epochs received, %d written", len(gpsT), wrote.GPSEpochs)
	}
	for i := 1; i < len(gpsT); i++ {
		if d := gpsT[i].Sub(gpsT[i-1]); d != time.Second {
			t.Errorf("GPS epoch %d at %v, %v after the previous one; want 1 s (one per epoch written, in order)", i, gpsT[i], d)
		}
	}
	if len(tacho) != wrote.TachoFrames {
		t.Errorf("%d tachograph readings received, %d frames written", len(tacho), wrote.TachoFrames)
	}
	for i, r := range tacho {
		if r.SpeedKmh == nil || *r.SpeedKmh != 20 || r.Card != "0000000086H101" {
			t.Errorf("tachograph reading %d: %+v; want 20 km/h and the driver card", i, r)
			break
		}
	}
	var covered float64
	for i, s := range sound {
		covered += *s.DurS
		if math.Abs(*s.DurS-1) > 1e-9 || *s.LAeqDB < 66-0.01 || *s.LAeqDB > 70+0.01 || *s.LAmaxDB < *s.LAeqDB {
			t.Errorf("sound aggregate %d at %v: %v s, LAeq %v, LAmax %v; want the second's ten frames (1 s) of 68 ± 2 dB", i, s.T.Time, *s.DurS, *s.LAeqDB, *s.LAmaxDB)
		}
	}
	// Every second of the run has its sound, once: the seconds of the aggregates are the
	// seconds of the GPS epochs.
	gpsSeconds, soundSeconds := map[int64]bool{}, map[int64]int{}
	for _, g := range gpsT {
		gpsSeconds[g.Unix()] = true
	}
	for _, s := range sound {
		soundSeconds[s.T.Unix()]++
	}
	for sec := range gpsSeconds {
		if soundSeconds[sec] == 0 {
			t.Errorf("no sound aggregate for second %v of the run", time.Unix(sec, 0).UTC())
		}
	}
	for sec, n := range soundSeconds {
		switch {
		case !gpsSeconds[sec]:
			t.Errorf("%d sound aggregates for second %v, outside the run", n, time.Unix(sec, 0).UTC())
		case n > 1:
			t.Errorf("%d sound aggregates for second %v; want one", n, time.Unix(sec, 0).UTC())
		}
	}
	if frames := float64(wrote.SLMFrames); len(sound) != len(gpsSeconds) || math.Abs(covered-frames/10) > 1e-6 {
		t.Errorf("%d sound aggregates covering %.1f s for %.0f frames; want one for each of the %d seconds, covering %.0f s",
			len(sound), covered, frames, len(gpsSeconds), frames/10)
	}
	t.Logf("wrote %d GPS epochs, %d tachograph frames, %d meter frames; received %d batches (%d duplicates): %d GPS, %d tacho, %d sound aggregates covering %.1f s",
		wrote.GPSEpochs, wrote.TachoFrames, wrote.SLMFrames, e.distinct, e.duplicates, len(gpsT), len(tacho), len(sound), covered)
}

// TestBridgeSurvivesSIGKILL: the bridge is killed with SIGKILL at 20 random moments of a run of
// 5,000 batches and started again on the same state directory each time. Every seq from 1 to
// the last arrives (duplicates allowed, no gaps), in one epoch, and a restart replays at most
// the in-flight window (a bridge that did not acknowledge its spool would replay everything).
//
// The bridge reaches the broker through a link the test controls. Half the kills come while
// the link is stalled (the bridge keeps publishing, nothing is delivered or acknowledged), and
// the link is cut with the kill, losing what was in flight, as when a vehicle's 4G link drops
// and its power is cut: only batches kept in the spool until their PUBACK survive that. (With
// the link up, a kill rarely finds a batch between its publication and its PUBACK: a bridge that
// acknowledged its spool on publication would pass those kills.)
func TestBridgeSurvivesSIGKILL(t *testing.T) {
	t.Parallel()
	const (
		vehicle = "SIGK-001"
		batches = 5000
		kills   = 20
	)
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	sink := subscribe(t, broker.URL(), "e2e-"+vehicle, false, vehicle)
	// 20× device time and 5 fixes a second: about 100 GPS epochs a wall-clock second, so that
	// every 20 ms batch has readings.
	sim := startSimulation(t, bin, "--vehicles=1", "--prefix=SIGK", "--scenario=20:1000000", "--speed-up=20", "--gps-hz=5")
	link := startLink(t, broker.Addr())
	bridge := startBridge(t, bin, link.URL(), vehicle, sim.devices[vehicle], "--batch-interval", "20ms")

	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, 1))
	at := map[uint64]bool{}
	for len(at) < kills {
		at[100+rng.Uint64N(batches-200)] = true
	}
	thresholds := slices.Sorted(maps.Keys(at))
	start := time.Now()
	for i, th := range thresholds {
		testenv.WaitFor(t, "the batches before the next kill", 3*time.Minute, func() bool { return sink.maxSeq() >= th })
		stalled := i%2 == 1
		if stalled {
			// Two to ten batch intervals of publishing into a link that delivers nothing.
			link.stall()
			time.Sleep(time.Duration(40+rng.IntN(160)) * time.Millisecond)
		} else {
			// A random moment: up to five batch intervals after the threshold arrived.
			time.Sleep(time.Duration(rng.IntN(100)) * time.Millisecond)
		}
		bridge.Kill()
		if stalled {
			link.cut()
		}
		// Down for up to 200 ms while the instruments keep writing.
		time.Sleep(time.Duration(rng.IntN(200)) * time.Millisecond)
		if err := bridge.Start(); err != nil {
			t.Fatalf("restart %d: %v", i+1, err)
		}
	}
	testenv.WaitFor(t, "5,000 batches", 5*time.Minute, func() bool { return sink.maxSeq() >= batches })
	final := stopBridge(t, bridge, sink)
	e := checkSequence(t, sink, final.Seq)
	if e.duplicates > kills*bridgeInFlight {
		t.Errorf("%d duplicates after %d kills; a restart replays at most the %d batches in flight", e.duplicates, kills, bridgeInFlight)
	}
	t.Logf("seed %d: %d kills (%d with the link stalled and cut) at seqs %v; %d batches (seq 1–%d), %d duplicates, %d messages in %v",
		seed, kills, kills/2, thresholds, e.distinct, final.Seq, e.duplicates, e.distinct+e.duplicates, time.Since(start).Round(time.Second))
}

// TestBridgeSurvivesBrokerRestart: Mosquitto (the repository's configuration, persistence on)
// is stopped for 60 s mid-run and started again. The subscriber has a persistent session, so
// the broker keeps what it had queued for it; the bridge spools what it makes meanwhile and
// publishes it once it reconnects. Every seq arrives.
func TestBridgeSurvivesBrokerRestart(t *testing.T) {
	t.Parallel()
	const vehicle = "BRK-001"
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	sink := subscribe(t, broker.URL(), "e2e-"+vehicle, true, vehicle)
	sim := startSimulation(t, bin, "--vehicles=1", "--prefix=BRK", "--scenario=20:1000000", "--speed-up=1", "--gps-hz=5")
	bridge := startBridge(t, bin, broker.URL(), vehicle, sim.devices[vehicle], "--batch-interval", "250ms")

	testenv.WaitFor(t, "the first batches", time.Minute, func() bool { return sink.maxSeq() >= 20 })
	before := sink.maxSeq()
	stopped := time.Now()
	broker.Stop()
	time.Sleep(60 * time.Second)
	restarted := time.Now()
	broker.Restart(t)
	// The bridge reconnects with backoff (up to 30 s); wait for a batch made after the restart.
	testenv.WaitFor(t, "a batch made after the restart", 3*time.Minute, func() bool {
		r := sink.received()
		return len(r) > 0 && r[len(r)-1].SentAt.After(restarted)
	})
	final := stopBridge(t, bridge, sink)
	e := checkSequence(t, sink, final.Seq)
	// sent_at is on the GPS time base, which the simulator plays at the wall clock's pace.
	during := 0
	for _, b := range sink.received() {
		if b.SentAt.After(stopped) && b.SentAt.Before(restarted) {
			during++
		}
	}
	if during == 0 {
		t.Errorf("no batch made while the broker was down arrived")
	}
	t.Logf("seq %d before the stop; %d batches made while the broker was down; %d batches in all (seq 1–%d), %d duplicates",
		before, during, e.distinct, final.Seq, e.duplicates)
}
