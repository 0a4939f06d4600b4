package harness

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Mosquitto is a real Mosquitto broker configured from deploy/mosquitto/mosquitto.conf.
type Mosquitto struct {
	*Process
	Port int
}

// MosquittoOptions add deployment settings to the repository's configuration.
type MosquittoOptions struct {
	// Extra lines appended after the repository's configuration (password_file, acl_file, …).
	Extra []string
	// Anonymous allows clients without a user name (the default when no password file is given).
	Anonymous bool
	// Bin is the mosquitto program; empty: LookBinary(root, "TRENZINHO_MOSQUITTO", "mosquitto").
	Bin string
}

// StartMosquitto starts a broker on a free loopback port with the configuration of the
// repository at root, and waits until it accepts connections. Its configuration, log and
// persistence are in dir, kept across Stop and Restart.
func StartMosquitto(root, dir string, opts MosquittoOptions) (*Mosquitto, error) {
	bin := opts.Bin
	if bin == "" {
		bin = LookBinary(root, "TRENZINHO_MOSQUITTO", "mosquitto")
	}
	if bin == "" {
		return nil, fmt.Errorf("mosquitto %w (Debian package mosquitto)", ErrMissing)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	conf, err := MosquittoConfig(root, port, dir, opts)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "mosquitto.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		return nil, err
	}
	m := &Mosquitto{Port: port}
	if m.Process, err = Start(Command{Name: "mosquitto", LogFile: filepath.Join(dir, "mosquitto.log"), Argv: []string{bin, "-c", path}}); err != nil {
		return nil, err
	}
	if err := m.wait(); err != nil {
		m.Kill()
		return nil, err
	}
	return m, nil
}

func (m *Mosquitto) wait() error {
	if err := WaitTCP(m.Addr(), 20*time.Second); err != nil {
		return fmt.Errorf("mosquitto: %w\n%s", err, m.Tail(4096))
	}
	return nil
}

// Addr is host:port of the listener.
func (m *Mosquitto) Addr() string { return fmt.Sprintf("127.0.0.1:%d", m.Port) }

// URL is the broker URL for paho.
func (m *Mosquitto) URL() string { return "tcp://" + m.Addr() }

// Restart starts a stopped or killed broker again on the same port and persistence directory.
func (m *Mosquitto) Restart() error {
	if err := m.Start(); err != nil {
		return err
	}
	return m.wait()
}

// MosquittoConfig returns the configuration the tests run: a loopback listener and a
// persistence directory, then the repository's tuned settings verbatim, then opts.Extra.
func MosquittoConfig(root string, port int, dir string, opts MosquittoOptions) (string, error) {
	tuned, err := os.ReadFile(filepath.Join(root, "deploy", "mosquitto", "mosquitto.conf"))
	if err != nil {
		return "", fmt.Errorf("read the repository's mosquitto.conf: %w", err)
	}
	var b strings.Builder
	if os.Getuid() == 0 {
		// Mosquitto drops root privileges to user mosquitto, which cannot write a temporary
		// directory of root's.
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
			continue // the harness captures stdout itself
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
