package testenv

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/internal/testkit/harness"
)

// Influx is a real InfluxDB 1.8.3 with the Flux endpoint enabled, speaking the v2 write and
// query API through its 1.x compatibility layer (token "user:password", bucket "db/rp").
type Influx struct {
	*harness.Influx
	Database string
}

// StartInflux starts influxd on free loopback ports with an empty database "trenzinho".
func StartInflux(t testing.TB) *Influx {
	t.Helper()
	h, err := harness.StartInflux(context.Background(), RepoRoot(t), t.TempDir(), "")
	need(t, err)
	cleanup(t, h.Process)
	i := &Influx{Influx: h, Database: "trenzinho"}
	if _, err := i.InfluxQL(http.MethodPost, i.Database, "CREATE DATABASE "+i.Database); err != nil {
		t.Fatalf("create database: %v", err)
	}
	return i
}

// Restart starts a stopped or killed influxd again on the same data.
func (i *Influx) Restart(t testing.TB) {
	t.Helper()
	if err := i.Influx.Restart(context.Background()); err != nil {
		t.Fatal(err)
	}
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
	b, err := i.InfluxQL(http.MethodGet, i.Database, q)
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
