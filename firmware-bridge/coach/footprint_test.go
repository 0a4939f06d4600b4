package coach

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/base64"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
)

// TestFootprintBundle writes, for firmware-bridge/footprint.sh (COACH=1), the configuration
// bundle of the simulated vehicle FP-001 as the monitor would issue it (the Piúma profile, the
// Piúma sample geofences of licensee L1) into the state directory named by
// TRENZINHO_FOOTPRINT_BUNDLE, and its public key beside it (config.key), so that the measured
// bridge runs with the coach active. Skipped otherwise.
func TestFootprintBundle(t *testing.T) {
	dir := os.Getenv("TRENZINHO_FOOTPRINT_BUNDLE")
	if dir == "" {
		t.Skip("TRENZINHO_FOOTPRINT_BUNDLE not set (firmware-bridge/footprint.sh sets it)")
	}
	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	gf, err := configbundle.Geofences(set, "L1")
	if err != nil {
		t.Fatal(err)
	}
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now().UTC().Truncate(time.Second)
	msg, err := configbundle.Sign(&configbundle.Bundle{Format: configbundle.Format, Vehicle: "FP-001", Licensee: "L1",
		Version: uint64(now.Unix()), IssuedAt: now, ValidUntil: now.Add(24 * time.Hour),
		Profile:   configbundle.Profile{ID: "piuma", YAML: string(profile.PiumaYAML())},
		Geofences: gf,
		Settings:  configbundle.Settings{Warnings: configbundle.Warnings{LeadDistanceM: 300, SpeedMarginKmh: 2, VolumeLimiter: true}},
	}, priv)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.bundle"), msg, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "config.key"), []byte(base64.StdEncoding.EncodeToString(pub)), 0o644); err != nil {
		t.Fatal(err)
	}
}
