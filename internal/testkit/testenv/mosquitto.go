package testenv

import (
	"testing"

	"github.com/trenzinho/trenzinho/internal/testkit/harness"
)

// Mosquitto is a real Mosquitto broker configured from deploy/mosquitto/mosquitto.conf.
type Mosquitto struct{ *harness.Mosquitto }

// MosquittoOptions add deployment settings to the repository's configuration.
type MosquittoOptions = harness.MosquittoOptions

// StartMosquitto starts a broker on a free loopback port.
func StartMosquitto(t testing.TB, opts MosquittoOptions) *Mosquitto {
	t.Helper()
	m, err := harness.StartMosquitto(RepoRoot(t), t.TempDir(), opts)
	need(t, err)
	cleanup(t, m.Process)
	return &Mosquitto{m}
}

// Restart starts a stopped or killed broker again on the same port and persistence directory.
func (m *Mosquitto) Restart(t testing.TB) {
	t.Helper()
	if err := m.Mosquitto.Restart(); err != nil {
		t.Fatal(err)
	}
}
