package bridge

import (
	"github.com/prometheus/client_golang/prometheus"
)

// Register exposes the bridge's metrics: batches published and acknowledged, the spool, and
// which devices are missing.
func (b *Bridge) Register(reg prometheus.Registerer) {
	reg.MustRegister(
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "trenzinho", Subsystem: "bridge", Name: "batches_published_total",
			Help: "Batches handed to the MQTT client (replays included)."}, func() float64 { return float64(b.published.Load()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "trenzinho", Subsystem: "bridge", Name: "batches_acked_total",
			Help: "Batches the broker acknowledged and the spool released."}, func() float64 { return float64(b.acked.Load()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "trenzinho", Subsystem: "bridge", Name: "spool_depth",
			Help: "Batches in the spool not yet acknowledged."}, func() float64 { return float64(b.spool.Depth()) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "trenzinho", Subsystem: "bridge", Name: "spool_bytes",
			Help: "Size of the spool files."}, func() float64 { return float64(b.spool.Bytes()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "trenzinho", Subsystem: "bridge", Name: "spool_evicted_total",
			Help: "Batches evicted from a full spool before they were acknowledged."}, func() float64 { return float64(b.spool.Evicted()) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Namespace: "trenzinho", Subsystem: "bridge", Name: "warnings_total",
			Help: "Warnings of the driver's coach queued for the telemetry (Warn)."}, func() float64 { return float64(b.warned.Load()) }),
		deviceCollector{b},
	)
}

var deviceDesc = prometheus.NewDesc("trenzinho_bridge_device_up", "1 when the device sends valid data, 0 when it is missing or has no fix.", []string{"device", "state"}, nil)

type deviceCollector struct{ b *Bridge }

func (c deviceCollector) Describe(ch chan<- *prometheus.Desc) { ch <- deviceDesc }

func (c deviceCollector) Collect(ch chan<- prometheus.Metric) {
	for name, state := range c.b.devs.snapshot() {
		v := 0.0
		if state == "ok" {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(deviceDesc, prometheus.GaugeValue, v, name, state)
	}
}
