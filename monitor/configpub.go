package main

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/registry"
)

// bundleConfig is what the monitor puts in every bridge's configuration bundle besides the
// profile and the geofences (docs/protocol.md §9).
type bundleConfig struct {
	validity      time.Duration
	batchInterval time.Duration
	logLevel      string
	leadM         float64
	speedMargin   float64
	every         time.Duration // how often the publisher looks for changes
}

func (c *bundleConfig) bind(b *config.Binder) {
	b.Duration(&c.validity, "TRENZINHO_BUNDLE_VALIDITY", 30*24*time.Hour, "how long a bridge's configuration bundle stays valid (re-issued at half its validity)")
	b.Duration(&c.batchInterval, "TRENZINHO_BUNDLE_BATCH_INTERVAL", 0, "batch interval the bundles set on the bridges (0: each bridge keeps its own)")
	b.String(&c.logLevel, "TRENZINHO_BUNDLE_LOG_LEVEL", "", "log level the bundles set on the bridges: debug, info, warn, error (empty: their own)")
	b.Float(&c.leadM, "TRENZINHO_BUNDLE_LEAD_M", 300, "the coach warns this many metres before an open sensitive site")
	b.Float(&c.speedMargin, "TRENZINHO_BUNDLE_SPEED_MARGIN_KMH", 2, "the coach warns this many km/h below the speed limit")
	c.every = time.Minute
}

// bundler issues each registered vehicle's configuration bundle, retained on its config topic,
// and remembers the version it issued last: the fleet view flags a bridge running another.
//
// Versions are the issue time in seconds (strictly increasing per vehicle), so that they keep
// increasing across restarts of the monitor without any state of their own: a restarted monitor
// re-issues every bundle with a new version, which the bridges apply (the same content).
type bundler struct {
	cfg         bundleConfig
	key         ed25519.PrivateKey
	profileID   string
	profileYAML string
	set         *geofences.Set
	reg         *registry.Store // nil: no vehicles, no bundles
	log         *slog.Logger
	now         func() time.Time

	mu     sync.Mutex
	geo    map[string]json.RawMessage // per licensee
	issued map[string]issued          // per vehicle
}

type issued struct {
	digest     [32]byte // of what the bundle says, version and dates apart
	version    uint64
	validUntil time.Time
}

// bundle builds the bundle of vehicle v, without version or dates, and its digest.
func (p *bundler) bundle(v registry.Vehicle) (*configbundle.Bundle, [32]byte, error) {
	p.mu.Lock()
	gf, ok := p.geo[v.Licensee]
	p.mu.Unlock()
	if !ok {
		var err error
		if gf, err = configbundle.Geofences(p.set, v.Licensee); err != nil {
			return nil, [32]byte{}, err
		}
		p.mu.Lock()
		p.geo[v.Licensee] = gf
		p.mu.Unlock()
	}
	b := &configbundle.Bundle{
		Format: configbundle.Format, Vehicle: v.ID, Licensee: v.Licensee,
		Profile:   configbundle.Profile{ID: p.profileID, YAML: p.profileYAML},
		Geofences: gf,
		Settings: configbundle.Settings{
			BatchIntervalMS: p.cfg.batchInterval.Milliseconds(), LogLevel: p.cfg.logLevel,
			Warnings: configbundle.Warnings{LeadDistanceM: p.cfg.leadM, SpeedMarginKmh: p.cfg.speedMargin,
				ServiceEndMin: []int{20, 5}, DocumentExpiryDays: 30},
		},
	}
	js, err := json.Marshal(b)
	return b, sha256.Sum256(js), err
}

// sign issues b for now with a version above the vehicle's last.
func (p *bundler) sign(b *configbundle.Bundle, last uint64) ([]byte, error) {
	now := p.now().UTC().Truncate(time.Second)
	b.Version = max(uint64(now.Unix()), last+1)
	b.IssuedAt, b.ValidUntil = now, now.Add(p.cfg.validity)
	return configbundle.Sign(b, p.key)
}

// Current returns the version last issued to vehicle (0: none).
func (p *bundler) Current(vehicle string) uint64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.issued[vehicle].version
}

// publishAll issues the bundles that are new, changed or past half their validity. A publish
// not acknowledged is tried again at the next round.
func (p *bundler) publishAll(client mqtt.Client) {
	if p.reg == nil || !client.IsConnectionOpen() {
		return
	}
	now := p.now()
	for _, v := range p.reg.Vehicles() {
		b, digest, err := p.bundle(v)
		if err != nil {
			p.log.Error("configuration bundle not built", "vehicle", v.ID, "err", err)
			continue
		}
		p.mu.Lock()
		prev := p.issued[v.ID]
		p.mu.Unlock()
		if prev.version != 0 && prev.digest == digest && now.Before(prev.validUntil.Add(-p.cfg.validity/2)) {
			continue
		}
		msg, err := p.sign(b, prev.version)
		if err != nil {
			p.log.Error("configuration bundle not signed", "vehicle", v.ID, "err", err)
			continue
		}
		tok := client.Publish(configbundle.Topic(v.ID), 1, true, msg)
		if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			p.log.Warn("configuration bundle not published; retrying", "vehicle", v.ID, "err", tok.Error())
			continue
		}
		p.mu.Lock()
		p.issued[v.ID] = issued{digest: digest, version: b.Version, validUntil: b.ValidUntil}
		p.mu.Unlock()
		p.log.Info("configuration bundle published", "vehicle", v.ID, "config_version", b.Version, "bytes", len(msg))
	}
}

// run publishes at once and then every cfg.every, until ctx ends.
func (p *bundler) run(ctx context.Context, client mqtt.Client) {
	t := time.NewTicker(p.cfg.every)
	defer t.Stop()
	for {
		p.publishAll(client)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// bundleFleet adds to the fleet view the configuration version each vehicle should run.
type bundleFleet struct {
	fleet interface {
		Vehicles(context.Context) ([]view.Vehicle, error)
	}
	bundles *bundler
}

func (f bundleFleet) Vehicles(ctx context.Context) ([]view.Vehicle, error) {
	vs, err := f.fleet.Vehicles(ctx)
	if err != nil {
		return nil, fmt.Errorf("fleet: %w", err)
	}
	for i := range vs {
		if cur := f.bundles.Current(vs[i].ID); cur != 0 {
			stale := vs[i].ConfigVersion != cur
			vs[i].ConfigCurrent, vs[i].ConfigStale = cur, &stale
		}
	}
	return vs, nil
}

// check refuses settings that no bundle could carry.
func (c *bundleConfig) check() error {
	s := configbundle.Settings{BatchIntervalMS: c.batchInterval.Milliseconds(), LogLevel: c.logLevel}
	if _, ok := s.Level(); c.logLevel != "" && !ok {
		return fmt.Errorf("TRENZINHO_BUNDLE_LOG_LEVEL=%q: want debug, info, warn or error", c.logLevel)
	}
	if c.batchInterval != 0 && (c.batchInterval < 100*time.Millisecond || c.batchInterval > time.Hour) {
		return fmt.Errorf("TRENZINHO_BUNDLE_BATCH_INTERVAL=%s: want 100ms to 1h, or 0", c.batchInterval)
	}
	if c.validity < time.Hour {
		return fmt.Errorf("TRENZINHO_BUNDLE_VALIDITY=%s: want at least 1h", c.validity)
	}
	return nil
}
