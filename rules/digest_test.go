package rules

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"hash"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

// The engine's output for the benchmark fleet (400 rounds of 50 vehicles, 300,000 readings, in
// the benchmark town with 10,000 sensitive sites), as SHA-256 digests of the JSON of every Apply
// result and, every 10 rounds, of the drained episodes (sorted by id), evidence, events and
// snapshots. Recorded at e15e36f, before the engine's later optimisations, whose every change left
// the same digests (docs/benchmarks.md, "Rule evaluation").
//
// An optimisation must leave every digest unchanged: judgements, values and evidence alike, to
// the last bit. A change of a rule that alters the output on purpose re-records them (run the
// test, take the digests it prints) and says why in its commit. Re-recorded when the rules that
// bind the vehicle in service began to state how its service was established (Episode.Service)
// and to ground no auto on service inferred from movement: the same episodes, judgements and
// evidence; their JSON, the events and the snapshots (Vehicle.ServiceSince, BoardedAt) differ.
// Re-recorded again when sensitive_zone_sound began to ground no auto on a calendar the profile
// ships empty (calendar_unconfirmed: the school recess, the municipal holidays), and when
// boarding_sound began to take a stop at a point for boarding only after boarding.dwell_s or with
// the door open (the registered stream's boarding episodes), and when the snapshots began to
// keep the run of readings of a stopped vehicle (Vehicle.ParkedReadFrom, ParkedReadT).
var engineDigests = map[string]string{
	"results":   "0851d155c3eee808b04af3c00ef28da8ecb115487493c996dc263f8c97d4377f",
	"episodes":  "216241443152b1494db62ac41b93feb7acafb5da0490ad3ce22fa51091b314c7",
	"evidence":  "0ebc6ee630ee7e593b1eec62032c9d29933f8ea027554f32c9695e0048335940",
	"events":    "b792230802ac86189383915c2dc8bd36972802510528b74b8baa6d0e75b95d95",
	"snapshots": "fb6b8ea1afd837955c475d7a394fc2b6f1e4828cb70b3a8cab61ef056a23bb07",
}

// engineDigestEvents is how many events the stream drains.
const engineDigestEvents = 640

// The digests of the registered stream (TestEngineDigestRegistered), recorded at e15e36f too.
var registeredDigests = map[string]string{
	"results":   "5ac7eebb0d9dd9e5a5299176528a3c97ab23145593dd1de75d09a71cd1249545",
	"episodes":  "d0593dceafc642064303f37ba064a9e1b692a08a6bd5b1cd25d13212284ebb61",
	"evidence":  "8feb459e6317e7d2f66d63541b95e8c8acd2ea48844789d819e5a9686b49ccd0",
	"events":    "509aa6f77d7119220b15b7087f605e57080723402fd3b9c8deca5a58d83bd356",
	"snapshots": "60c2707aa5ba990eb3d42219e1f6c604ac09cb9990fac040d88d2b0b293a95ef",
}

const registeredDigestEvents = 710

// TestEngineDigest compares the engine's output for the benchmark fleet with the recorded
// digests. The digests are of amd64's floating-point results (the math package's assembly and
// the compiler's fused multiply-adds differ elsewhere, in the last bits of the sound levels):
// on another architecture the test runs but only logs them.
func TestEngineDigest(t *testing.T) {
	if testing.Short() {
		t.Skip("300,000 readings at 10,000 sites")
	}
	set, loops := benchTown(t, 10000)
	fleet := newBenchFleet(loops)
	e := newBenchEngine(set, fleet)
	checkDigests(t, e, 400, func() []*wire.Batch { return fleet.round() }, engineDigests, engineDigestEvents)
}

// TestEngineDigestRegistered is TestEngineDigest for what the benchmark fleet leaves out: a
// registry (licensees from it, one vehicle in five with its inspection expired), a service
// switch on one vehicle in three (off for 160 s of each cycle, on its route, music on:
// service_switch_suspect and speed_out_of_service), a switch always on and a door input on
// another one in three (open during the stops, which are seldom at a boarding point:
// boarding_outside_points);
// 240 rounds (20 minutes) in the town with 1,000 sites.
func TestEngineDigestRegistered(t *testing.T) {
	if testing.Short() {
		t.Skip("144,000 readings")
	}
	set, loops := benchTown(t, 1000)
	fleet := newBenchFleet(loops)
	e := New(profile.Piuma(), set)
	index := map[string]int{}
	for i, v := range fleet.vs {
		index[v.id] = i
	}
	inspection := []registry.Expiry{{Subject: registry.Subject{Kind: registry.SubjectVehicle}, Document: registry.DocInspecao,
		Number: "INSP-1", ValidUntil: registry.MustDate("2026-11-17"), Expired: true, DaysLeft: -10, Problem: registry.ProblemExpired}}
	e.SetRegistry(func(id string) (Registration, bool) {
		i, ok := index[id]
		if !ok {
			return Registration{}, false
		}
		reg := Registration{Licensee: fmt.Sprintf("L%d", i%benchLicensees), MeterDistanceM: 1.5 + float64(i%3)/2}
		// The inspection the organ set for 2026-11-10 was not made (Art. 45, IV).
		reg.InspectionOverdue = func(registry.Date) (registry.InspectionRequest, bool) {
			return registry.InspectionRequest{RequestedOn: registry.MustDate("2026-10-20"), ScheduledFor: registry.MustDate("2026-11-10")}, i%5 == 1
		}
		reg.Expired = func(card string, at time.Time) []registry.Expiry {
			if i%5 == 1 {
				return inspection
			}
			return nil
		}
		return reg, true
	})
	round := func() []*wire.Batch {
		bs := fleet.round()
		for i, b := range bs {
			v := &fleet.vs[i]
			for _, g := range b.GPS {
				sec := int(g.T.Sub(benchStart) / time.Second)
				u := (sec + v.phase) % 480
				switch i % 3 {
				case 1:
					b.Service = append(b.Service, wire.Service{T: g.T, On: u < 200 || u >= 360})
				case 2:
					b.Service = append(b.Service, wire.Service{T: g.T, On: true})
					b.Door = append(b.Door, wire.Door{T: g.T, Open: u >= 10 && u < 80})
				}
			}
		}
		return bs
	}
	checkDigests(t, e, 240, round, registeredDigests, registeredDigestEvents)
}

// checkDigests applies rounds of batches to the engine as the judge does (Tick, Apply, a
// Drain every 10 rounds) and compares the digests of its output with the recorded ones.
// The digests are of amd64's floating-point results (the math package's assembly and the
// compiler's fused multiply-adds differ elsewhere, in the last bits of the sound levels): on
// another architecture the test only logs them.
func checkDigests(t *testing.T, e *Engine, rounds int, next func() []*wire.Batch, want map[string]string, wantEvents int) {
	t.Helper()
	results := sha256.New()
	names := []string{"episodes", "evidence", "events", "snapshots"}
	parts := []hash.Hash{sha256.New(), sha256.New(), sha256.New(), sha256.New()}
	write := func(h hash.Hash, x any) {
		b, err := json.Marshal(x)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(b)
	}
	events := 0
	opened := map[string]int{}
	for i := range rounds {
		round := next()
		recv := round[0].SentAt.Add(300 * time.Millisecond)
		e.Tick(recv)
		for _, bt := range round {
			write(results, e.Apply(bt, recv))
		}
		if i%10 == 9 {
			c, err := e.Drain()
			if err != nil {
				t.Fatal(err)
			}
			events += len(c.Events)
			for _, ev := range c.Events {
				if ev.Kind == EventOpen {
					opened[ev.Episode.Rule]++
				}
			}
			slices.SortFunc(c.Episodes, func(a, b Episode) int { return strings.Compare(a.ID, b.ID) })
			for k, x := range []any{c.Episodes, c.Evidence, c.Events, c.Snapshots} {
				write(parts[k], x)
			}
		}
	}
	got := map[string]string{"results": hex.EncodeToString(results.Sum(nil))}
	for k, h := range parts {
		got[names[k]] = hex.EncodeToString(h.Sum(nil))
	}
	t.Logf("%d events, episodes opened %v; noise_limit levels %d judged from bounds, %d computed", events, opened, e.leqBounded, e.leqComputed)
	for _, name := range append([]string{"results"}, names...) {
		t.Logf("%s %s", name, got[name])
	}
	if runtime.GOARCH != "amd64" {
		t.Skipf("digests recorded on amd64; %s's floating point may differ in the last bits", runtime.GOARCH)
	}
	if events != wantEvents {
		t.Errorf("%d events drained, recorded %d", events, wantEvents)
	}
	for _, name := range append([]string{"results"}, names...) {
		if got[name] != want[name] {
			t.Errorf("%s digest %s, recorded %s: the engine's output changed", name, got[name], want[name])
		}
	}
}
