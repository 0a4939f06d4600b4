package main

import (
	"context"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/atomicfile"
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
	documentDays  int
	every         time.Duration // how often the publisher looks for changes
}

func (c *bundleConfig) bind(b *config.Binder) {
	b.Duration(&c.validity, "TRENZINHO_BUNDLE_VALIDITY", 30*24*time.Hour, "how long a bridge's configuration bundle stays valid (re-issued at half its validity)")
	b.Duration(&c.batchInterval, "TRENZINHO_BUNDLE_BATCH_INTERVAL", 0, "batch interval the bundles set on the bridges (0: each bridge keeps its own)")
	b.String(&c.logLevel, "TRENZINHO_BUNDLE_LOG_LEVEL", "", "log level the bundles set on the bridges: debug, info, warn, error (empty: their own)")
	b.Float(&c.leadM, "TRENZINHO_BUNDLE_LEAD_M", 300, "the coach warns this many metres before an open sensitive site")
	b.Float(&c.speedMargin, "TRENZINHO_BUNDLE_SPEED_MARGIN_KMH", 2, "the coach warns this many km/h below the speed limit")
	b.Int(&c.documentDays, "TRENZINHO_BUNDLE_DOCUMENT_DAYS", 15, "the coach warns this many days before a document of the vehicle or its licensee expires, and on its expiry")
	c.every = time.Minute
}

// bundler issues each registered vehicle's configuration bundle, retained on its config topic,
// and remembers the version it issued last: the fleet view flags a bridge running another.
//
// Versions are the issue time in seconds (strictly increasing per vehicle). What was issued is
// kept in a small file beside the database (statePath): a restarted monitor publishes again
// the very bundle it issued — the same signed bytes, the same version — while its content has
// not changed and it is not past half its validity, so that a restart issues no new version of
// the same content (the fleet page would flag every bridge stale until it applied it). Without
// the file (lost, unreadable, not set) every bundle is issued anew once, as a first start does.
type bundler struct {
	cfg         bundleConfig
	key         ed25519.PrivateKey
	profileID   string
	profileYAML string
	set         *geofences.Set
	reg         *registry.Store // nil: no vehicles, no bundles
	log         *slog.Logger
	now         func() time.Time
	statePath   string // "": nothing kept across restarts

	mu     sync.Mutex
	geo    map[string]json.RawMessage // per licensee
	issued map[string]issued          // per vehicle
}

type issued struct {
	digest     [32]byte // of what the bundle says, version and dates apart
	version    uint64
	validUntil time.Time
	msg        []byte // the signed bundle
	// restored: read from statePath and not yet published again by this process.
	restored bool
}

// issuedRecord is an issued bundle as statePath keeps it.
type issuedRecord struct {
	Digest     string    `json:"digest"` // hex
	Version    uint64    `json:"version"`
	ValidUntil time.Time `json:"valid_until"`
	Msg        []byte    `json:"msg"`
}

// load reads what statePath kept; a bundle that no longer opens with the monitor's key (the key
// rotated) or whose file is unreadable is issued anew.
func (p *bundler) load() {
	if p.statePath == "" {
		return
	}
	b, err := os.ReadFile(p.statePath)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	var recs map[string]issuedRecord
	if err == nil {
		err = json.Unmarshal(b, &recs)
	}
	if err != nil {
		p.log.Warn("issued configuration bundles unreadable: every bundle is issued anew", "path", p.statePath, "err", err)
		return
	}
	pub := p.key.Public().(ed25519.PublicKey)
	p.mu.Lock()
	defer p.mu.Unlock()
	for vehicle, r := range recs {
		var d [32]byte
		if n, err := hex.Decode(d[:], []byte(r.Digest)); err != nil || n != len(d) {
			continue
		}
		if cb, err := configbundle.Open(r.Msg, pub, vehicle, p.now()); err != nil || cb.Version != r.Version {
			continue
		}
		p.issued[vehicle] = issued{digest: d, version: r.Version, validUntil: r.ValidUntil, msg: r.Msg, restored: true}
	}
}

// save writes what was issued to statePath; p.mu is held.
func (p *bundler) save() {
	if p.statePath == "" {
		return
	}
	recs := make(map[string]issuedRecord, len(p.issued))
	for vehicle, is := range p.issued {
		recs[vehicle] = issuedRecord{Digest: hex.EncodeToString(is.digest[:]), Version: is.version, ValidUntil: is.validUntil, Msg: is.msg}
	}
	b, err := json.Marshal(recs)
	if err == nil {
		err = atomicfile.Write(p.statePath, b, 0o600)
	}
	if err != nil {
		p.log.Warn("issued configuration bundles not kept: a restart will issue them anew", "path", p.statePath, "err", err)
	}
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
				ServiceEndMin: []int{20, 5}, DocumentExpiryDays: p.cfg.documentDays},
		},
		Documents: p.documents(v),
	}
	js, err := json.Marshal(b)
	return b, sha256.Sum256(js), err
}

// documents are the dated documents of v and of its licensee as the registry holds them: of
// several of one kind on one record, the one valid the longest (as registry.Store.Expiring
// counts them); a document without an end date is left out.
func (p *bundler) documents(v registry.Vehicle) []configbundle.Document {
	var out []configbundle.Document
	add := func(holder string, docs []registry.Document) {
		best := map[registry.DocumentKind]registry.Date{}
		var kinds []registry.DocumentKind
		for _, d := range docs {
			if d.ValidUntil.IsZero() {
				continue
			}
			cur, seen := best[d.Kind]
			if !seen {
				kinds = append(kinds, d.Kind)
			}
			if !seen || cur.Before(d.ValidUntil) {
				best[d.Kind] = d.ValidUntil
			}
		}
		for _, k := range kinds {
			out = append(out, configbundle.Document{Holder: holder, Kind: string(k), ValidUntil: best[k].String()})
		}
	}
	add(configbundle.HolderVehicle, v.Documents)
	if p.reg != nil {
		if l, ok := p.reg.Licensee(v.Licensee); ok {
			add(configbundle.HolderLicensee, l.Documents)
		}
	}
	if len(out) > configbundle.MaxDocuments {
		out = out[:configbundle.MaxDocuments]
	}
	return out
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
			if prev.restored {
				// Issued before a restart, unchanged: the same bytes again (the broker may
				// have lost its retained copy), the same version.
				tok := client.Publish(configbundle.Topic(v.ID), 1, true, prev.msg)
				if tok.WaitTimeout(10*time.Second) && tok.Error() == nil {
					p.mu.Lock()
					prev.restored = false
					p.issued[v.ID] = prev
					p.mu.Unlock()
				}
			}
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
		p.issued[v.ID] = issued{digest: digest, version: b.Version, validUntil: b.ValidUntil, msg: msg}
		p.save()
		p.mu.Unlock()
		p.log.Info("configuration bundle published", "vehicle", v.ID, "config_version", b.Version, "bytes", len(msg))
	}
}

// run publishes at once and then every cfg.every, until ctx ends.
func (p *bundler) run(ctx context.Context, client mqtt.Client) {
	p.load()
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
	if c.documentDays < 0 || c.documentDays > 366 {
		return fmt.Errorf("TRENZINHO_BUNDLE_DOCUMENT_DAYS=%d: want 0 to 366", c.documentDays)
	}
	if c.validity < time.Hour {
		return fmt.Errorf("TRENZINHO_BUNDLE_VALIDITY=%s: want at least 1h", c.validity)
	}
	return nil
}
