package hostile

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// trip returns batches of one reading per second per instrument at kmh[i] from start, five
// seconds per batch, seqs from seq. The service switch is on from the trip's first reading, so
// that service is observed (inferred from movement alone, no auto is grounded).
func trip(vehicle, epoch string, seq int, start time.Time, kmh []float64) [][]byte {
	var out [][]byte
	for i := 0; i < len(kmh); i += 5 {
		var gps, tacho []string
		lon := -40.7292
		for k := i; k < min(i+5, len(kmh)); k++ {
			t := at(start.Add(time.Duration(k) * time.Second))
			lon += kmh[k] / 3.6 / 104040 // metres east at Piúma's latitude, so that the implied speed agrees
			gps = append(gps, fmt.Sprintf(`{"t":%q,"lat":-20.8367,"lon":%.7f,"speed_kmh":%g,"hdop":0.9,"sats":9,"fix":"3d"}`, t, lon, kmh[k]))
			tacho = append(tacho, fmt.Sprintf(`{"t":%q,"speed_kmh":%g}`, t, kmh[k]))
		}
		sent := at(start.Add(time.Duration(min(i+5, len(kmh))) * time.Second))
		service := ""
		if i == 0 {
			service = fmt.Sprintf(`,"service":[{"t":%q,"on":true}]`, at(start))
		}
		out = append(out, fmt.Appendf(nil, `{"v":1,"vehicle":%q,"epoch":%q,"seq":%d,"sent_at":%q,"clock":"gps","gps":[%s],"tacho":[%s]%s}`,
			vehicle, epoch, seq, sent, strings.Join(gps, ","), strings.Join(tacho, ","), service))
		seq++
	}
	return out
}

func repeat(v float64, n int) []float64 { return slices.Repeat([]float64{v}, n) }

// TestFutureDatedBatchThenSpeeding (defect 2): a batch dated 23 h ahead, then one 5 min ahead
// (within max_ahead, beyond the ordering window), then a real speeding trip. Before, the first
// switched the vehicle's rules off for 23 h; now it is refused, the second is not judged, the
// vehicle shows a clock_fault (fleet and metrics), and the speeding is judged and drafted.
func TestFutureDatedBatchThenSpeeding(t *testing.T) {
	bin := testenv.Build(t)
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	mon := startMonitor(t, bin, broker.URL(), "")
	pub := newPublisher(t, broker.URL(), "clock")
	const v = "CLOCK-001"
	now := time.Now().UTC().Truncate(time.Second)

	for _, b := range trip(v, "e1", 1, now.Add(23*time.Hour), repeat(20, 5)) {
		pub.publish(t, wire.TelemetryTopic(v), b)
	}
	for _, b := range trip(v, "e1", 2, now.Add(5*time.Minute), repeat(20, 5)) {
		pub.publish(t, wire.TelemetryTopic(v), b)
	}
	// The trip happened in the last two minutes: 15 s at 20, 30 s at 45, 30 s at 20 km/h.
	start := now.Add(-2 * time.Minute)
	for _, b := range trip(v, "e1", 3, start, slices.Concat(repeat(20, 15), repeat(45, 30), repeat(20, 30))) {
		pub.publish(t, wire.TelemetryTopic(v), b)
	}

	var speed []rules.Episode
	testenv.WaitFor(t, "the speed episode, closed", time.Minute, func() bool {
		var page struct{ Items []rules.Episode }
		mon.get(t, "/api/v1/episodes?vehicle="+v+"&rule=speed", &page)
		speed = page.Items
		return len(speed) == 1 && speed[0].End != nil
	})
	if got, want := speed[0].Start.Time, start.Add(15*time.Second); !got.Equal(want) {
		t.Errorf("speed episode starts at %s, want %s", got, want)
	}
	var faults struct{ Items []rules.Episode }
	mon.get(t, "/api/v1/episodes?vehicle="+v+"&rule=clock_fault", &faults)
	if len(faults.Items) != 1 || faults.Items[0].End != nil || faults.Items[0].Peak < 22*3600 {
		t.Errorf("clock_fault episodes %+v, want one open, peak ≥ 22 h ahead", faults.Items)
	}
	var fleet struct {
		Items []struct {
			ID           string
			OpenEpisodes []string `json:"open_episodes"`
			Telemetry    struct {
				ClockFaults int64  `json:"clock_faults"`
				ClockFault  string `json:"clock_fault"`
				OutOfOrder  int64  `json:"out_of_order"`
			}
		}
	}
	mon.get(t, "/api/v1/vehicles", &fleet)
	if len(fleet.Items) != 1 || fleet.Items[0].Telemetry.ClockFault == "" || fleet.Items[0].Telemetry.ClockFaults != 2 ||
		fleet.Items[0].Telemetry.OutOfOrder != 0 || !slices.Contains(fleet.Items[0].OpenEpisodes, fleet.Items[0].Telemetry.ClockFault) {
		t.Errorf("fleet %+v: want the clock fault shown, two faulty batches, nothing out of order", fleet.Items)
	}
	m := mon.metrics(t)
	if m[`trenzinho_monitor_vehicle_clock_fault{vehicle="CLOCK-001"}`] != 1 || m[`trenzinho_monitor_rejected_total{reason="future_time"}`] != 1 {
		t.Errorf("metrics: clock_fault %v, rejected future_time %v", m[`trenzinho_monitor_vehicle_clock_fault{vehicle="CLOCK-001"}`],
			m[`trenzinho_monitor_rejected_total{reason="future_time"}`])
	}

	var drafts struct {
		Items []struct {
			EpisodeIDs []string `json:"episode_ids"`
			Penalty    string
		}
	}
	testenv.WaitFor(t, "the speeding drafted", time.Minute, func() bool {
		mon.get(t, "/api/v1/drafts?status=draft", &drafts)
		return len(drafts.Items) > 0
	})
	if len(drafts.Items) != 1 || !slices.Equal(drafts.Items[0].EpisodeIDs, []string{speed[0].ID}) {
		t.Errorf("drafts %+v, want one of the speed episode %s only", drafts.Items, speed[0].ID)
	}
}
