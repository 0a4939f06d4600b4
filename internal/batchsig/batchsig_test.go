package batchsig_test

import (
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

func key(seed byte) ed25519.PrivateKey {
	s := make([]byte, ed25519.SeedSize)
	for i := range s {
		s[i] = seed
	}
	return ed25519.NewKeyFromSeed(s)
}

var at = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

// batch encodes a batch of vehicle, signed with k under kid when k is not nil, and decodes it
// as a consumer would.
func batch(t *testing.T, vehicle, kid string, k ed25519.PrivateKey) (*wire.Batch, []byte) {
	t.Helper()
	lat := 1.5
	b := &wire.Batch{V: wire.Version, Vehicle: vehicle, Epoch: "e-1", Seq: 7, SentAt: wire.NewTime(at), Clock: wire.ClockGPS,
		GPS: []wire.GPS{{T: wire.NewTime(at), Lat: -20.8367, Lon: -40.7292, SpeedKmh: &lat}}, Kid: kid}
	p, err := wire.Encode(b, k)
	if err != nil {
		t.Fatal(err)
	}
	d, err := wire.Decode(wire.TelemetryTopic(vehicle), p, at)
	if err != nil {
		t.Fatal(err)
	}
	return d, p
}

func TestPolicy(t *testing.T) {
	good, other := key(1), key(2)
	keys := func(vehicle string) (string, ed25519.PublicKey, bool) {
		if vehicle == "PIU-001" {
			return "PIU-001-2026", good.Public().(ed25519.PublicKey), true
		}
		return "", nil, false
	}
	tamper := func(p []byte) []byte {
		q := append([]byte(nil), p...)
		i := len(`{"v":1,"vehicle":"PIU-001","epoch":"e-1","seq":`)
		q[i] = '8' // seq 7 → 8: still valid JSON, no longer the signed bytes
		return q
	}
	for _, tc := range []struct {
		name     string
		vehicle  string
		kid      string
		k        ed25519.PrivateKey
		edit     func([]byte) []byte
		required bool
		keys     batchsig.KeyLookup
		want     batchsig.Outcome
		reason   wire.Reason
	}{
		{name: "signed, verified", vehicle: "PIU-001", kid: "PIU-001-2026", k: good, keys: keys, want: batchsig.Verified},
		{name: "signed, verified, required", vehicle: "PIU-001", kid: "PIU-001-2026", k: good, keys: keys, required: true, want: batchsig.Verified},
		{name: "unsigned", vehicle: "PIU-001", keys: keys, want: batchsig.Unsigned},
		{name: "unsigned, required", vehicle: "PIU-001", keys: keys, required: true, reason: wire.ReasonUnsigned},
		{name: "forged (another key)", vehicle: "PIU-001", kid: "PIU-001-2026", k: other, keys: keys, reason: wire.ReasonSignatureFailed},
		{name: "forged, required", vehicle: "PIU-001", kid: "PIU-001-2026", k: other, keys: keys, required: true, reason: wire.ReasonSignatureFailed},
		{name: "tampered after signing", vehicle: "PIU-001", kid: "PIU-001-2026", k: good, edit: tamper, keys: keys, reason: wire.ReasonSignatureFailed},
		{name: "old kid", vehicle: "PIU-001", kid: "PIU-001-2019", k: other, keys: keys, want: batchsig.Unverified},
		{name: "old kid, required", vehicle: "PIU-001", kid: "PIU-001-2019", k: good, keys: keys, required: true, reason: wire.ReasonUnknownKey},
		{name: "vehicle without key", vehicle: "PIU-002", kid: "PIU-002-2026", k: other, keys: keys, want: batchsig.Unverified},
		{name: "vehicle without key, required", vehicle: "PIU-002", kid: "PIU-002-2026", k: other, keys: keys, required: true, reason: wire.ReasonUnknownKey},
		{name: "no registry", vehicle: "PIU-001", kid: "PIU-001-2026", k: other, want: batchsig.Unverified},
		{name: "no registry, required", vehicle: "PIU-001", kid: "PIU-001-2026", k: good, required: true, reason: wire.ReasonUnknownKey},
		{name: "no registry, unsigned", vehicle: "PIU-001", want: batchsig.Unsigned},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, p := batch(t, tc.vehicle, tc.kid, tc.k)
			if tc.edit != nil {
				p = tc.edit(p)
				var err error
				if b, err = wire.Decode(wire.TelemetryTopic(tc.vehicle), p, at); err != nil {
					t.Fatal(err)
				}
			}
			got, err := batchsig.Policy{Required: tc.required, Keys: tc.keys}.Check(b, p)
			if r := wire.ReasonOf(err); r != tc.reason {
				t.Fatalf("reason %q (%v), want %q", r, err, tc.reason)
			}
			if err == nil && got != tc.want {
				t.Errorf("outcome %v, want %v", got, tc.want)
			}
		})
	}
}

const registryYAML = `licensees:
  - id: L1
    razao_social: Trenzinho Alegria da Orla Ltda
    cnpj: 11.222.333/0001-81
vehicles:
  - id: PIU-001
    plate: ABC1D23
    licensee: L1
`

func TestRegistryKeysAndWatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "registry.yaml")
	if err := os.WriteFile(path, []byte(registryYAML), 0o600); err != nil {
		t.Fatal(err)
	}
	s, err := registry.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	lookup := batchsig.RegistryKeys(s)
	if _, _, ok := lookup("PIU-001"); ok {
		t.Fatal("a key before one was registered")
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	logs := &logBuffer{}
	go func() {
		defer close(done)
		s.Watch(ctx, 20*time.Millisecond, slog.New(slog.NewTextHandler(logs, nil)))
	}()
	t.Cleanup(func() { cancel(); <-done })

	// Another program registers the key, as monitor vehicle add does: the store sees it.
	pub := key(3).Public().(ed25519.PublicKey)
	other, err := registry.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	v, _ := other.Vehicle("PIU-001")
	v.KeyID, v.PublicKey = "PIU-001-k1", base64.StdEncoding.EncodeToString(pub)
	if _, err := other.PutVehicle(v); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		kid, got, ok := lookup("PIU-001")
		if ok && kid == "PIU-001-k1" && got.Equal(pub) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the watched store did not pick up the new key")
		}
		time.Sleep(10 * time.Millisecond)
	}
	// An invalid file is not taken: once the watcher has judged the edit (it logs either
	// verdict), the previous registry is still the one in use.
	reloads := logs.count("registry reloaded")
	if err := os.WriteFile(path, []byte("vehicles: [{id: 'x y'}]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(20 * time.Second); logs.count("registry file changed but is invalid") == 0 && logs.count("registry reloaded") == reloads; {
		if time.Now().After(deadline) {
			t.Fatalf("the watcher did not judge the invalid edit:\n%s", logs)
		}
		time.Sleep(10 * time.Millisecond)
	}
	if kid, _, ok := lookup("PIU-001"); !ok || kid != "PIU-001-k1" {
		t.Errorf("after an invalid edit: %q %v, want the previous registry kept", kid, ok)
	}
	if batchsig.RegistryKeys(nil) != nil {
		t.Error("a nil store must know no key")
	}
}

// logBuffer is a log destination safe for the watcher's goroutine.
type logBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// count is the number of lines that contain s.
func (l *logBuffer) count(s string) int {
	n := 0
	for _, line := range strings.Split(l.String(), "\n") {
		if strings.Contains(line, s) {
			n++
		}
	}
	return n
}
