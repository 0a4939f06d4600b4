package judge

import (
	"context"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/wire"
)

// The bridges run on the trains, behind mobile networks no Prometheus can scrape; the monitor
// exports what their batches and retained status tell of each vehicle, so that alerts (bridge
// offline, spool growing, device fault) work from the server side.
var (
	vehicleOnlineDesc = prometheus.NewDesc("trenzinho_monitor_vehicle_online",
		"1 when the vehicle sent a batch within the last 2 minutes and its bridge did not announce it went offline.",
		[]string{"vehicle"}, nil)
	vehicleLastSeenDesc = prometheus.NewDesc("trenzinho_monitor_vehicle_last_seen_timestamp_seconds",
		"Device time of the vehicle's newest judged batch, in Unix seconds.",
		[]string{"vehicle"}, nil)
	vehicleSpoolDesc = prometheus.NewDesc("trenzinho_monitor_vehicle_spool_depth",
		"Batches waiting in the vehicle's spool, as its bridge's last status said.",
		[]string{"vehicle"}, nil)
	vehicleDeviceDesc = prometheus.NewDesc("trenzinho_monitor_vehicle_device_ok",
		"1 when the vehicle's bridge reported the device (gps, tacho, slm) ok in its last status, 0 when no_fix or missing.",
		[]string{"vehicle", "device"}, nil)
	vehicleNotJudgedDesc = prometheus.NewDesc("trenzinho_monitor_vehicle_not_judged_total",
		"Readings or batches of the vehicle the monitor did not judge (absent while 0), by kind: out_of_order (older than the newest of their kind), not_evidence, duplicate (batches), clock_ahead (readings or batches timed ahead of the receive clock).",
		[]string{"vehicle", "kind"}, nil)
	vehicleClockFaultDesc = prometheus.NewDesc("trenzinho_monitor_vehicle_clock_fault",
		"1 while the vehicle has an open clock_fault episode (its device clock ran ahead of the receive clock); absent otherwise.",
		[]string{"vehicle"}, nil)
)

// fleetCollector exports the fleet's state at scrape time.
type fleetCollector struct{ j *Judge }

func (c fleetCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- vehicleOnlineDesc
	ch <- vehicleLastSeenDesc
	ch <- vehicleSpoolDesc
	ch <- vehicleDeviceDesc
	ch <- vehicleNotJudgedDesc
	ch <- vehicleClockFaultDesc
}

func (c fleetCollector) Collect(ch chan<- prometheus.Metric) {
	vs, _ := c.j.Vehicles(context.Background()) // never fails
	for _, v := range vs {
		online := 0.0
		if v.Online != nil && *v.Online {
			online = 1
		}
		ch <- prometheus.MustNewConstMetric(vehicleOnlineDesc, prometheus.GaugeValue, online, v.ID)
		if !v.LastSeen.IsZero() {
			ch <- prometheus.MustNewConstMetric(vehicleLastSeenDesc, prometheus.GaugeValue,
				float64(v.LastSeen.UnixMilli())/1000, v.ID)
		}
		if v.SpoolDepth != nil {
			ch <- prometheus.MustNewConstMetric(vehicleSpoolDesc, prometheus.GaugeValue, float64(*v.SpoolDepth), v.ID)
		}
		// Only what is not zero: four series per vehicle for counters that stay 0 on a healthy
		// fleet would double the series count.
		if tm := v.Telemetry; tm != nil {
			for kind, n := range map[string]int64{"out_of_order": tm.OutOfOrder, "not_evidence": tm.NotEvidence,
				"duplicate": tm.Duplicates, "clock_ahead": tm.ClockFaults} {
				if n > 0 {
					ch <- prometheus.MustNewConstMetric(vehicleNotJudgedDesc, prometheus.CounterValue, float64(n), v.ID, kind)
				}
			}
			if tm.ClockFault != "" {
				ch <- prometheus.MustNewConstMetric(vehicleClockFaultDesc, prometheus.GaugeValue, 1, v.ID)
			}
		}
		for dev, state := range v.Devices {
			ok := 0.0
			if state == wire.DeviceOK {
				ok = 1
			}
			ch <- prometheus.MustNewConstMetric(vehicleDeviceDesc, prometheus.GaugeValue, ok, v.ID, dev)
		}
	}
}
