package bridge

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/internal/mosquittoauth"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

func signedBundle(t *testing.T, key ed25519.PrivateKey, version uint64, validFor time.Duration, interval time.Duration) []byte {
	t.Helper()
	now := time.Now().UTC().Truncate(time.Second)
	b := &configbundle.Bundle{
		Format: configbundle.Format, Vehicle: "PIU-001", Licensee: "L1", Version: version,
		IssuedAt: now.Add(-time.Hour), ValidUntil: now.Add(validFor),
		Profile:   configbundle.Profile{ID: "piuma-2018", YAML: "id: piuma-2018\n"},
		Geofences: json.RawMessage(`{"type":"FeatureCollection","features":[]}`),
		Settings:  configbundle.Settings{BatchIntervalMS: interval.Milliseconds(), LogLevel: "debug"},
	}
	msg, err := configbundle.Sign(b, key)
	if err != nil {
		t.Fatal(err)
	}
	return msg
}

// TestConfigThroughBroker: through a real Mosquitto with the repository's ACL, a bundle the
// monitor's account publishes (retained) is verified, stored and applied by the bridge, which
// then reports its version in its status; bundles signed by another key, truncated, expired or
// older are refused and the good one stays in force and on disk; the vehicle's own account
// cannot publish on its config topic; a restarted bridge runs the stored bundle again.
func TestConfigThroughBroker(t *testing.T) {
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	_, otherKey, _ := ed25519.GenerateKey(rand.Reader)
	dir := t.TempDir()
	passwd, acl := filepath.Join(dir, "passwd"), filepath.Join(dir, "acl")
	repoACL, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "deploy", "mosquitto", "acl"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(acl, repoACL, 0o644)
	for _, u := range []string{"PIU-001", "svc.monitor"} {
		h, _ := mosquittoauth.Hash("senha-"+u, nil)
		if err := mosquittoauth.SetPassword(passwd, u, h, false); err != nil {
			t.Fatal(err)
		}
	}
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{Extra: []string{"password_file " + passwd, "acl_file " + acl}})
	dial := func(id, user string) mqtt.Client {
		c := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID(id).
			SetUsername(user).SetPassword("senha-" + user).SetConnectTimeout(5 * time.Second))
		if tok := c.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("%s cannot connect: %v", user, tok.Error())
		}
		t.Cleanup(func() { c.Disconnect(100) })
		return c
	}
	monitor := dial("monitor", "svc.monitor")
	var mu sync.Mutex
	var lastStatus wire.Status
	monitor.Subscribe(wire.StatusTopic("PIU-001"), 1, func(_ mqtt.Client, m mqtt.Message) {
		if st, err := wire.DecodeStatus(m.Payload()); err == nil {
			mu.Lock()
			lastStatus = *st
			mu.Unlock()
		}
	}).WaitTimeout(10 * time.Second)
	publish := func(c mqtt.Client, msg []byte) {
		t.Helper()
		if tok := c.Publish(configbundle.Topic("PIU-001"), 1, true, msg); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("publish: %v", tok.Error())
		}
	}
	// The first bundle is retained before the bridge starts.
	good := signedBundle(t, key, 1, 30*24*time.Hour, 2*time.Second)
	publish(monitor, good)

	level := new(slog.LevelVar)
	level.Set(slog.LevelInfo)
	start := func() (*Bridge, context.CancelFunc, chan error) {
		b := newTestBridge(t, Config{
			Vehicle: "PIU-001", StateDir: dir, BatchInterval: time.Minute, StatusEvery: time.Hour,
			MQTT:      config.MQTT{URL: broker.URL(), User: "PIU-001", Password: "senha-PIU-001"},
			ConfigKey: pub, LogLevel: level,
		})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- b.Run(ctx) }()
		return b, cancel, done
	}
	b, cancel, done := start()
	testenv.WaitFor(t, "the bridge runs version 1 and says so", 20*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		return b.configVersion() == 1 && lastStatus.ConfigVersion == 1 && lastStatus.Online
	})
	if b.batchInterval() != 2*time.Second || level.Level() != slog.LevelDebug {
		t.Errorf("not applied: batch interval %s, log level %s", b.batchInterval(), level.Level())
	}
	if stored, _ := os.ReadFile(filepath.Join(dir, configFile)); !bytes.Equal(stored, good) {
		t.Error("the state directory does not hold the bundle in force")
	}

	// Bad bundles, each retained in turn; a good marker (version 3) last proves they all arrived.
	bad := map[string][]byte{
		"other key": signedBundle(t, otherKey, 5, 30*24*time.Hour, time.Second),
		"truncated": signedBundle(t, key, 6, 30*24*time.Hour, time.Second)[:200],
		"expired":   signedBundle(t, key, 7, -time.Minute, time.Second),
	}
	for name, msg := range bad {
		publish(monitor, msg)
		// Each is refused directly too, with the reason.
		if err := b.ReceiveConfig(msg); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if b.configVersion() != 1 || b.batchInterval() != 2*time.Second {
		t.Fatalf("a bad bundle replaced the good one: version %d", b.configVersion())
	}
	if stored, _ := os.ReadFile(filepath.Join(dir, configFile)); !bytes.Equal(stored, good) {
		t.Error("a bad bundle replaced the stored one")
	}
	v3 := signedBundle(t, key, 3, 30*24*time.Hour, 3*time.Second)
	publish(monitor, v3)
	testenv.WaitFor(t, "version 3 in force", 20*time.Second, func() bool { return b.configVersion() == 3 })
	if b.batchInterval() != 3*time.Second {
		t.Errorf("batch interval %s, want 3s", b.batchInterval())
	}
	if err := b.ReceiveConfig(signedBundle(t, key, 2, 30*24*time.Hour, time.Second)); !errors.Is(err, ErrOlderConfig) {
		t.Errorf("older version: %v", err)
	}
	// The vehicle cannot write its own configuration: the broker drops the publish, and what
	// it retains is still the monitor's last bundle.
	vehicle := dial("rogue-PIU-001", "PIU-001")
	rogue := signedBundle(t, key, 99, time.Hour, time.Second) // even one the bridge would accept
	vehicle.Publish(configbundle.Topic("PIU-001"), 1, true, rogue).WaitTimeout(5 * time.Second)
	retained := make(chan []byte, 1)
	reader := dial("reader-PIU-001", "PIU-001")
	reader.Subscribe(configbundle.Topic("PIU-001"), 1, func(_ mqtt.Client, m mqtt.Message) {
		select {
		case retained <- m.Payload():
		default:
		}
	})
	select {
	case got := <-retained:
		if !bytes.Equal(got, v3) {
			t.Errorf("the retained bundle is not the monitor's last one (%d bytes)", len(got))
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the vehicle cannot read its config topic")
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	// A restart runs the stored bundle before any broker is reached (the state file copied to
	// a fresh directory: the running bridge's spool keeps its own locked).
	dir2 := t.TempDir()
	stored, _ := os.ReadFile(filepath.Join(dir, configFile))
	os.WriteFile(filepath.Join(dir2, configFile), stored, 0o644)
	b2 := newTestBridge(t, Config{Vehicle: "PIU-001", StateDir: dir2, ConfigKey: pub})
	if b2.configVersion() != 3 || b2.batchInterval() != 3*time.Second {
		t.Errorf("after a restart: version %d, interval %s", b2.configVersion(), b2.batchInterval())
	}
	// Another pinned key: the stored bundle is not applied.
	other := otherKey.Public().(ed25519.PublicKey)
	dir3 := t.TempDir()
	os.WriteFile(filepath.Join(dir3, configFile), stored, 0o644)
	b3 := newTestBridge(t, Config{Vehicle: "PIU-001", StateDir: dir3, ConfigKey: other})
	if b3.configVersion() != 0 {
		t.Error("a bundle signed by another key than the pinned one was applied")
	}
}
