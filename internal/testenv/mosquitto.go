package testenv

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Mosquitto is a real Mosquitto broker configured from deploy/mosquitto/mosquitto.conf.
type Mosquitto struct {
	*Process
	Port int
	Dir  string // persistence directory, kept across Stop/Start
}

// MosquittoOptions add deployment settings to the repository's configuration.
type MosquittoOptions struct {
	// Extra lines appended after the repository's configuration (password_file, acl_file, …).
	Extra []string
	// Anonymous allows clients without a user name (the default when no password file is given).
	Anonymous bool
}

// StartMosquitto starts a broker on a free loopback port.
func StartMosquitto(t testing.TB, opts MosquittoOptions) *Mosquitto {
	t.Helper()
	bin := lookBinary(t, "TRENZINHO_MOSQUITTO", "mosquitto")
	if bin == "" {
		Missing(t, "mosquitto not found (Debian package mosquitto)")
	}
	dir := t.TempDir()
	port := FreePort(t)
	conf, err := MosquittoConfig(RepoRoot(t), port, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	m := &Mosquitto{Port: port, Dir: dir}
	m.Process = StartProcess(t, "mosquitto", nil, bin, "-c", path)
	if err := m.wait(); err != nil {
		t.Fatalf("mosquitto: %v\n%s", err, trimLog(m.Log()))
	}
	return m
}

func (m *Mosquitto) wait() error {
	return WaitTCP(m.Addr(), 20*time.Second)
}

// Addr is host:port of the listener.
func (m *Mosquitto) Addr() string { return fmt.Sprintf("127.0.0.1:%d", m.Port) }

// URL is the broker URL for paho.
func (m *Mosquitto) URL() string { return "tcp://" + m.Addr() }

// Restart starts a stopped or killed broker again on the same port and persistence directory.
func (m *Mosquitto) Restart(t testing.TB) {
	t.Helper()
	if err := m.Start(); err != nil {
		t.Fatal(err)
	}
	if err := m.wait(); err != nil {
		t.Fatalf("mosquitto restart: %v\n%s", err, trimLog(m.Log()))
	}
}

// MosquittoConfig returns the configuration the tests run: a loopback listener and a
// persistence directory, then the repository's tuned settings verbatim, then opts.Extra.
func MosquittoConfig(root string, port int, dir string, opts MosquittoOptions) (string, error) {
	tuned, err := os.ReadFile(filepath.Join(root, "deploy", "mosquitto", "mosquitto.conf"))
	if err != nil {
		return "", fmt.Errorf("read the repository's mosquitto.conf: %w", err)
	}
	var b strings.Builder
	if isRoot() {
		// Mosquitto drops root privileges to user mosquitto, which cannot write t.TempDir().
		b.WriteString("user root\n")
	}
	fmt.Fprintf(&b, "listener %d 127.0.0.1\n", port)
	fmt.Fprintf(&b, "persistence_location %s/\n", dir)
	anonymous := opts.Anonymous || !hasPasswordFile(opts.Extra)
	fmt.Fprintf(&b, "allow_anonymous %v\n", anonymous)
	sc := bufio.NewScanner(strings.NewReader(string(tuned)))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "log_dest") {
			continue // the test captures stdout itself
		}
		b.WriteString(sc.Text())
		b.WriteByte('\n')
	}
	b.WriteString("log_dest stdout\n")
	for _, l := range opts.Extra {
		b.WriteString(l)
		b.WriteByte('\n')
	}
	return b.String(), nil
}

func hasPasswordFile(lines []string) bool {
	for _, l := range lines {
		if strings.HasPrefix(strings.TrimSpace(l), "password_file") {
			return true
		}
	}
	return false
}
