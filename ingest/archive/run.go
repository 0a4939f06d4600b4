package archive

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/registry"
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

// Run is ingest: it subscribes to the telemetry at once, with its persistent session, and
// archives it until ctx is cancelled, then flushes, acknowledges and disconnects. InfluxDB need
// not be up at start: until it answers and its bucket is ready, every write fails and is retried
// like any failed write, so the messages received meanwhile stay unacknowledged (the broker
// holds the rest of the backlog) and are written, then acknowledged, once it answers. Metrics
// are registered with reg.
func Run(ctx context.Context, s Settings, reg prometheus.Registerer, log *slog.Logger) error {
	m := NewMetrics(reg)
	s.Pipeline = s.Pipeline.withDefaults()
	// The subscription first: a bad MQTT/TLS setting fails the start before anything runs.
	var a *Archiver
	sub, err := newSubscription(ctx, s.MQTT, func(msg Message) { a.Handle(msg) }, m, log)
	if err != nil {
		return err
	}
	if s.Registry != "" {
		keys, err := registry.Open(s.Registry)
		if err != nil {
			return err
		}
		go keys.Watch(ctx, registry.DefaultWatchInterval, log)
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
	db := &pendingInflux{ready: make(chan struct{})}
	defer db.close()
	openCtx, stopOpening := context.WithCancel(ctx)
	opened := make(chan struct{})
	go func() {
		defer close(opened)
		i, err := openInfluxRetrying(openCtx, s.Influx, s.Pipeline, log)
		if err != nil {
			return
		}
		db.set(i)
		log.Info("InfluxDB ready", "url", s.Influx.URL, "version", i.Version, "bucket", i.Bucket)
	}()
	defer func() { stopOpening(); <-opened }()

	a = New(s.Pipeline, db, sub.publishQuarantine, m, log)
	sub.connect()
	runErr := a.Run(ctx)
	sub.close(5 * time.Second)
	if runErr != nil {
		return runErr
	}
	log.Info("ingest stopped")
	return nil
}

// errInfluxNotReady fails the writes made before InfluxDB answered; the archiver retries them.
var errInfluxNotReady = errors.New("InfluxDB not ready yet (its bucket is prepared when it answers)")

// pendingInflux is the archiver's Writer: it fails with errInfluxNotReady until set is called
// with the prepared server, then writes to it.
type pendingInflux struct {
	once  sync.Once
	ready chan struct{} // closed by set
	db    *Influx
}

func (p *pendingInflux) set(db *Influx) {
	p.once.Do(func() {
		p.db = db
		close(p.ready)
	})
}

func (p *pendingInflux) WriteRecord(ctx context.Context, line ...string) error {
	select {
	case <-p.ready:
		return p.db.Writer.WriteRecord(ctx, line...)
	default:
		return errInfluxNotReady
	}
}

func (p *pendingInflux) close() {
	select {
	case <-p.ready:
		p.db.Close()
	default:
	}
}

// openInfluxRetrying calls OpenInflux until it succeeds or ctx ends.
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
