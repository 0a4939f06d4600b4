package main

// Signed telemetry (docs/protocol.md §6) against a real Mosquitto and a real InfluxDB: ingest
// verifies each batch with the key the registry holds for its vehicle and quarantines the
// forged, the tampered, and — when signatures are required — the unsigned ones.

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/ingest/archive"
	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

// signedFleet makes batches of test vehicles, signed or not.
type signedFleet struct {
	epoch string
	base  time.Time
}

func (f signedFleet) payload(t testing.TB, vehicle string, seq uint64, kid string, key ed25519.PrivateKey) []byte {
	t.Helper()
	t0 := f.base.Add(time.Duration(seq) * 10 * time.Second)
	b := &wire.Batch{V: wire.Version, Vehicle: vehicle, Epoch: f.epoch, Seq: seq,
		SentAt: wire.NewTime(t0.Add(9 * time.Second)), Clock: wire.ClockGPS, Kid: kid}
	for i := range readingsPerKind {
		at := wire.NewTime(t0.Add(time.Duration(i)*time.Second + 250*time.Millisecond))
		speed, db := 12.5, 66.25
		b.GPS = append(b.GPS, wire.GPS{T: at, Lat: -20.8367, Lon: -40.7292, SpeedKmh: &speed, Fix: wire.Fix3D})
		b.Sound = append(b.Sound, wire.Sound{T: at, LAeqDB: &db})
	}
	p, err := wire.Encode(b, key)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tamper changes one reading of a signed payload after signing: still a valid batch, no longer
// the bytes the vehicle signed.
func tamper(t testing.TB, p []byte) []byte {
	q := bytes.Replace(p, []byte(`"lat":-20.8367`), []byte(`"lat":-20.8368`), 1)
	if bytes.Equal(p, q) {
		t.Fatal("nothing to tamper with")
	}
	return q
}

func newKey(t testing.TB) ed25519.PrivateKey {
	_, k, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

// writeRegistry writes a registry with vehicles S-001…S-00n of licensee L1; keys[i] (when not
// nil) is registered for vehicle i+1 as kid "S-00{i+1}-k1".
func writeRegistry(t testing.TB, path string, n int, keys map[int]ed25519.PrivateKey) {
	t.Helper()
	r := &registry.Registry{Licensees: []registry.Licensee{{ID: "L1", RazaoSocial: "Trenzinho Teste Ltda", CNPJ: "11222333000181"}}}
	for i := range n {
		v := registry.Vehicle{ID: fmt.Sprintf("S-%03d", i+1), Plate: fmt.Sprintf("ABC1D%02d", i+1), Licensee: "L1"}
		if k := keys[i]; k != nil {
			v.KeyID = v.ID + "-k1"
			v.PublicKey = base64.StdEncoding.EncodeToString(k.Public().(ed25519.PublicKey))
		}
		r.Vehicles = append(r.Vehicles, v)
	}
	s, err := registry.NewStore(r, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Replace(r); err != nil { // written atomically, as the monitor writes it
		t.Fatal(err)
	}
}

// quarantineByReason counts the quarantine records of a vehicle in InfluxDB by reason.
func quarantineByReason(t testing.TB, db *testenv.Influx, vehicle string) map[wire.Reason]int {
	got := map[wire.Reason]int{}
	for _, s := range db.Query(t, `SELECT count("bytes") FROM "quarantine" WHERE "vehicle" = `+testenv.Escape(vehicle)+` GROUP BY "reason"`) {
		n, _ := s.Values[0][1].(float64)
		got[wire.Reason(s.Tags["reason"])] = int(n)
	}
	return got
}

func batchesOf(t testing.TB, db *testenv.Influx, vehicle string) int {
	return db.Count(t, "batch", "seq", `"vehicle" = `+testenv.Escape(vehicle))
}

// TestSignaturesRequired runs the ingest program with TRENZINHO_REQUIRE_SIGNATURES=true and a
// registry: only batches signed by the vehicle's registered key land in InfluxDB; forged
// (another key under the vehicle's kid), tampered-after-signing, unsigned, old-kid and
// unregistered-vehicle batches are quarantined by reason. A key registered while ingest runs is
// used without a restart.
func TestSignaturesRequired(t *testing.T) {
	broker, db := setup(t)
	k1, k2, forger := newKey(t), newKey(t), newKey(t)
	reg := filepath.Join(t.TempDir(), "registry.yaml")
	writeRegistry(t, reg, 3, map[int]ed25519.PrivateKey{0: k1}) // S-002 gets its key later; S-003 never

	metrics := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	s := ingestSettings{mqttURL: broker.URL(), influxURL: db.URL(), clientID: "ingest-sig", metricsAddr: metrics}
	p := &process{metrics: metrics}
	p.Process = testenv.StartProcess(t, "ingest-sig", append(s.env(),
		"TRENZINHO_REGISTRY="+reg, "TRENZINHO_REQUIRE_SIGNATURES=true"), ingestBinary(t))
	p.waitSubscribed(t)

	f := signedFleet{epoch: "e-sig", base: time.Now().Add(-48 * time.Hour).Truncate(time.Second)}
	var msgs []message
	add := func(vehicle string, payload []byte) {
		msgs = append(msgs, message{wire.TelemetryTopic(vehicle), payload})
	}
	const good = 20
	for seq := uint64(1); seq <= good; seq++ {
		add("S-001", f.payload(t, "S-001", seq, "S-001-k1", k1))
		switch seq % 5 {
		case 0:
			add("S-001", f.payload(t, "S-001", 100+seq, "S-001-k1", forger)) // forged: 4
		case 1:
			add("S-001", tamper(t, f.payload(t, "S-001", 200+seq, "S-001-k1", k1))) // tampered: 4
		case 2:
			add("S-001", f.payload(t, "S-001", 300+seq, "", nil)) // unsigned: 4
		case 3:
			add("S-001", f.payload(t, "S-001", 400+seq, "S-001-k0", k1)) // a kid that is not registered: 4
		case 4:
			add("S-003", f.payload(t, "S-003", seq, "S-003-k1", forger)) // a vehicle without a key: 4
		}
	}
	// S-002 signs before its key is registered: unknown_key.
	for seq := uint64(1); seq <= 3; seq++ {
		add("S-002", f.payload(t, "S-002", seq, "S-002-k1", k2))
	}
	<-publishInBackground(t, broker.URL(), "pub-sig", msgs)
	waitBatches(t, db, good, time.Minute)
	eventually(t, time.Minute, "everything else quarantined", func() bool {
		return db.Count(t, "quarantine", "bytes", "") >= len(msgs)-good
	})

	// Register S-002's key as `monitor vehicle add` would, while ingest runs, and wait for
	// ingest to log that it reloaded the registry.
	reloads := strings.Count(p.Log(), `msg="registry reloaded"`)
	writeRegistry(t, reg, 3, map[int]ed25519.PrivateKey{0: k1, 1: k2})
	eventually(t, time.Minute, "ingest to reload the registry", func() bool {
		return strings.Count(p.Log(), `msg="registry reloaded"`) > reloads
	})
	var later []message
	for seq := uint64(4); seq <= 6; seq++ {
		later = append(later, message{wire.TelemetryTopic("S-002"), f.payload(t, "S-002", seq, "S-002-k1", k2)})
	}
	later = append(later, message{wire.TelemetryTopic("S-002"), f.payload(t, "S-002", 7, "S-002-k1", forger)})
	<-publishInBackground(t, broker.URL(), "pub-sig-2", later)
	waitBatches(t, db, good+3, time.Minute)
	eventually(t, time.Minute, "the forged S-002 batch quarantined", func() bool {
		return quarantineByReason(t, db, "S-002")[wire.ReasonSignatureFailed] == 1
	})

	if n := batchesOf(t, db, "S-001"); n != good {
		t.Errorf("S-001: %d batches stored, want the %d good ones", n, good)
	}
	if n := batchesOf(t, db, "S-003"); n != 0 {
		t.Errorf("S-003 (no key): %d batches stored, want 0", n)
	}
	if n := batchesOf(t, db, "S-002"); n != 3 {
		t.Errorf("S-002: %d batches stored, want the 3 signed after its key was registered", n)
	}
	for vehicle, want := range map[string]map[wire.Reason]int{
		"S-001": {wire.ReasonSignatureFailed: 8, wire.ReasonUnsigned: 4, wire.ReasonUnknownKey: 4},
		"S-002": {wire.ReasonUnknownKey: 3, wire.ReasonSignatureFailed: 1},
		"S-003": {wire.ReasonUnknownKey: 4},
	} {
		got := quarantineByReason(t, db, vehicle)
		for r, n := range want {
			if got[r] != n {
				t.Errorf("%s: %d quarantined as %s, want %d", vehicle, got[r], r, n)
			}
			delete(got, r)
		}
		for r, n := range got {
			t.Errorf("%s: %d unexpectedly quarantined as %s", vehicle, n, r)
		}
	}
	total := float64(len(msgs) + len(later))
	// A message is acknowledged (and its record published) just after its write: wait for the
	// last ones on a busy machine.
	var m map[string]float64
	eventually(t, time.Minute, "every message acknowledged", func() bool {
		var err error
		m, err = scrape(p.metrics)
		return err == nil && m[`trenzinho_ingest_messages_acked_total`] == total
	})
	for name, want := range map[string]float64{
		`trenzinho_ingest_batch_signatures_total{outcome="verified"}`:   good + 3,
		`trenzinho_ingest_batch_signatures_total{outcome="unsigned"}`:   0,
		`trenzinho_ingest_batch_signatures_total{outcome="unverified"}`: 0,
		`trenzinho_ingest_quarantined_total{reason="signature_failed"}`: 9,
		`trenzinho_ingest_quarantined_total{reason="unsigned"}`:         4,
		`trenzinho_ingest_quarantined_total{reason="unknown_key"}`:      11,
		`trenzinho_ingest_quarantined_total{reason="bad_signature"}`:    0,
		`trenzinho_ingest_messages_acked_total`:                         total,
		`trenzinho_ingest_quarantine_published_total{result="ok"}`:      total - good - 3,
	} {
		if got, ok := m[name]; !ok || got != want {
			t.Errorf("%s = %v (present %v), want %v", name, got, ok, want)
		}
	}
}

// TestSignaturesNotRequired runs ingest in process without TRENZINHO_REQUIRE_SIGNATURES: unsigned
// batches and batches signed by a vehicle without a registered key are stored, but a forged or
// tampered batch of a vehicle with a key, or one under a kid that is not its registered key, is
// still quarantined.
func TestSignaturesNotRequired(t *testing.T) {
	broker, db := setup(t)
	k1, forger := newKey(t), newKey(t)
	reg := filepath.Join(t.TempDir(), "registry.yaml")
	writeRegistry(t, reg, 2, map[int]ed25519.PrivateKey{0: k1})

	metrics := prometheus.NewRegistry()
	settings := archive.Settings{
		MQTT:     archive.MQTTConfig{MQTT: config.MQTT{URL: broker.URL()}, ClientID: "ingest-nosig"},
		Influx:   archive.InfluxConfig{Influx: config.Influx{URL: db.URL(), Bucket: "trenzinho"}},
		Registry: reg,
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(testWriter{t}, &slog.HandlerOptions{Level: slog.LevelInfo}))
	go func() { done <- archive.Run(ctx, settings, metrics, log) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	eventually(t, time.Minute, "ingest subscribed", func() bool { return gather(t, metrics)["trenzinho_ingest_mqtt_up"] == 1 })

	f := signedFleet{epoch: "e-nosig", base: time.Now().Add(-48 * time.Hour).Truncate(time.Second)}
	msgs := []message{
		{wire.TelemetryTopic("S-001"), f.payload(t, "S-001", 1, "S-001-k1", k1)},            // verified
		{wire.TelemetryTopic("S-001"), f.payload(t, "S-001", 2, "", nil)},                   // unsigned: stored
		{wire.TelemetryTopic("S-001"), f.payload(t, "S-001", 3, "S-001-k1", forger)},        // forged
		{wire.TelemetryTopic("S-001"), tamper(t, f.payload(t, "S-001", 4, "S-001-k1", k1))}, // tampered
		{wire.TelemetryTopic("S-001"), f.payload(t, "S-001", 5, "S-001-k0", k1)},            // not its kid: stored, unverified
		{wire.TelemetryTopic("S-002"), f.payload(t, "S-002", 1, "S-002-k1", forger)},        // no key registered: stored, unverified
		{wire.TelemetryTopic("S-002"), f.payload(t, "S-002", 2, "", nil)},                   // unsigned: stored
		{wire.TelemetryTopic("S-001"), f.payload(t, "S-001", 6, "S-001-k1", k1)},            // verified
	}
	<-publishInBackground(t, broker.URL(), "pub-nosig", msgs)
	waitBatches(t, db, 6, time.Minute)
	eventually(t, time.Minute, "two quarantined", func() bool { return db.Count(t, "quarantine", "bytes", "") >= 2 })
	if n := batchesOf(t, db, "S-001"); n != 4 {
		t.Errorf("S-001: %d batches stored, want 4 (two verified, one unsigned, one with another kid)", n)
	}
	if n := batchesOf(t, db, "S-002"); n != 2 {
		t.Errorf("S-002: %d batches stored, want 2", n)
	}
	got := quarantineByReason(t, db, "S-001")
	if got[wire.ReasonSignatureFailed] != 2 || len(got) != 1 {
		t.Errorf("S-001 quarantined %v, want 2 signature_failed", got)
	}
	m := gather(t, metrics)
	for outcome, want := range map[batchsig.Outcome]float64{batchsig.Verified: 2, batchsig.Unsigned: 2, batchsig.Unverified: 2} {
		if got := m[fmt.Sprintf(`trenzinho_ingest_batch_signatures_total{outcome=%q}`, outcome)]; got != want {
			t.Errorf("%s batches: %v, want %v", outcome, got, want)
		}
	}
}
