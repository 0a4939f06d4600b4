package judge

import (
	"fmt"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/wire"
)

func TestFleetMetrics(t *testing.T) {
	now := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	spool := int64(42)
	j := &Judge{cfg: Config{Now: func() time.Time { return now }}, fleet: map[string]fleetEntry{
		// Seen 30 s ago, meter missing, 42 batches spooled.
		"PIU-001": {Vehicle: view.Vehicle{ID: "PIU-001", LastSeen: wire.NewTime(now.Add(-30 * time.Second)), SpoolDepth: &spool,
			Devices: map[string]string{"gps": wire.DeviceOK, "slm": wire.DeviceMissing}}},
		// Seen 30 s ago, but its will said offline.
		"PIU-002": {Vehicle: view.Vehicle{ID: "PIU-002", LastSeen: wire.NewTime(now.Add(-30 * time.Second))}, statusOffline: true},
		// Seen 3 minutes ago.
		"PIU-003": {Vehicle: view.Vehicle{ID: "PIU-003", LastSeen: wire.NewTime(now.Add(-3 * time.Minute))}},
		// Never seen (restored without batches).
		"PIU-004": {Vehicle: view.Vehicle{ID: "PIU-004"}},
	}}
	reg := prometheus.NewRegistry()
	reg.MustRegister(fleetCollector{j})
	seen := float64(now.Add(-30 * time.Second).Unix())
	want := map[string]float64{
		`trenzinho_monitor_vehicle_device_ok{device="gps",vehicle="PIU-001"}`:      1,
		`trenzinho_monitor_vehicle_device_ok{device="slm",vehicle="PIU-001"}`:      0,
		`trenzinho_monitor_vehicle_last_seen_timestamp_seconds{vehicle="PIU-001"}`: seen,
		`trenzinho_monitor_vehicle_last_seen_timestamp_seconds{vehicle="PIU-002"}`: seen,
		`trenzinho_monitor_vehicle_last_seen_timestamp_seconds{vehicle="PIU-003"}`: seen - 150,
		`trenzinho_monitor_vehicle_online{vehicle="PIU-001"}`:                      1,
		`trenzinho_monitor_vehicle_online{vehicle="PIU-002"}`:                      0,
		`trenzinho_monitor_vehicle_online{vehicle="PIU-003"}`:                      0,
		`trenzinho_monitor_vehicle_online{vehicle="PIU-004"}`:                      0,
		`trenzinho_monitor_vehicle_spool_depth{vehicle="PIU-001"}`:                 42,
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				labels = append(labels, fmt.Sprintf("%s=%q", l.GetName(), l.GetValue()))
			}
			got[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = m.GetGauge().GetValue()
		}
	}
	if !maps.Equal(got, want) {
		t.Errorf("metrics:\n%v\nwant\n%v", got, want)
	}
}
