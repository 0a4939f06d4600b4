package main

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/firmware-bridge/bridge"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/mosquittoauth"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
)

// TestConfigBundleEndToEnd: `monitor vehicle add` pins the monitor's public key in the Pi's
// bridge.env; `monitor serve` publishes the vehicle's signed bundle, retained, through a real
// Mosquitto with the repository's ACL; a real bridge with the enrolment's settings verifies and
// applies it and reports its version in its status; the fleet API shows that version as the
// current one (not stale). A bridge whose status names another version is flagged stale.
func TestConfigBundleEndToEnd(t *testing.T) {
	repoACL, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "deploy", "mosquitto", "acl"))
	if err != nil {
		t.Fatal(err)
	}
	e := newEnrolment(t, string(repoACL))
	keyPath := filepath.Join(e.dir, "monitor-signing.key")
	if _, err := e.add(t, "PIU-001", "--signing-key", keyPath); err != nil {
		t.Fatal(err)
	}
	env, bridgeKey := e.bridgeFiles(t, "PIU-001")
	monKey, _, err := loadOrCreateKey(keyPath)
	if err != nil {
		t.Fatal(err)
	}
	if want := base64.StdEncoding.EncodeToString(monKey.Public().(ed25519.PublicKey)); env["TRENZINHO_CONFIG_KEY"] != want {
		t.Fatalf("bridge.env pins %q, want the monitor's key %q", env["TRENZINHO_CONFIG_KEY"], want)
	}
	h, _ := mosquittoauth.Hash("senha-do-monitor", nil)
	if err := mosquittoauth.SetPassword(e.passwd, "svc.monitor", h, false); err != nil {
		t.Fatal(err)
	}
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{Extra: []string{"password_file " + e.passwd, "acl_file " + e.acl}})

	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cmdServe(ctx, []string{
			"--mqtt-url", broker.URL(), "--mqtt-user", "svc.monitor", "--mqtt-password", "senha-do-monitor",
			"--db", filepath.Join(e.dir, "monitor.db"), "--listen", addr, "--registry", e.registry,
			"--signing-key", keyPath, "--monitor-client-id", "monitor-" + t.Name(),
			"--admin-user", "admin", "--admin-password", testAdminPassword, "--log-level", "error",
			"--bundle-batch-interval", "1500ms",
		})
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	})
	if err := testenv.WaitTCP(addr, 30*time.Second); err != nil {
		t.Fatal(err)
	}

	pin, err := base64.StdEncoding.DecodeString(env["TRENZINHO_CONFIG_KEY"])
	if err != nil {
		t.Fatal(err)
	}
	br, err := bridge.Open(bridge.Config{
		Vehicle: env["TRENZINHO_VEHICLE"], StateDir: t.TempDir(), BatchInterval: time.Minute, StatusEvery: 500 * time.Millisecond,
		MQTT: config.MQTT{URL: broker.URL(), User: env["TRENZINHO_MQTT_USER"], Password: env["TRENZINHO_MQTT_PASSWORD"]},
		Key:  bridgeKey, Kid: env["TRENZINHO_KID"], ConfigKey: ed25519.PublicKey(pin),
	})
	if err != nil {
		t.Fatal(err)
	}
	bctx, bcancel := context.WithCancel(context.Background())
	bdone := make(chan error, 1)
	go func() { bdone <- br.Run(bctx) }()
	t.Cleanup(func() { bcancel(); <-bdone })

	testenv.WaitFor(t, "the bridge runs a bundle", 60*time.Second, func() bool { return br.Config() != nil })
	cb := br.Config()
	if cb.Settings.BatchInterval() != 1500*time.Millisecond || cb.Licensee != "L1" || cb.Profile.ID == "" {
		t.Errorf("bundle in force: %+v", cb.Settings)
	}
	token := login(t, addr)
	var fleet struct{ Items []view.Vehicle }
	testenv.WaitFor(t, "the fleet API shows the bridge's configuration version", 60*time.Second, func() bool {
		testenv.Get(t, "http://"+addr, token, "/api/v1/vehicles", &fleet)
		return len(fleet.Items) == 1 && fleet.Items[0].ConfigVersion == cb.Version
	})
	v := fleet.Items[0]
	if v.ConfigCurrent != cb.Version || v.ConfigStale == nil || *v.ConfigStale {
		t.Errorf("fleet: config_version %d, current %d, stale %v", v.ConfigVersion, v.ConfigCurrent, v.ConfigStale)
	}
}

func login(t *testing.T, addr string) string {
	t.Helper()
	resp, err := http.Post("http://"+addr+"/api/v1/login", "application/json",
		strings.NewReader(`{"user":"admin","password":"`+testAdminPassword+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || out.Token == "" {
		t.Fatalf("login: %s %v", resp.Status, err)
	}
	return out.Token
}

// staticFleet is a fleet as the judge would report it.
type staticFleet []view.Vehicle

func (f staticFleet) Vehicles(context.Context) ([]view.Vehicle, error) { return f, nil }

// A vehicle that runs another version than the one issued is flagged stale; one the monitor
// issued nothing to is not flagged at all.
func TestBundleFleetStale(t *testing.T) {
	p := &bundler{issued: map[string]issued{"PIU-001": {version: 10}, "PIU-002": {version: 10}}}
	f := bundleFleet{staticFleet{{ID: "PIU-001", ConfigVersion: 10}, {ID: "PIU-002", ConfigVersion: 9}, {ID: "PIU-003"}}, p}
	vs, _ := f.Vehicles(context.Background())
	if s := vs[0].ConfigStale; s == nil || *s {
		t.Error("PIU-001 runs the current version")
	}
	if s := vs[1].ConfigStale; s == nil || !*s || vs[1].ConfigCurrent != 10 {
		t.Error("PIU-002 runs an older version")
	}
	if vs[2].ConfigStale != nil {
		t.Error("PIU-003 was issued nothing")
	}
}

// TestBundleSizePiuma measures the bundle of a Piúma vehicle (the Piúma profile, the sample
// geofences): docs/benchmarks.md quotes the number.
func TestBundleSizePiuma(t *testing.T) {
	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	prof := profile.Piuma()
	p := &bundler{cfg: bundleConfig{validity: 30 * 24 * time.Hour, leadM: 300, speedMargin: 2}, key: ed25519.NewKeyFromSeed(make([]byte, 32)),
		profileID: prof.ID, profileYAML: string(profile.PiumaYAML()), set: set, now: time.Now, geo: map[string]json.RawMessage{}}
	for _, v := range []struct{ id, licensee string }{{"PIU-001", "L1"}, {"PIU-002", "L2"}} {
		b, _, err := p.bundle(registryVehicle(v.id, v.licensee))
		if err != nil {
			t.Fatal(err)
		}
		msg, err := p.sign(b, 0)
		if err != nil {
			t.Fatal(err)
		}
		var env configbundle.Envelope
		json.Unmarshal(msg, &env)
		t.Logf("%s (%s): %d bytes signed (%s), profile %d bytes, geofences %d bytes", v.id, v.licensee, len(msg), env.Enc, len(b.Profile.YAML), len(b.Geofences))
		if len(msg) > 64<<10 || env.Enc != configbundle.EncJSON {
			t.Errorf("%s: %d bytes (%s): the Piúma bundle should travel uncompressed under 64 KB", v.id, len(msg), env.Enc)
		}
		if !bytes.Contains(b.Geofences, []byte(`"kind":"sensitive"`)) {
			t.Error("no sensitive site in the bundle")
		}
	}
}

func registryVehicle(id, licensee string) registry.Vehicle {
	return registry.Vehicle{ID: id, Licensee: licensee}
}

// TestBundleVersionStableAcrossRestart: a monitor restarted with the same profile, geofences
// and settings publishes again the very bundle it issued (the same bytes, the same version) —
// not a new version of the same content; a change of content issues a higher version, and so
// does a first start without the kept file.
func TestBundleVersionStableAcrossRestart(t *testing.T) {
	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.NewStore(&registry.Registry{
		Licensees: []registry.Licensee{{ID: "L1", RazaoSocial: "Trenzinho Um Ltda", CNPJ: "11222333000181"}},
		Vehicles:  []registry.Vehicle{{ID: "PIU-001", Plate: "ABC1D23", Licensee: "L1"}},
	}, "")
	if err != nil {
		t.Fatal(err)
	}
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	opts := mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID("restart-" + t.Name())
	client := mqtt.NewClient(opts)
	if tok := client.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	t.Cleanup(func() { client.Disconnect(100) })
	// retained reads the vehicle's retained bundle, as a bridge connecting now would.
	retained := func() []byte {
		got := make(chan []byte, 1)
		sub := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID("reader-" + t.Name()).
			SetDefaultPublishHandler(func(_ mqtt.Client, m mqtt.Message) {}))
		if tok := sub.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			t.Fatalf("connect: %v", tok.Error())
		}
		defer sub.Disconnect(100)
		sub.Subscribe(configbundle.Topic("PIU-001"), 1, func(_ mqtt.Client, m mqtt.Message) {
			select {
			case got <- m.Payload():
			default:
			}
		}).Wait()
		select {
		case b := <-got:
			return b
		case <-time.After(10 * time.Second):
			t.Fatal("no retained bundle")
			return nil
		}
	}
	key := ed25519.NewKeyFromSeed(make([]byte, 32))
	state := filepath.Join(t.TempDir(), "monitor.db.bundles.json")
	clock := time.Now()
	start := func(leadM float64, statePath string) *bundler {
		p := &bundler{cfg: bundleConfig{validity: 30 * 24 * time.Hour, leadM: leadM, speedMargin: 2}, key: key,
			profileID: "piuma", profileYAML: string(profile.PiumaYAML()), set: set, reg: reg,
			log: slog.New(slog.DiscardHandler), now: func() time.Time { return clock },
			geo: map[string]json.RawMessage{}, issued: map[string]issued{}, statePath: statePath}
		p.load()
		p.publishAll(client)
		return p
	}
	first := start(300, state)
	v1 := first.Current("PIU-001")
	msg1 := retained()
	if v1 == 0 || len(msg1) == 0 {
		t.Fatalf("first start issued version %d", v1)
	}

	clock = clock.Add(2 * time.Hour) // a restart, two hours later, nothing changed
	again := start(300, state)
	if v := again.Current("PIU-001"); v != v1 {
		t.Errorf("restart with the same content: version %d, want %d (stable)", v, v1)
	}
	if msg := retained(); !bytes.Equal(msg, msg1) {
		t.Error("restart with the same content: the retained bundle is not the one issued before")
	}

	clock = clock.Add(time.Hour)
	changed := start(250, state) // the lead distance changed: new content
	if v := changed.Current("PIU-001"); v <= v1 {
		t.Errorf("changed content: version %d, want above %d", v, v1)
	}

	clock = clock.Add(time.Hour)
	if v := start(250, "").Current("PIU-001"); v <= changed.Current("PIU-001") {
		t.Errorf("no kept file: version %d, want a new one above %d", v, changed.Current("PIU-001"))
	}
}
