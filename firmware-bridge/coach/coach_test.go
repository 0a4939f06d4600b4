package coach

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// hospitalAt is the distance from the stream's street position x (metres east) to the hospital.
func hospitalAt(x float64) float64 {
	dy := 0.0003 * 111320
	return math.Hypot(1000-x, dy)
}

func TestSiteSoundWarnsAtLeadDistance(t *testing.T) {
	for _, c := range []struct {
		name string
		kmh  float64
		lead float64 // the lead distance the warning must come at, to the site's 200 m radius
	}{
		{"25 km/h: the bundle's lead", 25, 300},
		{"45 km/h: the lead grows with the speed above the limit", 45, 300 * 45.0 / 30},
	} {
		t.Run(c.name, func(t *testing.T) {
			cb := signedBundle(t, testBundle(3, configbundle.Warnings{LeadDistanceM: 300}))
			bs, east := stream{start: eveningFriday, steps: steps(120, c.kmh, 80)}.batches()
			ws, co := collect(t, cb, bs)
			site := ofKind(ws, KindSiteSound)
			if len(site) == 0 {
				t.Fatalf("no site_sound warning; warnings %+v", ws)
			}
			w := site[0]
			i := int(w.T.Sub(eveningFriday) / time.Second)
			d := hospitalAt(east[i])
			step := c.kmh / 3.6
			if w.Site != "s-hospital" || w.Rule != rules.RuleSensitiveZoneSound || w.Limit != 70 || w.Value < 79 {
				t.Errorf("warning %+v", w)
			}
			// The first warning comes within one second's travel of the lead distance.
			if d-200 > c.lead || d-200 < c.lead-step-1 || math.Abs(w.DistanceM-d) > 1 {
				t.Errorf("warned at %.0f m from the hospital (distance_m %.0f); want at %.0f m (lead %.0f m + radius 200 m)",
					d, w.DistanceM, c.lead+200, c.lead)
			}
			for _, w := range ws {
				if w.Site == "s-escola" {
					t.Errorf("warned of the school, closed at 20:00: %+v", w)
				}
			}
			if n := co.State().Warnings; n != int64(len(ws)) {
				t.Errorf("State.Warnings %d, emitted %d", n, len(ws))
			}
		})
	}
}

func TestQuietApproachNoSiteWarning(t *testing.T) {
	cb := signedBundle(t, testBundle(3, configbundle.Warnings{}))
	bs, _ := stream{start: eveningFriday, steps: steps(160, 25, 60)}.batches()
	ws, _ := collect(t, cb, bs)
	if s := ofKind(ws, KindSiteSound); len(s) != 0 {
		t.Fatalf("site_sound warnings at 60 dB(A): %+v", s)
	}
}

func TestSpeedWarnings(t *testing.T) {
	cb := signedBundle(t, testBundle(3, configbundle.Warnings{SpeedMarginKmh: 2}))
	bs, _ := stream{start: eveningFriday, steps: join(steps(5, 20, math.NaN()), steps(5, 28, math.NaN()),
		steps(150, 31, math.NaN()), steps(5, 20, math.NaN()))}.batches()
	ws, co := collect(t, cb, bs)
	near, over := ofKind(ws, KindSpeedNear), ofKind(ws, KindSpeedOver)
	if len(near) != 1 || near[0].Value != 28 || near[0].Limit != 30 || !near[0].T.Equal(eveningFriday.Add(5*time.Second)) {
		t.Errorf("speed_near %+v; want one at 28 km/h, 5 s in", near)
	}
	// 150 s above the limit: warned at once, then every minute.
	if len(over) != 3 || over[0].Value != 31 || !over[0].T.Equal(eveningFriday.Add(10*time.Second)) ||
		over[1].T.Sub(over[0].T) != Repeat {
		t.Errorf("speed_over %+v; want three, from 10 s in, a minute apart", over)
	}
	if got := Text(Active{Warning: over[0]}); got != "31 km/h — LIMITE 30" {
		t.Errorf("text %q", got)
	}
	// At 20 km/h again nothing is active.
	if st := co.State(); len(st.Active) != 0 {
		t.Errorf("active after slowing down: %+v", st.Active)
	}
}

func TestSpeedOutOfServiceNotWarned(t *testing.T) {
	cb := signedBundle(t, testBundle(3, configbundle.Warnings{}))
	off := false
	bs, _ := stream{start: eveningFriday, steps: steps(20, 40, math.NaN()), service: &off}.batches()
	ws, _ := collect(t, cb, bs)
	if len(ws) != 0 {
		t.Fatalf("warnings out of service (switch off): %+v", ws)
	}
}

func TestHoursEndWarnings(t *testing.T) {
	cb := signedBundle(t, testBundle(3, configbundle.Warnings{}))
	start := time.Date(2026, 11, 28, 1, 39, 0, 0, time.UTC) // 22:39 in Piúma
	bs, _ := stream{start: start, steps: steps(17*60, 15, math.NaN())}.batches()
	ws, _ := collect(t, cb, bs)
	h := ofKind(ws, KindHoursEnd)
	if len(h) != 2 || h[0].Limit != 20 || h[1].Limit != 5 ||
		!h[0].T.Equal(start.Add(time.Minute)) || !h[1].T.Equal(start.Add(16*time.Minute)) {
		t.Fatalf("hours_end %+v; want at 22:40 (20 min) and 22:55 (5 min)", h)
	}
	if h[0].Value != 20 || h[0].Rule != rules.RuleHours {
		t.Errorf("hours_end %+v", h[0])
	}
}

func TestItineraryWarning(t *testing.T) {
	cb := signedBundle(t, testBundle(3, configbundle.Warnings{}))
	s := steps(60, 20, math.NaN())
	for i := 30; i < 60; i++ {
		s[i].offM = 4 * float64(i-29) // a side street veering north of the itinerary, 4 m a second
	}
	bs, _ := stream{start: eveningFriday, steps: s}.batches()
	ws, _ := collect(t, cb, bs)
	it := ofKind(ws, KindItinerary)
	// The first position outside the 50 m corridor: 52 m off, 42 s in.
	if len(it) != 1 || !it[0].T.Equal(eveningFriday.Add(42*time.Second)) || it[0].Limit != 50 || math.Abs(it[0].Value-52) > 1 {
		t.Fatalf("itinerary %+v; want one at 42 s, 52 m from the route (corridor 50)", it)
	}
	if got := Text(Active{Warning: it[0]}); got != "FORA DO ITINERÁRIO — 52 m DA ROTA" {
		t.Errorf("text %q", got)
	}
}

func TestStateTextAndLimiter(t *testing.T) {
	for _, on := range []bool{false, true} {
		cb := signedBundle(t, testBundle(3, configbundle.Warnings{VolumeLimiter: on}))
		// Loud towards the hospital, stopping 180 m from it.
		s := join(steps(118, 25, 80), steps(10, 0, 80))
		bs, _ := stream{start: eveningFriday, steps: s}.batches()
		_, co := collect(t, cb, bs)
		st := co.State()
		if st.ConfigVersion != 3 || len(st.Active) == 0 || st.Limiter != on {
			t.Fatalf("limiter %v: state %+v", on, st)
		}
		a := st.Active[0]
		if a.Kind != KindSiteSound || a.SiteCategory != "hospital" || !strings.HasPrefix(a.Text, "HOSPITAL A 1") ||
			!strings.HasSuffix(a.Text, " m — ABAIXE O SOM") {
			t.Errorf("active %+v", a)
		}
	}
	if got := Text(Active{Warning: Warning{Kind: KindSiteSound, DistanceM: 180}, SiteCategory: "school"}); got != "ESCOLA A 180 m — ABAIXE O SOM" {
		t.Errorf("text %q", got)
	}
}

func TestNoBundleNoWarning(t *testing.T) {
	var n int
	c := New(Options{Vehicle: "PIU-001", Emit: func(Warning) { n++ }})
	bs, _ := stream{start: eveningFriday, steps: steps(30, 50, 90)}.batches()
	for _, b := range bs {
		c.Apply(b)
	}
	if n != 0 || c.State().ConfigVersion != 0 {
		t.Fatalf("%d warnings without a bundle", n)
	}
}

func TestConfigureRefusesBadBundleKeepsOld(t *testing.T) {
	c := New(Options{Vehicle: "PIU-001"})
	if err := c.Configure(signedBundle(t, testBundle(3, configbundle.Warnings{}))); err != nil {
		t.Fatal(err)
	}
	bad := testBundle(4, configbundle.Warnings{})
	bad.Profile.YAML = "id: [broken"
	if err := c.Configure(bad); !errors.Is(err, ErrNoProfile) {
		t.Fatalf("Configure(broken profile) = %v", err)
	}
	if v := c.State().ConfigVersion; v != 3 {
		t.Fatalf("version in force %d after a refused bundle, want 3", v)
	}
}

func TestObserveNeverBlocks(t *testing.T) {
	c := New(Options{Vehicle: "PIU-001", Queue: 4})
	for range 10 {
		c.Observe(&wire.Batch{})
	}
	if d := c.State().Dropped; d != 6 {
		t.Fatalf("dropped %d, want 6", d)
	}
	done := make(chan struct{})
	go func() { c.Run(done) }()
	close(done)
}
