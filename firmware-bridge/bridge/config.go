package bridge

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/internal/atomicfile"
)

// configFile is the last good configuration bundle in the state directory, kept as received
// (signed), so that it is verified again at every start.
const configFile = "config.bundle"

// ErrOlderConfig refuses a bundle whose version is below the one the bridge runs.
var ErrOlderConfig = errors.New("config bundle older than the one in force")

// loadConfig applies the bundle kept in the state directory, if any and still valid: a bundle
// that no longer verifies (another pinned key, expired) stays on disk, unused, until a good one
// replaces it.
func (b *Bridge) loadConfig() {
	if b.cfg.ConfigKey == nil {
		return
	}
	msg, err := os.ReadFile(filepath.Join(b.cfg.StateDir, configFile))
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err != nil {
		b.log.Warn("stored configuration bundle unreadable", "err", err)
		return
	}
	cb, err := configbundle.Open(msg, b.cfg.ConfigKey, b.cfg.Vehicle, time.Now())
	if err != nil {
		b.log.Warn("stored configuration bundle not applied", "err", err)
		return
	}
	b.applyConfig(cb)
}

// ReceiveConfig verifies a bundle received on the vehicle's config topic and, when it is good
// and newer than the one in force, stores it atomically and applies it. A bundle that fails
// leaves the one in force (and the stored file) as they were.
func (b *Bridge) ReceiveConfig(msg []byte) error {
	if b.cfg.ConfigKey == nil {
		return errors.New("no pinned configuration key (TRENZINHO_CONFIG_KEY)")
	}
	cb, err := configbundle.Open(msg, b.cfg.ConfigKey, b.cfg.Vehicle, time.Now())
	if err != nil {
		return err
	}
	b.confMu.Lock()
	defer b.confMu.Unlock()
	if cur := b.conf.Load(); cur != nil {
		switch {
		case cb.Version < cur.Version:
			return fmt.Errorf("%w: version %d, in force %d", ErrOlderConfig, cb.Version, cur.Version)
		case cb.Version == cur.Version:
			return nil // the retained bundle again, at every reconnection
		}
	}
	if err := atomicfile.Write(filepath.Join(b.cfg.StateDir, configFile), msg, 0o644); err != nil {
		return fmt.Errorf("store config bundle: %w", err)
	}
	b.applyConfig(cb)
	return nil
}

// applyConfig puts a verified bundle in force: the batch interval and the log level now; the
// profile, geofences and warning thresholds are kept for the driver's coach.
func (b *Bridge) applyConfig(cb *configbundle.Bundle) {
	b.conf.Store(cb)
	if d := cb.Settings.BatchInterval(); d > 0 {
		b.interval.Store(int64(d))
		select {
		case b.intervalCh <- struct{}{}:
		default:
		}
	}
	if l, ok := cb.Settings.Level(); ok && b.cfg.LogLevel != nil {
		b.cfg.LogLevel.Set(l)
	}
	if b.cfg.Coach != nil {
		if err := b.cfg.Coach.Configure(cb); err != nil {
			b.log.Warn("the driver's coach cannot use the configuration bundle; it keeps the previous one", "err", err,
				"config_version", cb.Version)
		} else {
			b.coaching.Store(true)
		}
	}
	b.log.Info("configuration bundle in force", "config_version", cb.Version,
		"valid_until", cb.ValidUntil.Format(time.RFC3339), "profile", cb.Profile.ID,
		"batch_interval", b.batchInterval())
	b.onDeviceChange() // the status says the new version
}

// Config returns the configuration bundle in force, nil when none.
func (b *Bridge) Config() *configbundle.Bundle { return b.conf.Load() }

func (b *Bridge) configVersion() uint64 {
	if cb := b.conf.Load(); cb != nil {
		return cb.Version
	}
	return 0
}

func (b *Bridge) batchInterval() time.Duration { return time.Duration(b.interval.Load()) }

// subscribeConfig subscribes to the vehicle's retained config topic (at every connection: the
// session is clean); the broker sends the retained bundle at once.
func (b *Bridge) subscribeConfig(c mqtt.Client) {
	if b.cfg.ConfigKey == nil {
		return
	}
	c.Subscribe(configbundle.Topic(b.cfg.Vehicle), 1, func(_ mqtt.Client, m mqtt.Message) {
		if err := b.ReceiveConfig(m.Payload()); err != nil {
			b.log.Warn("configuration bundle refused; the one in force stays", "err", err,
				"config_version", b.configVersion(), "bytes", len(m.Payload()))
		}
	})
}
