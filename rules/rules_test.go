package rules

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// trip builds batches of one vehicle: one reading per second per instrument, five seconds per
// batch, moving east from the centre of Piúma at the given speeds.
type trip struct {
	vehicle string
	epoch   string
	seq     uint64
	t       time.Time
	lat     float64
	lon     float64
	tacho   bool
	gps     bool
	clock   wire.Clock
	// service, when set, is the service switch's state sent with every second.
	service *bool
}

func newTrip(start time.Time) *trip {
	return &trip{vehicle: "PIU-001", epoch: "e-1", t: start, lat: -20.8367, lon: -40.7292, tacho: true, gps: true, clock: wire.ClockGPS}
}

// batches returns one batch per 5 s of the given per-second speeds.
func (tr *trip) batches(speeds ...float64) []*wire.Batch {
	var out []*wire.Batch
	var b *wire.Batch
	for i, kmh := range speeds {
		if i%5 == 0 {
			tr.seq++
			b = &wire.Batch{V: 1, Vehicle: tr.vehicle, Epoch: tr.epoch, Seq: tr.seq, Clock: tr.clock}
			out = append(out, b)
		}
		// Move as far as the speed takes us in one second (east: longitude grows).
		tr.lon += kmh / 3.6 / (111320 * 0.9346)
		t := wire.NewTime(tr.t)
		if tr.tacho {
			b.Tacho = append(b.Tacho, wire.Tacho{T: t, SpeedKmh: ptr(kmh)})
		}
		if tr.gps {
			b.GPS = append(b.GPS, wire.GPS{T: t, Lat: tr.lat, Lon: tr.lon, SpeedKmh: ptr(kmh), HDOP: ptr(0.9), Fix: wire.Fix3D})
		}
		if tr.service != nil {
			b.Service = append(b.Service, wire.Service{T: t, On: *tr.service})
		}
		b.SentAt = t
		tr.t = tr.t.Add(time.Second)
	}
	return out
}

func repeat(v float64, n int) []float64 {
	s := make([]float64, n)
	for i := range s {
		s[i] = v
	}
	return s
}

func concat(s ...[]float64) []float64 {
	var out []float64
	for _, x := range s {
		out = append(out, x...)
	}
	return out
}

// run applies batches as if received live (receive clock = device time + 1 s) and returns all
// episodes as last seen, by id.
type run struct {
	e        *Engine
	episodes map[string]Episode
	events   []Event
	evidence map[string]int
}

func newRun(t *testing.T) *run {
	return &run{e: New(profile.Piuma(), nil), episodes: map[string]Episode{}, evidence: map[string]int{}}
}

func (r *run) apply(t *testing.T, bs []*wire.Batch, delay time.Duration) {
	t.Helper()
	for _, b := range bs {
		recv := b.SentAt.Add(delay)
		r.e.Tick(recv)
		r.e.Apply(b, recv)
		r.drain(t)
	}
}

func (r *run) drain(t *testing.T) {
	t.Helper()
	c, err := r.e.Drain()
	if err != nil {
		t.Fatal(err)
	}
	for _, ep := range c.Episodes {
		r.episodes[ep.ID] = ep
	}
	for id, ev := range c.Evidence {
		r.evidence[id] += len(ev)
	}
	r.events = append(r.events, c.Events...)
}

func (r *run) rule(name string) []Episode {
	var out []Episode
	for _, ep := range r.episodes {
		if ep.Rule == name {
			out = append(out, ep)
		}
	}
	return out
}

var noon = time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC) // 12:00 in Piúma, a Friday

func TestSpeed(t *testing.T) {
	cases := []struct {
		name   string
		tacho  bool
		speeds []float64
		want   int
		peak   float64
		startS int // seconds from the trip start
		durS   float64
		closed string
	}{
		{name: "45 km/h for 30 s", tacho: true, speeds: concat(repeat(20, 10), repeat(45, 30), repeat(20, 20)), want: 1, peak: 45, startS: 10, durS: 30, closed: ClosedCleared},
		{name: "25 km/h", tacho: true, speeds: repeat(25, 60), want: 0},
		{name: "exactly limit+tolerance", tacho: true, speeds: concat(repeat(20, 5), repeat(37, 30), repeat(20, 20)), want: 0},
		{name: "just over limit+tolerance", tacho: true, speeds: concat(repeat(20, 5), repeat(37.1, 30), repeat(20, 20)), want: 1, peak: 37.1, startS: 5, durS: 30, closed: ClosedCleared},
		{name: "9 s over is not confirmed", tacho: true, speeds: concat(repeat(20, 5), repeat(50, 10), repeat(20, 20)), want: 0},
		{name: "11 s over is", tacho: true, speeds: concat(repeat(20, 5), repeat(50, 11), repeat(20, 20)), want: 1, peak: 50, startS: 5, durS: 11, closed: ClosedCleared},
		{name: "a short dip does not split the episode", tacho: true, speeds: concat(repeat(20, 5), repeat(50, 15), repeat(30, 5), repeat(50, 15), repeat(20, 20)), want: 1, peak: 50, startS: 5, durS: 35, closed: ClosedCleared},
		{name: "gps only, 45 km/h for 30 s", tacho: false, speeds: concat(repeat(20, 10), repeat(45, 30), repeat(20, 20)), want: 1, peak: 45, startS: 10, durS: 30, closed: ClosedCleared},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newRun(t)
			tr := newTrip(noon)
			tr.tacho = c.tacho
			r.apply(t, tr.batches(c.speeds...), time.Second)
			eps := r.rule("speed")
			if len(eps) != c.want {
				t.Fatalf("%d speed episodes, want %d: %+v", len(eps), c.want, eps)
			}
			if c.want == 0 {
				return
			}
			ep := eps[0]
			if ep.Peak != c.peak || !ep.Start.Equal(noon.Add(time.Duration(c.startS)*time.Second)) || ep.DurationS != c.durS {
				t.Errorf("peak %v start %v duration %v; want %v %v %v", ep.Peak, ep.Start, ep.DurationS, c.peak, noon.Add(time.Duration(c.startS)*time.Second), c.durS)
			}
			if ep.Closed == nil || *ep.Closed != c.closed {
				t.Errorf("closed %v, want %s", ep.Closed, c.closed)
			}
			if ep.Article != "Art. 23" || ep.Penalty != "Art. 46, X" || ep.Limit != 30 || ep.Tolerance != 7 {
				t.Errorf("legal mapping %s / %s / %v+%v", ep.Article, ep.Penalty, ep.Limit, ep.Tolerance)
			}
			if r.evidence[ep.ID] < int(c.durS) {
				t.Errorf("%d evidence readings for a %v s episode", r.evidence[ep.ID], c.durS)
			}
		})
	}
}

func TestSpeedGPSSpikeAgainstTacho(t *testing.T) {
	r := newRun(t)
	tr := newTrip(noon)
	bs := tr.batches(repeat(20, 40)...)
	// One GPS sample at 90 km/h while the tachograph says 20.
	bs[3].GPS[2].SpeedKmh = ptr(90.0)
	r.apply(t, bs, time.Second)
	if n := len(r.rule("speed")); n != 0 {
		t.Fatalf("%d speed episodes from a GPS spike", n)
	}
	// Without a tachograph, 90 km/h for 12 s from a GPS whose positions did not move that far
	// is not evidence either (the implied speed disagrees).
	r = newRun(t)
	tr = newTrip(noon)
	tr.tacho = false
	bs = tr.batches(repeat(20, 40)...)
	for i := range 3 {
		for j := range bs[2+i].GPS {
			bs[2+i].GPS[j].SpeedKmh = ptr(90.0)
		}
	}
	r.apply(t, bs, time.Second)
	if n := len(r.rule("speed")); n != 0 {
		t.Fatalf("%d speed episodes from GPS speeds its positions contradict", n)
	}
}

func TestDuplicatesAndNewEpoch(t *testing.T) {
	r := newRun(t)
	tr := newTrip(noon)
	bs := tr.batches(concat(repeat(20, 10), repeat(45, 30), repeat(20, 20))...)
	r.apply(t, bs, time.Second)
	r.apply(t, bs, time.Second) // QoS 1 redelivery of everything
	r.apply(t, bs[3:6], time.Second)
	if n := len(r.rule("speed")); n != 1 {
		t.Fatalf("%d speed episodes after duplicates", n)
	}
	opens := 0
	for _, ev := range r.events {
		if ev.Kind == EventOpen {
			opens++
		}
	}
	if opens != 1 {
		t.Fatalf("%d open events", opens)
	}
	// The bridge is replaced: a new epoch starts again at seq 1 and is judged.
	tr.epoch, tr.seq = "e-2", 0
	res := r.e.Apply(tr.batches(concat(repeat(45, 30), repeat(20, 20))...)[0], tr.t)
	if res.Duplicate || !res.NewEpoch {
		t.Fatalf("new epoch batch: %+v", res)
	}
}

func TestRestartMidEpisode(t *testing.T) {
	tr := newTrip(noon)
	bs := tr.batches(concat(repeat(20, 10), repeat(45, 30), repeat(20, 20))...)

	live := newRun(t)
	live.apply(t, bs, time.Second)

	// The same batches, with a restart after the episode opened: the engine is rebuilt from the
	// snapshots committed so far, and the broker redelivers the last (unacknowledged) batch.
	r := newRun(t)
	snaps := map[string][]byte{}
	for i, b := range bs {
		recv := b.SentAt.Add(time.Second)
		r.e.Tick(recv)
		r.e.Apply(b, recv)
		c, _ := r.e.Drain()
		for _, ep := range c.Episodes {
			r.episodes[ep.ID] = ep
		}
		for k, v := range c.Snapshots {
			snaps[k] = v
		}
		if i == 4 {
			r.e = New(profile.Piuma(), nil)
			for _, s := range snaps {
				if err := r.e.Restore(s); err != nil {
					t.Fatal(err)
				}
			}
			r.e.Apply(b, recv) // redelivered
		}
	}
	if len(r.episodes) != 1 || len(live.episodes) != 1 {
		t.Fatalf("%d episodes after restart, %d live", len(r.episodes), len(live.episodes))
	}
	for id, ep := range live.episodes {
		got := r.episodes[id]
		if got.ID != ep.ID || got.DurationS != ep.DurationS || got.Peak != ep.Peak || *got.Closed != *ep.Closed {
			t.Fatalf("after restart %+v\nlive %+v", got, ep)
		}
	}
}

func TestPowerCutMidEpisode(t *testing.T) {
	r := newRun(t)
	tr := newTrip(noon)
	r.apply(t, tr.batches(concat(repeat(20, 5), repeat(45, 20))...), time.Second)
	// Power cut: nothing arrives; the receive clock passes the gap timeout.
	r.e.Tick(tr.t.Add(121 * time.Second))
	r.drain(t)
	eps := r.rule("speed")
	if len(eps) != 1 || eps[0].Closed == nil || *eps[0].Closed != ClosedInterrupted {
		t.Fatalf("after the gap timeout: %+v", eps)
	}
	if !eps[0].End.Equal(noon.Add(24 * time.Second)) {
		t.Errorf("interrupted episode ends at %v, want the last reading over the limit", eps[0].End)
	}
	// Power returns ten minutes later, the vehicle still fast: a new episode.
	tr.t = tr.t.Add(10 * time.Minute)
	r.apply(t, tr.batches(concat(repeat(45, 20), repeat(20, 20))...), time.Second)
	if n := len(r.rule("speed")); n != 2 {
		t.Fatalf("%d episodes after the power returned", n)
	}
}

func TestLateBufferJudgedAsLive(t *testing.T) {
	// Two hours of driving: every 10 minutes, 40 s at 45 km/h; once, 15 s at 50.
	var speeds []float64
	for range 12 {
		speeds = append(speeds, concat(repeat(20, 60), repeat(45, 40), repeat(20, 500))...)
	}
	speeds = append(speeds, concat(repeat(50, 15), repeat(20, 60))...)
	live := newRun(t)
	live.apply(t, newTrip(noon).batches(speeds...), time.Second)

	// The same trip buffered offline for two hours and sent at once, then replayed again.
	late := newRun(t)
	bs := newTrip(noon).batches(speeds...)
	late.e.Tick(noon.Add(30 * time.Minute)) // the receive clock runs while nothing arrives
	late.apply(t, bs, 2*time.Hour)
	late.apply(t, bs, 3*time.Hour)
	if len(live.episodes) != 13 {
		t.Fatalf("%d live episodes, want 13", len(live.episodes))
	}
	if len(late.episodes) != len(live.episodes) {
		t.Fatalf("%d late episodes, %d live", len(late.episodes), len(live.episodes))
	}
	for id, ep := range live.episodes {
		got, ok := late.episodes[id]
		if !ok || got.DurationS != ep.DurationS || got.Peak != ep.Peak || *got.Closed != *ep.Closed || late.evidence[id] != live.evidence[id] {
			t.Fatalf("late %+v\nlive %+v", got, ep)
		}
	}
}

func TestSystemClockIsNotEvidence(t *testing.T) {
	r := newRun(t)
	tr := newTrip(noon)
	tr.clock = wire.ClockSystem
	r.apply(t, tr.batches(concat(repeat(20, 10), repeat(45, 30), repeat(20, 20))...), time.Second)
	if n := len(r.episodes); n != 0 {
		t.Fatalf("%d episodes from readings timed by the system clock", n)
	}
}

func TestCursor(t *testing.T) {
	c := &Cursor{Next: 1}
	for _, s := range []uint64{1, 3, 2, 5, 4} {
		if c.mark(s) {
			t.Fatalf("%d reported as duplicate", s)
		}
	}
	for _, s := range []uint64{1, 2, 3, 4, 5} {
		if !c.mark(s) {
			t.Fatalf("%d not reported as duplicate", s)
		}
	}
	if c.Next != 6 || len(c.Above) != 0 {
		t.Fatalf("cursor %+v", c)
	}
}
