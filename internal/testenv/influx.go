package testenv

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// Influx is a real InfluxDB 1.8.3 with the Flux endpoint enabled, speaking the v2 write and
// query API through its 1.x compatibility layer (token "user:password", bucket "db/rp").
type Influx struct {
	*Process
	Port     int
	Database string
}

// InfluxVersion is the server the tests and the local run use (docs/storage.md §3).
const InfluxVersion = "v1.8.3"

// StartInflux starts influxd on free loopback ports with an empty database "trenzinho".
func StartInflux(t testing.TB) *Influx {
	t.Helper()
	bin := lookBinary(t, "TRENZINHO_INFLUXD", "influxd")
	if bin == "" {
		Missing(t, "influxd not found (go install github.com/influxdata/influxdb/cmd/influxd@%s into .tools/bin)", InfluxVersion)
	}
	dir := t.TempDir()
	i := &Influx{Port: FreePort(t), Database: "trenzinho"}
	conf := InfluxConfig(dir, FreePort(t), i.Port)
	path := filepath.Join(dir, "influxdb.conf")
	if err := os.WriteFile(path, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	i.Process = StartProcess(t, "influxd", nil, bin, "-config", path)
	i.waitReady(t)
	if _, err := i.influxQL("POST", "CREATE DATABASE "+i.Database); err != nil {
		t.Fatalf("create database: %v", err)
	}
	return i
}

// InfluxConfig is the influxd 1.8 configuration for data under dir, loopback only.
func InfluxConfig(dir string, rpcPort, httpPort int) string {
	return fmt.Sprintf(`reporting-disabled = true
bind-address = "127.0.0.1:%d"
[meta]
  dir = %q
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[http]
  bind-address = "127.0.0.1:%d"
  flux-enabled = true
  log-enabled = false
[logging]
  level = "warn"
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
`, rpcPort, filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), httpPort)
}

func (i *Influx) waitReady(t testing.TB) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(i.URL() + "/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("influxd not ready: %v\n%s", err, trimLog(i.Log()))
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// URL of the HTTP API.
func (i *Influx) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", i.Port) }

// Bucket is the v2-compatible bucket name (db/rp).
func (i *Influx) Bucket() string { return i.Database + "/autogen" }

// Token is the v2-compatible token; authentication is off in tests.
func (i *Influx) Token() string { return "" }

// Restart starts a stopped or killed influxd again on the same data.
func (i *Influx) Restart(t testing.TB) {
	t.Helper()
	if err := i.Start(); err != nil {
		t.Fatal(err)
	}
	i.waitReady(t)
}

func (i *Influx) influxQL(method, q string) ([]byte, error) {
	v := url.Values{"q": {q}, "db": {i.Database}, "epoch": {"ms"}}
	var resp *http.Response
	var err error
	if method == "POST" {
		resp, err = http.PostForm(i.URL()+"/query", v)
	} else {
		resp, err = http.Get(i.URL() + "/query?" + v.Encode())
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("influxql %q: %s: %s", q, resp.Status, b)
	}
	return b, nil
}

// Series is one series of an InfluxQL result.
type Series struct {
	Name    string            `json:"name"`
	Tags    map[string]string `json:"tags"`
	Columns []string          `json:"columns"`
	Values  [][]any           `json:"values"`
}

// Query runs an InfluxQL query and returns the series of its first statement.
func (i *Influx) Query(t testing.TB, q string) []Series {
	t.Helper()
	b, err := i.influxQL("GET", q)
	if err != nil {
		t.Fatal(err)
	}
	var r struct {
		Results []struct {
			Series []Series `json:"series"`
			Error  string   `json:"error"`
		} `json:"results"`
	}
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatalf("influxql %q: %v", q, err)
	}
	if len(r.Results) == 0 {
		return nil
	}
	if r.Results[0].Error != "" {
		t.Fatalf("influxql %q: %s", q, r.Results[0].Error)
	}
	return r.Results[0].Series
}

// Count returns SELECT count(field) FROM measurement [WHERE where], 0 when there are no points.
func (i *Influx) Count(t testing.TB, measurement, field, where string) int {
	t.Helper()
	q := fmt.Sprintf("SELECT count(%q) FROM %q", field, measurement)
	if where != "" {
		q += " WHERE " + where
	}
	s := i.Query(t, q)
	if len(s) == 0 || len(s[0].Values) == 0 {
		return 0
	}
	n, _ := s[0].Values[0][1].(float64)
	return int(n)
}

// Escape quotes a string for an InfluxQL literal.
func Escape(s string) string { return "'" + strings.ReplaceAll(s, "'", `\'`) + "'" }
