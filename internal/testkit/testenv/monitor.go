package testenv

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The monitor's first administrator in the tests (TRENZINHO_ADMIN_USER, TRENZINHO_ADMIN_PASSWORD).
const (
	adminUser     = "admin"
	adminPassword = "segredo-de-teste"
)

// Monitor is a monitor process listening on a free loopback port.
type Monitor struct {
	*Process
	URL string // http://127.0.0.1:port
	DB  string // its database
}

// StartMonitor starts bin/monitor (bin from Build) on the broker at mqttURL with its database at
// db (a fresh one when empty), the test administrator and a client id named for the test, then
// env (a later setting wins), and waits until it listens.
func StartMonitor(t testing.TB, bin, mqttURL, db string, env ...string) *Monitor {
	t.Helper()
	if db == "" {
		db = filepath.Join(t.TempDir(), "monitor.db")
	}
	port := FreePort(t)
	m := &Monitor{URL: fmt.Sprintf("http://127.0.0.1:%d", port), DB: db}
	m.Process = StartProcess(t, "monitor", append([]string{
		"TRENZINHO_MQTT_URL=" + mqttURL,
		"TRENZINHO_DB=" + db,
		fmt.Sprintf("TRENZINHO_LISTEN=127.0.0.1:%d", port),
		"TRENZINHO_ADMIN_USER=" + adminUser,
		"TRENZINHO_ADMIN_PASSWORD=" + adminPassword,
		"TRENZINHO_MONITOR_CLIENT_ID=monitor-" + t.Name(),
	}, env...), filepath.Join(bin, "monitor"))
	m.WaitListening(t)
	return m
}

// WaitListening waits until the monitor (started or restarted) accepts connections.
func (m *Monitor) WaitListening(t testing.TB) {
	t.Helper()
	if err := WaitTCP(strings.TrimPrefix(m.URL, "http://"), 60*time.Second); err != nil {
		t.Fatalf("monitor does not listen: %v\n%s", err, m.Tail(4096))
	}
}

// Login logs the test administrator in and returns the session token.
func (m *Monitor) Login(t testing.TB) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"user": adminUser, "password": adminPassword})
	resp, err := http.Post(m.URL+"/api/v1/login", "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var lr struct{ Token string }
	if err := json.NewDecoder(resp.Body).Decode(&lr); err != nil || lr.Token == "" {
		t.Fatalf("login: %s %v", resp.Status, err)
	}
	return lr.Token
}

// Get GETs an API path with the token into out and fails the test unless it answers 200.
func Get(t testing.TB, base, token, path string, out any) {
	t.Helper()
	req, _ := http.NewRequest("GET", base+path, nil)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", path, resp.Status)
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		t.Fatalf("GET %s: %v", path, err)
	}
}
