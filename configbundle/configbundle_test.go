package configbundle_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/geofences"
)

var t0 = time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)

func testBundle(t testing.TB) *configbundle.Bundle {
	t.Helper()
	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	gf, err := configbundle.Geofences(set, "L1")
	if err != nil {
		t.Fatal(err)
	}
	return &configbundle.Bundle{
		Format: configbundle.Format, Vehicle: "PIU-001", Licensee: "L1", Version: 7,
		IssuedAt: t0, ValidUntil: t0.Add(30 * 24 * time.Hour),
		Profile:   configbundle.Profile{ID: "piuma-2018", YAML: "id: piuma-2018\n"},
		Geofences: gf,
		Settings: configbundle.Settings{BatchIntervalMS: 2000, LogLevel: "debug",
			Warnings: configbundle.Warnings{LeadDistanceM: 300, SpeedMarginKmh: 2, ServiceEndMin: []int{20, 5}}},
	}
}

func newKey(t testing.TB) (ed25519.PublicKey, ed25519.PrivateKey) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return pub, priv
}

func TestSignOpen(t *testing.T) {
	pub, priv := newKey(t)
	b := testBundle(t)
	msg, err := configbundle.Sign(b, priv)
	if err != nil {
		t.Fatal(err)
	}
	again, _ := configbundle.Sign(b, priv)
	if !bytes.Equal(msg, again) {
		t.Error("signing one bundle twice gave two byte strings")
	}
	got, err := configbundle.Open(msg, pub, "PIU-001", t0.Add(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != 7 || got.Settings.BatchInterval() != 2*time.Second || got.Licensee != "L1" {
		t.Errorf("opened %+v", got)
	}
	// The geofences load again as a set: the licensee's itineraries, none of another's.
	set, err := geofences.Read(bytes.NewReader(got.Geofences), "bundle")
	if err != nil {
		t.Fatal(err)
	}
	if len(set.Itineraries("L1")) == 0 || len(set.Itineraries("L2")) != 0 || len(set.OfKind(geofences.KindSensitive)) == 0 {
		t.Errorf("geofences of the bundle: %d L1 itineraries, %d L2, %d sensitive",
			len(set.Itineraries("L1")), len(set.Itineraries("L2")), len(set.OfKind(geofences.KindSensitive)))
	}
	for _, f := range set.OfKind(geofences.KindSensitive) {
		if orig, _ := geofences.Sample(); orig != nil {
			if o, ok := orig.Feature(f.ID); ok && (o.OpeningHours == nil) != (f.OpeningHours == nil) {
				t.Errorf("%s lost or gained its opening hours", f.ID)
			}
		}
	}
}

func TestOpenRefuses(t *testing.T) {
	pub, priv := newKey(t)
	_, other := newKey(t)
	good, err := configbundle.Sign(testBundle(t), priv)
	if err != nil {
		t.Fatal(err)
	}
	byOther, _ := configbundle.Sign(testBundle(t), other)
	var env configbundle.Envelope
	json.Unmarshal(good, &env)
	tampered := strings.Replace(string(good), env.Payload[:20], "A"+env.Payload[1:20], 1)
	for _, c := range []struct {
		name string
		msg  []byte
		now  time.Time
		veh  string
		want error
	}{
		{"other key", byOther, t0, "PIU-001", configbundle.ErrSignature},
		{"truncated", good[:len(good)/2], t0, "PIU-001", configbundle.ErrMalformed},
		{"tampered", []byte(tampered), t0, "PIU-001", nil},
		{"expired", good, t0.Add(31 * 24 * time.Hour), "PIU-001", configbundle.ErrExpired},
		{"other vehicle", good, t0, "PIU-002", configbundle.ErrVehicle},
		{"empty", nil, t0, "PIU-001", configbundle.ErrMalformed},
		{"too large", append(good, bytes.Repeat([]byte(" "), configbundle.MaxBytes)...), t0, "PIU-001", configbundle.ErrMalformed},
	} {
		b, err := configbundle.Open(c.msg, pub, c.veh, c.now)
		if err == nil || b != nil {
			t.Errorf("%s: accepted", c.name)
			continue
		}
		if c.want != nil && !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.name, err, c.want)
		}
	}
	if _, err := configbundle.Open(good, nil, "PIU-001", t0); !errors.Is(err, configbundle.ErrSignature) {
		t.Errorf("no pinned key: %v", err)
	}
}

// A bundle above CompressAbove travels gzip-compressed and opens the same.
func TestCompressed(t *testing.T) {
	pub, priv := newKey(t)
	b := testBundle(t)
	b.Profile.YAML = strings.Repeat("# comentário do perfil legal\n", 4000) // ~120 KB
	msg, err := configbundle.Sign(b, priv)
	if err != nil {
		t.Fatal(err)
	}
	var env configbundle.Envelope
	json.Unmarshal(msg, &env)
	if env.Enc != configbundle.EncGzip || len(msg) >= len(b.Profile.YAML) {
		t.Errorf("enc %s, %d bytes for a %d-byte profile", env.Enc, len(msg), len(b.Profile.YAML))
	}
	got, err := configbundle.Open(msg, pub, "PIU-001", t0)
	if err != nil {
		t.Fatal(err)
	}
	if got.Profile.YAML != b.Profile.YAML {
		t.Error("the profile changed through compression")
	}
}

func TestValidate(t *testing.T) {
	_, priv := newKey(t)
	for name, edit := range map[string]func(*configbundle.Bundle){
		"format":    func(b *configbundle.Bundle) { b.Format = 2 },
		"vehicle":   func(b *configbundle.Bundle) { b.Vehicle = "a/b" },
		"version 0": func(b *configbundle.Bundle) { b.Version = 0 },
		"validity":  func(b *configbundle.Bundle) { b.ValidUntil = b.IssuedAt },
		"interval":  func(b *configbundle.Bundle) { b.Settings.BatchIntervalMS = 5 },
		"log level": func(b *configbundle.Bundle) { b.Settings.LogLevel = "loud" },
		"geofences": func(b *configbundle.Bundle) { b.Geofences = json.RawMessage(`{"type":"Feature"}`) },
	} {
		b := testBundle(t)
		edit(b)
		if _, err := configbundle.Sign(b, priv); !errors.Is(err, configbundle.ErrMalformed) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
