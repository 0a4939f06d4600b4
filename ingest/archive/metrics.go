package archive

import (
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/wire"
)

// Metrics are the Prometheus metrics of ingest (docs/storage.md lists them).
type Metrics struct {
	messages      prometheus.Counter
	redelivered   prometheus.Counter
	acked         prometheus.Counter
	quarantined   *prometheus.CounterVec
	points        *prometheus.CounterVec
	collisions    *prometheus.CounterVec
	writes        *prometheus.CounterVec
	writeSeconds  prometheus.Histogram
	writePoints   prometheus.Histogram
	lag           prometheus.Histogram
	inFlight      prometheus.Gauge
	inFlightBytes prometheus.Gauge
	influxUp      prometheus.Gauge
	mqttUp        prometheus.Gauge
	qPublished    *prometheus.CounterVec
	signatures    *prometheus.CounterVec
}

// NewMetrics creates the metrics and registers them with reg (a registry of the program's own,
// not the global default).
func NewMetrics(reg prometheus.Registerer) *Metrics {
	const ns = "trenzinho_ingest"
	m := &Metrics{
		messages: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Name: "messages_total",
			Help: "MQTT messages received on the telemetry subscription, redeliveries included.",
		}),
		redelivered: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Name: "messages_redelivered_total",
			Help: "Messages received with the MQTT DUP flag (a redelivery of an unacknowledged message).",
		}),
		acked: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: ns, Name: "messages_acked_total",
			Help: "Messages acknowledged to the broker after their points were written.",
		}),
		quarantined: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "quarantined_total",
			Help: "Payloads rejected and quarantined, by reason.",
		}, []string{"reason"}),
		points: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "points_written_total",
			Help: "Points InfluxDB accepted, by measurement.",
		}, []string{"measurement"}),
		collisions: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "reading_collisions_total",
			Help: "Readings dropped because a later reading of the same kind in the same batch has the same time.",
		}, []string{"measurement"}),
		writes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "writes_total",
			Help: "InfluxDB write requests by result: ok, retry (5xx, timeout, unreachable; retried) or rejected (4xx; split and quarantined).",
		}, []string{"result"}),
		writeSeconds: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Name: "write_duration_seconds",
			Help:    "Latency of successful InfluxDB write requests.",
			Buckets: prometheus.ExponentialBuckets(0.005, 2, 12),
		}),
		writePoints: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Name: "write_points",
			Help:    "Points per successful InfluxDB write request.",
			Buckets: []float64{1, 10, 50, 100, 500, 1000, 2500, 5000, 10000},
		}),
		lag: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: ns, Name: "lag_seconds",
			Help:    "Receive time minus device time of each reading.",
			Buckets: []float64{0.5, 1, 2, 5, 10, 30, 60, 300, 900, 3600, 6 * 3600, 24 * 3600, 7 * 24 * 3600},
		}),
		inFlight: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Name: "in_flight_messages",
			Help: "Messages received and not yet acknowledged.",
		}),
		inFlightBytes: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Name: "in_flight_bytes",
			Help: "Payload bytes of the messages received and not yet acknowledged.",
		}),
		influxUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Name: "influx_up",
			Help: "1 when the last InfluxDB write succeeded, 0 while writes are retried.",
		}),
		mqttUp: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: ns, Name: "mqtt_up",
			Help: "1 while connected to the broker and subscribed.",
		}),
		qPublished: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "quarantine_published_total",
			Help: "Quarantine records published to MQTT, by result: ok, error or dropped (queue full).",
		}, []string{"result"}),
		signatures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: ns, Name: "batch_signatures_total",
			Help: "Batches accepted, by signature outcome: verified (with the vehicle's registered key), unsigned, or unverified (signed, no key registered, signatures not required).",
		}, []string{"outcome"}),
	}
	reg.MustRegister(m.signatures)
	reg.MustRegister(m.messages, m.redelivered, m.acked, m.quarantined, m.points, m.collisions,
		m.writes, m.writeSeconds, m.writePoints, m.lag, m.inFlight, m.inFlightBytes, m.influxUp,
		m.mqttUp, m.qPublished)
	for _, r := range wire.Reasons {
		m.quarantined.WithLabelValues(string(r))
	}
	for _, name := range measurements {
		m.points.WithLabelValues(name)
	}
	for _, name := range measurements[:idxBatch] {
		m.collisions.WithLabelValues(name)
	}
	for _, r := range []string{"ok", "retry", "rejected"} {
		m.writes.WithLabelValues(r)
	}
	for _, r := range []string{"ok", "error", "dropped"} {
		m.qPublished.WithLabelValues(r)
	}
	for _, o := range batchsig.Outcomes {
		m.signatures.WithLabelValues(o.String())
	}
	return m
}
