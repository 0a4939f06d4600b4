package coach

import (
	"bytes"
	"math"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// coached maps the rules the coach anticipates to the kind of warning that must precede their
// episodes.
var coached = map[string]Kind{
	rules.RuleSpeed:              KindSpeedOver,
	rules.RuleSensitiveZoneSound: KindSiteSound,
	rules.RuleRouteDeviation:     KindItinerary,
	rules.RuleHours:              KindHoursEnd,
}

// opened is an episode as the monitor opened it: the device time of the reading that opened it.
type opened struct {
	rule, site string
	at         time.Time
}

// monitorRun judges a stream as the monitor does: its own engine (the profile it loaded, every
// geofence, the registry's licensee), each batch received a second after it was sent. It
// returns the episodes in the order they opened.
func monitorRun(t *testing.T, bs []*wire.Batch) []opened {
	t.Helper()
	places, err := geofences.Read(bytes.NewReader(testGeofences()), "monitor.geojson")
	if err != nil {
		t.Fatal(err)
	}
	e := rules.New(profile.Piuma(), places)
	e.SetRegistry(func(string) (rules.Registration, bool) { return rules.Registration{Licensee: "L1"}, true })
	seen := map[string]bool{}
	var out []opened
	for _, b := range bs {
		recv := b.SentAt.Add(time.Second)
		e.Tick(recv)
		e.Apply(b, recv)
		c, err := e.Drain()
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range c.Episodes {
			if seen[ep.ID] {
				continue
			}
			seen[ep.ID] = true
			o := opened{rule: ep.Rule, at: latest(b)}
			if ep.Site != nil {
				o.site = ep.Site.ID
			}
			out = append(out, o)
		}
	}
	return out
}

// heeded plays a stream through the coach as a driver who obeys: from reactS seconds after a
// site_sound warning on, the sound is lowered to quietDB. It returns the stream as played.
func heeded(t *testing.T, cb *configbundle.Bundle, s stream, reactS int, quietDB float64) ([]*wire.Batch, []Warning) {
	t.Helper()
	var ws []Warning
	c := New(Options{Vehicle: "PIU-001", Emit: func(w Warning) { ws = append(ws, w) }, Logger: quiet})
	if err := c.Configure(cb); err != nil {
		t.Fatal(err)
	}
	lowerFrom := -1
	var played []*wire.Batch
	for i := range s.steps {
		if lowerFrom >= 0 && i >= lowerFrom {
			s.steps[i].db = quietDB
		}
		bs, _ := s.batches()
		b := bs[i]
		played = append(played, b)
		c.Apply(b)
		if lowerFrom < 0 && len(ofKind(ws, KindSiteSound)) > 0 {
			lowerFrom = i + reactS
		}
	}
	return played, ws
}

// TestCoachAndMonitorSameVerdict runs the coach (on the bridge's per-reading feed) and the
// monitor's rules (on the batches) over the same recorded drives: whenever the monitor opens an
// episode of a rule the coach anticipates, the coach warned of it at or before the reading that
// opened it; and a drive where the warning is heeded opens none.
func TestCoachAndMonitorSameVerdict(t *testing.T) {
	cb := signedBundle(t, testBundle(3, configbundle.Warnings{}))
	offRoute := steps(200, 20, 60)
	for i := 60; i < 200; i++ {
		offRoute[i].offM = math.Min(4*float64(i-59), 150) // veers off the itinerary
	}
	lateNight := time.Date(2026, 11, 28, 1, 50, 0, 0, time.UTC) // 22:50 in Piúma
	drives := []struct {
		name  string
		s     stream
		rules []string // the rules whose episodes the drive must open
	}{
		{"loud past the hospital at 25 km/h", stream{start: eveningFriday, steps: steps(240, 25, 80)},
			[]string{rules.RuleSensitiveZoneSound}},
		{"loud past the hospital at 45 km/h", stream{start: eveningFriday, steps: steps(150, 45, 82)},
			[]string{rules.RuleSensitiveZoneSound, rules.RuleSpeed}},
		{"creeping over the limit", stream{start: eveningFriday, steps: join(steps(30, 25, 60), steps(20, 33, 60),
			steps(60, 40, 60), steps(20, 25, 60))}, []string{rules.RuleSpeed}},
		{"leaving the itinerary", stream{start: eveningFriday, steps: offRoute}, []string{rules.RuleRouteDeviation}},
		{"past the end of service hours", stream{start: lateNight, steps: steps(45*60, 10, math.NaN())},
			[]string{rules.RuleHours}},
		{"quiet and slow", stream{start: eveningFriday, steps: steps(240, 25, 60)}, nil},
	}
	for _, d := range drives {
		t.Run(d.name, func(t *testing.T) {
			bs, _ := d.s.batches()
			ws, _ := collect(t, cb, bs)
			eps := monitorRun(t, bs)
			got := map[string]bool{}
			for _, ep := range eps {
				got[ep.rule] = true
				kind, ok := coached[ep.rule]
				if !ok {
					continue
				}
				warned := false
				for _, w := range ws {
					if w.Kind == kind && w.Rule == ep.rule && (ep.site == "" || w.Site == ep.site) && !w.T.After(ep.at) {
						warned = true
						break
					}
				}
				if !warned {
					t.Errorf("the monitor opened %s (site %q) at %s; the coach had not warned of it (warnings %+v)",
						ep.rule, ep.site, ep.at.Format(time.TimeOnly), ws)
				} else {
					first := ofKind(ws, kind)[0]
					t.Logf("%s opened at %s; first %s warning at %s (%.0f s before)", ep.rule, ep.at.Format(time.TimeOnly),
						kind, first.T.Format(time.TimeOnly), ep.at.Sub(first.T).Seconds())
				}
			}
			for _, r := range d.rules {
				if !got[r] {
					t.Errorf("the drive opened no %s episode: it proves nothing (episodes %+v)", r, eps)
				}
			}
			if d.rules == nil {
				for _, ep := range eps {
					if _, ok := coached[ep.rule]; ok {
						t.Errorf("a quiet, slow drive opened %+v", ep)
					}
				}
			}
		})
	}
}

// TestHeededWarningOpensNoEpisode: the same loud drive past the hospital, with a driver who
// lowers the sound 5 s after the coach's warning, opens no sensitive-zone episode — and
// without the coach it does.
func TestHeededWarningOpensNoEpisode(t *testing.T) {
	cb := signedBundle(t, testBundle(3, configbundle.Warnings{}))
	for _, kmh := range []float64{25, 45} {
		loud := stream{start: eveningFriday, steps: steps(int(1600/(kmh/3.6)), kmh, 80)}
		ignored, _ := loud.batches()
		if !hasRule(monitorRun(t, ignored), rules.RuleSensitiveZoneSound) {
			t.Fatalf("%v km/h: the loud drive opens no episode: the test proves nothing", kmh)
		}
		played, ws := heeded(t, cb, loud, 5, 60)
		if len(ofKind(ws, KindSiteSound)) == 0 {
			t.Fatalf("%v km/h: no warning", kmh)
		}
		if eps := monitorRun(t, played); hasRule(eps, rules.RuleSensitiveZoneSound) {
			t.Errorf("%v km/h: the driver lowered the sound 5 s after the warning at %.0f m, and the monitor still opened %+v",
				kmh, ofKind(ws, KindSiteSound)[0].DistanceM, eps)
		}
	}
}

func hasRule(eps []opened, rule string) bool {
	for _, ep := range eps {
		if ep.rule == rule {
			return true
		}
	}
	return false
}
