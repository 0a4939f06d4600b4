package demo

import (
	"log/slog"
	"os"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/firmware-bridge/coach"
	"github.com/trenzinho/trenzinho/firmware-bridge/sim"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// demoLicensees are the licensees of the scripted trains in the demonstration registry.
var demoLicensees = map[string]string{"PIU-001": "L1", "PIU-002": "L1", "PIU-003": "L2"}

// TestDemoWarningsHeededAndIgnored plays the scripted demonstration day, second by second, through
// the driver's coach — with the bundle the monitor issues from the demonstration settings: their
// profile, their geofences for the train's licensee — and through the monitor's rules with the
// same settings. Each of sim.DemoWarnings is warned in its marked leg, of its site, from outside
// the site's protected radius; the heeded one is followed by no episode of its rule, the ignored
// one by that episode, of that site, after the warning.
func TestDemoWarningsHeededAndIgnored(t *testing.T) {
	start := time.Date(2026, 11, 26, 3, 30, 0, 0, time.UTC) // 00:30 in Piúma, as TestDemoDay plays it
	files, err := Write(t.TempDir(), start)
	if err != nil {
		t.Fatal(err)
	}
	yaml, err := os.ReadFile(files.Profile)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profile.Parse(yaml, files.Profile)
	if err != nil {
		t.Fatal(err)
	}
	set, err := geofences.Load(files.Geofences)
	if err != nil {
		t.Fatal(err)
	}
	scripts := map[string]*sim.Script{}
	for _, v := range sim.Demo() {
		scripts[v.ID] = v.Script
	}
	var heeded, ignored int
	for _, dw := range sim.DemoWarnings {
		if dw.Heeded {
			heeded++
		} else {
			ignored++
		}
		script := scripts[dw.Vehicle]
		mark, ok := script.MarkAt(dw.Mark)
		if !ok {
			t.Fatalf("warning %q of %s: no marked leg", dw.Mark, dw.Vehicle)
		}
		licensee := demoLicensees[dw.Vehicle]
		gf, err := configbundle.Geofences(set, licensee)
		if err != nil {
			t.Fatal(err)
		}
		var ws []coach.Warning
		co := coach.New(coach.Options{Vehicle: dw.Vehicle, Logger: slog.New(slog.DiscardHandler),
			Emit: func(w coach.Warning) { ws = append(ws, w) }})
		if err := co.Configure(&configbundle.Bundle{Format: configbundle.Format, Vehicle: dw.Vehicle, Licensee: licensee,
			Version: 1, IssuedAt: start, ValidUntil: start.Add(48 * time.Hour),
			Profile: configbundle.Profile{ID: prof.ID, YAML: string(yaml)}, Geofences: gf}); err != nil {
			t.Fatal(err)
		}
		e := rules.New(prof, set)
		e.SetRegistry(func(string) (rules.Registration, bool) { return rules.Registration{Licensee: licensee}, true })

		// From the start of the day to 5 minutes after the mark.
		v := &sim.Vehicle{ID: dw.Vehicle, Script: script}
		seen := map[string]bool{}
		var episodes []opened
		var last *sim.State
		for i := 0; time.Duration(i)*time.Second <= mark+5*time.Minute; i++ {
			at := start.Add(time.Duration(i) * time.Second)
			st := v.Step(at, time.Second)
			b := reading(dw.Vehicle, uint64(i+1), at, st, last)
			last = &st
			co.Apply(b)
			recv := at.Add(time.Second)
			e.Tick(recv)
			e.Apply(b, recv)
			c, err := e.Drain()
			if err != nil {
				t.Fatal(err)
			}
			for _, ep := range c.Episodes {
				if seen[ep.ID] || ep.Rule != dw.Rule {
					continue
				}
				seen[ep.ID] = true
				o := opened{at: at}
				if ep.Site != nil {
					o.site = ep.Site.ID
				}
				episodes = append(episodes, o)
			}
		}

		var first *coach.Warning
		for i := range ws {
			if string(ws[i].Kind) == dw.Kind && ws[i].Site == dw.Site {
				first = &ws[i]
				break
			}
		}
		from, to := start.Add(mark), start.Add(mark+time.Minute)
		if first == nil {
			t.Fatalf("%s (%s): never warned of %s", dw.Vehicle, dw.Mark, dw.Site)
		}
		if first.T.Before(from) || first.T.After(to) || first.DistanceM <= prof.Sensitive.RadiusM {
			t.Errorf("%s (%s): first warning %+v, want within a minute of %s and outside the %.0f m radius", dw.Vehicle, dw.Mark, *first, from, prof.Sensitive.RadiusM)
		}
		t.Logf("%s (%s): warned at +%s, %.0f m from %s", dw.Vehicle, dw.Mark, first.T.Sub(start), first.DistanceM, dw.Site)
		if dw.Heeded {
			if len(episodes) != 0 {
				t.Errorf("%s heeded its warning, yet %s opened: %+v", dw.Vehicle, dw.Rule, episodes)
			}
			continue
		}
		if len(episodes) == 0 || episodes[0].site != dw.Site || !episodes[0].at.After(first.T) {
			t.Errorf("%s ignored its warning at %s: episodes of %s %+v, want one of %s after it", dw.Vehicle, first.T, dw.Rule, episodes, dw.Site)
		} else {
			t.Logf("%s: %s opened %s after the warning", dw.Vehicle, dw.Rule, episodes[0].at.Sub(first.T))
		}
	}
	if heeded != 1 || ignored != 1 {
		t.Errorf("the script has %d heeded and %d ignored warnings, want one of each", heeded, ignored)
	}
}

// opened is an episode as the rules opened it: the device time of the reading that opened it.
type opened struct {
	site string
	at   time.Time
}

// reading is one second of a simulated train as its bridge batches it: a GPS fix, the
// tachograph's speed (unless it is silent), the meter's level, and the service switch and
// passenger door when they change.
func reading(vehicle string, seq uint64, at time.Time, st sim.State, prev *sim.State) *wire.Batch {
	t := wire.NewTime(at)
	kmh, hdop, db := st.SpeedKmh, 0.8, st.LAeqDB
	b := &wire.Batch{V: wire.Version, Vehicle: vehicle, Epoch: "demo", Seq: seq, Clock: wire.ClockGPS, SentAt: t,
		GPS:   []wire.GPS{{T: t, Lat: st.Lat, Lon: st.Lon, SpeedKmh: &kmh, HDOP: &hdop, Fix: wire.Fix3D}},
		Sound: []wire.Sound{{T: t, LAeqDB: &db}}}
	if !st.TachoSilent {
		b.Tacho = []wire.Tacho{{T: t, SpeedKmh: &kmh}}
	}
	if prev == nil || prev.ServiceOn != st.ServiceOn {
		b.Service = []wire.Service{{T: t, On: st.ServiceOn}}
	}
	if prev == nil || prev.DoorOpen != st.DoorOpen {
		b.Door = []wire.Door{{T: t, Open: st.DoorOpen}}
	}
	return b
}

// TestDemoGarageExitsAreNotDeviations plays each scripted train's whole day through the coach,
// with the bundle the monitor issues it: leaving its garage for its itinerary and returning to it
// at the end are no itinerary warnings (the coach once warned "saída do itinerário 433 / 50" a
// minute into the day), while PIU-002's detour off its loop still is.
func TestDemoGarageExitsAreNotDeviations(t *testing.T) {
	start := time.Date(2026, 11, 26, 3, 30, 0, 0, time.UTC)
	files, err := Write(t.TempDir(), start)
	if err != nil {
		t.Fatal(err)
	}
	yaml, err := os.ReadFile(files.Profile)
	if err != nil {
		t.Fatal(err)
	}
	prof, err := profile.Parse(yaml, files.Profile)
	if err != nil {
		t.Fatal(err)
	}
	set, err := geofences.Load(files.Geofences)
	if err != nil {
		t.Fatal(err)
	}
	for _, dv := range sim.Demo() {
		licensee := demoLicensees[dv.ID]
		gf, err := configbundle.Geofences(set, licensee)
		if err != nil {
			t.Fatal(err)
		}
		var ws []coach.Warning
		co := coach.New(coach.Options{Vehicle: dv.ID, Logger: slog.New(slog.DiscardHandler),
			Emit: func(w coach.Warning) { ws = append(ws, w) }})
		if err := co.Configure(&configbundle.Bundle{Format: configbundle.Format, Vehicle: dv.ID, Licensee: licensee,
			Version: 1, IssuedAt: start, ValidUntil: start.Add(48 * time.Hour),
			Profile: configbundle.Profile{ID: prof.ID, YAML: string(yaml)}, Geofences: gf}); err != nil {
			t.Fatal(err)
		}
		v := &sim.Vehicle{ID: dv.ID, Script: dv.Script}
		var last *sim.State
		for i := 0; time.Duration(i)*time.Second <= dv.Script.Duration()+time.Minute; i++ {
			at := start.Add(time.Duration(i) * time.Second)
			st := v.Step(at, time.Second)
			co.Apply(reading(dv.ID, uint64(i+1), at, st, last))
			last = &st
		}
		var detour []coach.Warning
		for _, w := range ws {
			if w.Kind != coach.KindItinerary {
				continue
			}
			if dv.ID == "PIU-002" {
				detour = append(detour, w)
				continue
			}
			t.Errorf("%s: itinerary warning at +%s, %v m from its routes: it drives only between its garage and its itinerary",
				dv.ID, w.T.Sub(start), w.Value)
		}
		if dv.ID != "PIU-002" {
			continue
		}
		mark, ok := dv.Script.MarkAt("detour")
		if !ok {
			t.Fatal("PIU-002: no detour")
		}
		if len(detour) == 0 {
			t.Error("PIU-002's detour off its loop was not warned")
		}
		for _, w := range detour {
			if d := w.T.Sub(start); d < mark || d > mark+3*time.Minute {
				t.Errorf("PIU-002: itinerary warning at +%s, outside its detour (from +%s)", d, mark)
			}
		}
	}
}
