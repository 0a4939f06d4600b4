package archive

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/monitor/registry"
)

// Settings are everything ingest needs.
type Settings struct {
	MQTT     MQTTConfig
	Influx   InfluxConfig
	Pipeline Config
	// Registry is the registry YAML (TRENZINHO_REGISTRY) holding the vehicles' public keys;
	// "" : no keys. It is reloaded when the file changes. Pipeline.Signatures.Required refuses
	// unsigned batches (TRENZINHO_REQUIRE_SIGNATURES).
	Registry string
}

// Run is ingest: it prepares InfluxDB (waiting for it when it is unreachable), subscribes to
// the telemetry, archives it until ctx is cancelled, then flushes, acknowledges and
// disconnects. Metrics are registered with reg.
func Run(ctx context.Context, s Settings, reg prometheus.Registerer, log *slog.Logger) error {
	m := NewMetrics(reg)
	s.Pipeline = s.Pipeline.withDefaults()
	if s.Registry != "" {
		keys, err := registry.Open(s.Registry)
		if err != nil {
			return err
		}
		go batchsig.Watch(ctx, keys, batchsig.DefaultWatchInterval, log)
		s.Pipeline.Signatures.Keys = batchsig.RegistryKeys(keys)
		s.Pipeline.Known = func(id string) bool { _, ok := keys.Vehicle(id); return ok }
		log.Info("registry loaded: batches of vehicles with a registered key are verified", "path", s.Registry,
			"vehicles", len(keys.Vehicles()), "signatures_required", s.Pipeline.Signatures.Required)
	} else if s.Pipeline.Signatures.Required {
		return fmt.Errorf("signatures are required (TRENZINHO_REQUIRE_SIGNATURES) but no registry holds the vehicles' keys (TRENZINHO_REGISTRY)")
	}
	if s.Influx.Timeout <= 0 {
		s.Influx.Timeout = s.Pipeline.WriteTimeout
	}
	db, err := openInfluxRetrying(ctx, s.Influx, s.Pipeline, log)
	if err != nil {
		return err
	}
	defer db.Close()
	log.Info("InfluxDB ready", "url", s.Influx.URL, "version", db.Version, "bucket", db.Bucket)

	var a *Archiver
	sub, err := newSubscription(ctx, s.MQTT, func(msg Message) { a.Handle(msg) }, m, log)
	if err != nil {
		return err
	}
	a = New(s.Pipeline, db.Writer, sub.publishQuarantine, m, log)
	sub.connect()
	runErr := a.Run(ctx)
	sub.close(5 * time.Second)
	if runErr != nil {
		return runErr
	}
	log.Info("ingest stopped")
	return nil
}

// openInfluxRetrying calls OpenInflux until it succeeds or ctx ends. Ingest does not subscribe
// before InfluxDB is ready: the broker keeps the messages in the persistent session meanwhile.
func openInfluxRetrying(ctx context.Context, cfg InfluxConfig, p Config, log *slog.Logger) (*Influx, error) {
	backoff := p.RetryMin
	for attempt := 1; ; attempt++ {
		db, err := OpenInflux(ctx, cfg)
		if err == nil {
			return db, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("InfluxDB not ready at shutdown: %w", err)
		}
		if attempt == 1 || attempt%10 == 0 {
			log.Warn("InfluxDB not ready; retrying", "url", cfg.URL, "attempt", attempt, "error", err)
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("InfluxDB not ready at shutdown: %w", err)
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, p.RetryMax)
	}
}
