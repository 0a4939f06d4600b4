package e2e

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/rules"
)

// TestSwitchOffSpeedingThroughThePipeline: the simulator sets the service switch in a value
// file as a Pi's GPIO shows it, the real bridge reads it (--service-input) and sends it with the
// readings, and the monitor judges speed only in service (Art. 23, "quando em serviço"). A
// vehicle at 45 km/h for 30 s with the switch off, away from any itinerary (not in the registry:
// no itinerary of its own, no suspicion), opens no speed episode but the operational alert
// speed_out_of_service, which grounds no auto; the same trip with the switch on is speeding,
// and its draft states that the switch was on. The same trip on a bridge wired to no switch and
// no door input is a speed episode too, but "em serviço" was only inferred from its movement (it
// could be driving empty to a workshop): it grounds no auto and is not drafted.
func TestSwitchOffSpeedingThroughThePipeline(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	mon := startMonitor(t, bin, broker.URL())

	start := "2026-11-27T15:00:00Z" // Friday noon in Piúma, within the service hours
	off := startSimulation(t, bin, "--vehicles=1", "--prefix=OFF", "--scenario=20:15:65:off,45:30:65:off,20:30:65:off",
		"--duration=75s", "--speed-up=3", "--start="+start)
	on := startSimulation(t, bin, "--vehicles=1", "--prefix=ON", "--scenario=20:15,45:30,20:30",
		"--duration=75s", "--speed-up=3", "--start="+start)
	none := startSimulation(t, bin, "--vehicles=1", "--prefix=NONE", "--scenario=20:15,45:30,20:30",
		"--duration=75s", "--speed-up=3", "--start="+start)
	startBridge(t, bin, broker.URL(), "NONE-001", none.devices["NONE-001"]) // no --service-input, no --door-input
	for id, s := range map[string]*simulation{"OFF-001": off, "ON-001": on} {
		d := s.devices[id]
		if d["service"] == "" || d["door"] == "" {
			t.Fatalf("simulate printed no input files for %s: %v", id, d)
		}
		startBridge(t, bin, broker.URL(), id, d, "--service-input", d["service"], "--door-input", d["door"])
	}

	closed := func(vehicle, rule string) []rules.Episode {
		var got []rules.Episode
		testenv.WaitFor(t, vehicle+" "+rule+" episode closed", 3*time.Minute, func() bool {
			got = mon.episodes(t, "vehicle="+vehicle+"&rule="+rule)
			return len(got) == 1 && got[0].End != nil
		})
		return got
	}
	alert := closed("OFF-001", rules.RuleSpeedOutOfService)[0]
	if alert.GroundsAuto || alert.Peak != 45 || alert.Source != "tacho" || alert.GroundsNote == "" {
		t.Errorf("alert %+v", alert)
	}
	if sp := closed("ON-001", rules.RuleSpeed)[0]; !sp.GroundsAuto || sp.Peak != 45 {
		t.Errorf("speeding in service %+v", sp)
	}
	inferred := closed("NONE-001", rules.RuleSpeed)[0]
	if inferred.GroundsAuto || inferred.Peak != 45 || !strings.Contains(inferred.GroundsNote, "em serviço inferido apenas pelo movimento") ||
		inferred.Service == nil || inferred.Service.How != rules.ServiceMovement {
		t.Errorf("speeding with service inferred from movement: %+v", inferred)
	}
	// The trips are over (their episodes closed): nothing else will come.
	if eps := mon.episodes(t, "vehicle=OFF-001&rule=speed"); len(eps) != 0 {
		t.Errorf("switch off: %d speed episodes: %+v", len(eps), eps)
	}
	if eps := mon.episodes(t, "vehicle=ON-001&rule="+rules.RuleSpeedOutOfService); len(eps) != 0 {
		t.Errorf("switch on: %d speed_out_of_service episodes", len(eps))
	}
	// The alert is never drafted: only the speeding in service is.
	var drafts struct {
		Items []struct {
			ID         string
			Vehicle    string
			EpisodeIDs []string `json:"episode_ids"`
		}
	}
	testenv.WaitFor(t, "the speeding's draft", time.Minute, func() bool {
		mon.get(t, "/api/v1/drafts", &drafts)
		return len(drafts.Items) > 0
	})
	for _, d := range drafts.Items {
		for _, id := range d.EpisodeIDs {
			if id == alert.ID || id == inferred.ID {
				t.Errorf("an episode that grounds no auto was drafted (%s): %+v", id, d)
			}
		}
		if d.Vehicle == "ON-001" {
			if raw := string(mon.raw(t, "/api/v1/drafts/"+d.ID)); !strings.Contains(raw, "chave de serviço ligada desde") {
				t.Errorf("the draft does not state how service was established: %s", raw)
			}
		}
	}
}
