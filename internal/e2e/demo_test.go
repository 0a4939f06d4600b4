package e2e

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/firmware-bridge/sim"
	"github.com/trenzinho/trenzinho/internal/testkit/demo"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/rules"
)

// demoSpeedUp plays the 30 minutes of the demonstration day in three.
const demoSpeedUp = 10

// TestDemoDayOpensExactlyTheScriptedEpisodes plays the scripted demonstration day of `make run`
// through the real pipeline — `firmware-bridge simulate --scenario demo` writing into
// pseudo-terminals, one real bridge per train, a real Mosquitto, the monitor with the
// demonstration profile, geofences and registry of internal/testkit/demo — ten times faster than real
// time and dated in the past (a receiver refuses readings from the future), at night, and checks that the episodes the monitor opens are
// exactly the scripted ones (sim.DemoEvents): the same vehicles and rules, event after event in
// the script's order, each closed once the day is over, and nothing else — no route deviation
// but the scripted detour.
func TestDemoDayOpensExactlyTheScriptedEpisodes(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})

	// The day starts at 00:30 in Piúma, yesterday or today (at least an hour ago): at night the
	// NBR limits are the strictest (the scripted loud boarding must stay under them for want of
	// time) and the demonstration's service hours run past midnight.
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().In(loc)
	start := time.Date(now.Year(), now.Month(), now.Day(), 0, 30, 0, 0, loc)
	if start.After(now.Add(-time.Hour)) {
		start = start.AddDate(0, 0, -1)
	}
	start = start.UTC()
	files, err := demo.Write(t.TempDir(), start)
	if err != nil {
		t.Fatal(err)
	}
	mon := startMonitorWithEnv(t, bin, broker.URL(),
		"TRENZINHO_PROFILE="+files.Profile, "TRENZINHO_GEOFENCES="+files.Geofences, "TRENZINHO_REGISTRY="+files.Registry)

	// The day lasts 24 min; 30 min lets the last episodes (hours, document_expired) clear.
	day := 30 * time.Minute
	s := startSimulation(t, bin, "--scenario=demo", "--vehicles=3", fmt.Sprintf("--speed-up=%d", demoSpeedUp),
		"--start="+start.Format(time.RFC3339), "--duration="+day.String())
	for _, v := range sim.Demo() {
		d := s.devices[v.ID]
		// The demonstration drives the service switch and the passenger door, as make run does.
		startBridge(t, bin, broker.URL(), v.ID, d, "--service-input", d["service"], "--door-input", d["door"])
	}
	stats := s.wait(t, day/demoSpeedUp+3*time.Minute)
	for id, st := range stats {
		if st.Dropped > 0 {
			t.Logf("%s: %d writes dropped by the simulator", id, st.Dropped)
		}
	}

	// Wait for the judge to have judged the end of the day: every episode closed (the hours and
	// document episodes close only on the day's last readings) and nothing new for 10 s.
	var got []rules.Episode
	var stableSince time.Time
	lastCount := -1
	testenv.WaitFor(t, "the demonstration's episodes to close", 3*time.Minute, func() bool {
		got = mon.episodes(t, "limit=1000")
		open := 0
		for _, e := range got {
			if e.End == nil {
				open++
			}
		}
		if len(got) != lastCount || open > 0 || len(got) == 0 {
			lastCount, stableSince = len(got), time.Now()
			return false
		}
		return time.Since(stableSince) > 10*time.Second
	})
	slices.SortFunc(got, func(a, b rules.Episode) int { return a.Start.Compare(b.Start.Time) })
	var lines []string
	for _, e := range got {
		lines = append(lines, fmt.Sprintf("%s %s %s from +%v to +%v peak %v %s", e.Vehicle, e.Rule, e.ID,
			e.Start.Sub(start).Round(time.Second), e.End.Sub(start).Round(time.Second), e.Peak, e.Unit))
	}
	t.Logf("episodes of the demonstration day:\n  %s", strings.Join(lines, "\n  "))

	// Each scripted event's episodes, and its events after the one before.
	i := 0
	for _, ev := range sim.DemoEvents {
		var gotRules []string
		first := i
		for i < len(got) && len(gotRules) < len(ev.Rules) && got[i].Vehicle == ev.Vehicle {
			gotRules = append(gotRules, got[i].Rule)
			i++
		}
		want := slices.Clone(ev.Rules)
		slices.Sort(want)
		slices.Sort(gotRules)
		if !slices.Equal(gotRules, want) {
			t.Fatalf("event %q (%s): episodes %v from #%d, want %v", ev.Mark, ev.Vehicle, gotRules, first, ev.Rules)
		}
	}
	if i != len(got) {
		t.Fatalf("%d episodes the script does not put: %v", len(got)-i, lines[i:])
	}

	// The first event is the speeding, within three minutes of the start, measured by the
	// tachograph.
	if sp := got[0]; sp.Rule != "speed" || sp.Source != "tacho" || sp.Peak != 45 ||
		sp.Start.Sub(start) > 3*time.Minute {
		t.Errorf("first episode %+v, want the tachograph's speeding within 3 minutes", sp)
	}
	if late := got[len(got)-1]; late.Rule != "hours" || late.Start.Sub(start) < sim.DemoServiceEnd+sim.DemoGrace {
		t.Errorf("last episode %+v, want the late return after %v", late, sim.DemoServiceEnd+sim.DemoGrace)
	}
}
