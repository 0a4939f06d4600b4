package archive

import (
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

func TestMajorVersion(t *testing.T) {
	for v, want := range map[string]int{"1.8.3": 1, "v2.7.10": 2, "2.7.1-rc0": 2, "v3.0.0": 3, "": 0, "OSS": 0} {
		got, err := majorVersion(v)
		if got != want || (err != nil) != (want == 0) {
			t.Errorf("majorVersion(%q) = %d, %v; want %d", v, got, err, want)
		}
	}
}

func TestSplitBucket(t *testing.T) {
	for in, want := range map[string]string{"db": "db/autogen", "db/rp": "db/rp", "db/": "db/autogen", "/rp": "", "a/b/c": ""} {
		db, rp, err := splitBucket(in)
		got := ""
		if err == nil {
			got = db + "/" + rp
		}
		if got != want {
			t.Errorf("splitBucket(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestInfluxQLDuration(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "INF", DefaultRetention: "43800h", 90 * time.Minute: "90m", 1500 * time.Millisecond: "2s"} {
		if got := influxQLDuration(d); got != want {
			t.Errorf("influxQLDuration(%v) = %s, want %s", d, got, want)
		}
	}
}

// TestOpenInflux1x runs against the real InfluxDB 1.8: version detection, bucket names
// without a retention policy, and creation of a missing database or policy with the retention.
func TestOpenInflux1x(t *testing.T) {
	i := testenv.StartInflux(t)
	ctx := context.Background()
	open := func(bucket string) *Influx {
		t.Helper()
		db, err := OpenInflux(ctx, InfluxConfig{Influx: config.Influx{URL: i.URL(), Bucket: bucket, Org: "ignored"}, Retention: DefaultRetention})
		if err != nil {
			t.Fatalf("OpenInflux(%q): %v", bucket, err)
		}
		t.Cleanup(db.Close)
		return db
	}
	db := open("trenzinho")
	// A release reports "1.8.3"; the test server, built by go install, "unknown".
	if db.Major != 1 || (db.Version != "1.8.3" && db.Version != "unknown") || db.Bucket != "trenzinho/autogen" {
		t.Errorf("got version %q major %d bucket %q", db.Version, db.Major, db.Bucket)
	}
	if err := db.Writer.WriteRecord(ctx, "gps,vehicle=X lat=1,lon=2 1000000000"); err != nil {
		t.Fatal(err)
	}
	if n := i.Count(t, "gps", "lat", ""); n != 1 {
		t.Errorf("count %d after a write", n)
	}

	q := influxQL{hc: http.DefaultClient, base: i.URL()}
	if db := open("fresh"); db.Bucket != "fresh/autogen" {
		t.Errorf("bucket %q", db.Bucket)
	}
	open("fresh") // again: nothing to create
	if db := open("trenzinho/five"); db.Bucket != "trenzinho/five" {
		t.Errorf("bucket %q", db.Bucket)
	}
	for _, c := range []struct{ db, rp string }{{"fresh", "autogen"}, {"trenzinho", "five"}} {
		durations, err := q.column(ctx, "SHOW RETENTION POLICIES ON "+quoteIdent(c.db), c.db, 1)
		if err != nil {
			t.Fatal(err)
		}
		names, _ := q.column(ctx, "SHOW RETENTION POLICIES ON "+quoteIdent(c.db), c.db, 0)
		found := false
		for k, n := range names {
			if n == c.rp {
				found = true
				if durations[k] != "43800h0m0s" {
					t.Errorf("%s/%s: duration %s, want 43800h0m0s", c.db, c.rp, durations[k])
				}
			}
		}
		if !found {
			t.Errorf("%s/%s not created (policies %v)", c.db, c.rp, names)
		}
	}
	if _, err := OpenInflux(ctx, InfluxConfig{Influx: config.Influx{URL: i.URL(), Bucket: "a/b/c"}}); err == nil {
		t.Error("bucket a/b/c accepted")
	}
}

// fake2x emulates the parts of the InfluxDB 2.x API that ingest uses.
type fake2x struct {
	mu      sync.Mutex
	buckets map[string]bool
	created []map[string]any
	writes  []string
	query   []string
}

func (f *fake2x) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	defer f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	switch {
	case r.URL.Path == "/ping":
		w.Header().Set("X-Influxdb-Version", "v2.7.10")
		w.WriteHeader(http.StatusNoContent)
	case r.URL.Path == "/api/v2/buckets" && r.Method == http.MethodGet:
		name := r.URL.Query().Get("name")
		if r.URL.Query().Get("org") != "fleet" || r.Header.Get("Authorization") != "Token secret" {
			http.Error(w, `{"code":"unauthorized","message":"bad org or token"}`, http.StatusUnauthorized)
			return
		}
		if f.buckets[name] {
			fmt.Fprintf(w, `{"buckets":[{"id":"b1","name":%q,"orgID":"o1","retentionRules":[]}]}`, name)
			return
		}
		io.WriteString(w, `{"buckets":[]}`)
	case r.URL.Path == "/api/v2/orgs":
		io.WriteString(w, `{"orgs":[{"id":"0000000000000001","name":"fleet"}]}`)
	case r.URL.Path == "/api/v2/buckets" && r.Method == http.MethodPost:
		var body map[string]any
		json.NewDecoder(r.Body).Decode(&body)
		f.created = append(f.created, body)
		f.buckets[body["name"].(string)] = true
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"id":"b2","name":%q,"orgID":"0000000000000001","retentionRules":[]}`, body["name"])
	case r.URL.Path == "/api/v2/write":
		f.query = append(f.query, r.URL.RawQuery)
		body := io.Reader(r.Body)
		if r.Header.Get("Content-Encoding") == "gzip" {
			zr, err := gzip.NewReader(r.Body)
			if err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			body = zr
		}
		b, _ := io.ReadAll(body)
		f.writes = append(f.writes, string(b))
		w.WriteHeader(http.StatusNoContent)
	default:
		http.NotFound(w, r)
	}
}

func TestOpenInflux2x(t *testing.T) {
	f := &fake2x{buckets: map[string]bool{"existing": true}}
	srv := httptest.NewServer(f)
	defer srv.Close()
	ctx := context.Background()
	cfg := InfluxConfig{Influx: config.Influx{URL: srv.URL, Token: "secret", Org: "fleet", Bucket: "telemetry"}, Retention: DefaultRetention}
	db, err := OpenInflux(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Major != 2 || db.Bucket != "telemetry" {
		t.Errorf("major %d bucket %q", db.Major, db.Bucket)
	}
	if err := db.Writer.WriteRecord(ctx, "gps,vehicle=X lat=1,lon=2 1000000000\n"); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	if len(f.created) != 1 {
		t.Fatalf("created %v", f.created)
	}
	c := f.created[0]
	rules, _ := c["retentionRules"].([]any)
	if c["name"] != "telemetry" || c["orgID"] != "0000000000000001" || len(rules) != 1 ||
		rules[0].(map[string]any)["everySeconds"] != float64(DefaultRetention/time.Second) {
		t.Errorf("created %v", c)
	}
	if len(f.writes) != 1 || !strings.Contains(f.writes[0], "gps,vehicle=X lat=1,lon=2 1000000000") ||
		!strings.Contains(f.query[0], "bucket=telemetry") || !strings.Contains(f.query[0], "org=fleet") || !strings.Contains(f.query[0], "precision=ns") {
		t.Errorf("writes %q query %q", f.writes, f.query)
	}
	f.mu.Unlock()

	cfg.Bucket = "existing"
	db2, err := OpenInflux(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	db2.Close()
	if len(f.created) != 1 {
		t.Error("an existing bucket was created again")
	}
	cfg.Token = "wrong"
	if _, err := OpenInflux(ctx, cfg); err == nil {
		t.Error("a bad token was accepted")
	}
}

// TestRoundTripInflux writes through the archiver into the real InfluxDB and reads back:
// values unrounded, absent fields absent, batches sent in one millisecond kept apart, a
// redelivered batch stored once, quarantined payloads stored verbatim.
func TestRoundTripInflux(t *testing.T) {
	i := testenv.StartInflux(t)
	db, err := OpenInflux(context.Background(), InfluxConfig{Influx: config.Influx{URL: i.URL(), Bucket: "trenzinho"}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	h := start(t, Config{FlushInterval: 10 * time.Millisecond}, db.Writer)

	sent := "2026-11-29T15:00:05.123Z"
	batch := func(seq int, extra string) []byte {
		return fmt.Appendf(nil, `{"v":1,"vehicle":"RT-1","epoch":"e-rt","seq":%d,"sent_at":%q,"clock":"rtc"%s}`, seq, sent, extra)
	}
	readings := `,"gps":[{"t":"2026-11-29T15:00:00.001Z","lat":-20.836712345678901,"lon":-40.72920000000001,"hdop":0.30000000000000004,"sats":0}],` +
		`"tacho":[{"t":"2026-11-29T15:00:00.002Z","odometer_km":9999999.999999998,"card":"a\"b\\c"}]`
	weird := "{\"x\":\"quote \\\" backslash \\\\ newline\n tab\t end\"" // not JSON: no closing brace
	big := []byte("x" + strings.Repeat("é", 40<<10))                    // 80 KiB of UTF-8, cut inside a rune
	in := []*fakeMsg{
		{topic: wire.TelemetryTopic("RT-1"), payload: batch(1, readings)},
		{topic: wire.TelemetryTopic("RT-1"), payload: batch(2, "")},
		{topic: wire.TelemetryTopic("RT-1"), payload: batch(3, "")},
		{topic: wire.TelemetryTopic("RT-1"), payload: batch(1, readings), dup: true},
		{topic: wire.TelemetryTopic("RT-1"), payload: []byte(weird)},
		{topic: wire.TelemetryTopic("RT-1"), payload: big},
	}
	for _, m := range in {
		h.a.Handle(m)
	}
	eventually(t, "all acks", func() bool {
		for _, m := range in {
			if m.acks.Load() != 1 {
				return false
			}
		}
		return true
	})

	if n := i.Count(t, "batch", "seq", "vehicle='RT-1'"); n != 3 {
		t.Errorf("%d batch points, want 3 (seq 1 redelivered, seqs 1-3 sent in one millisecond)", n)
	}
	rows := i.Query(t, `SELECT * FROM gps WHERE vehicle='RT-1'`)
	want := map[string]any{"lat": -20.836712345678901, "lon": -40.72920000000001, "hdop": 0.30000000000000004, "sats": float64(0),
		"clock": "rtc", "course_deg": nil, "speed_kmh": nil, "fix": nil, "alt_m": nil}
	checkRow(t, rows, want)
	checkRow(t, i.Query(t, `SELECT * FROM tacho WHERE vehicle='RT-1'`), map[string]any{
		"odometer_km": 9999999.999999998, "card": `a"b\c`, "speed_kmh": nil})

	q := i.Query(t, `SELECT payload, payload_b64, truncated, bytes FROM quarantine WHERE reason='bad_json' AND vehicle='RT-1' AND bytes < 1000`)
	if len(q) != 1 || len(q[0].Values) != 1 {
		t.Fatalf("want one small bad_json record, got %d series", len(q))
	}
	if got := q[0].Values[0][1]; got != weird {
		t.Errorf("payload read back as %q, want %q", got, weird)
	}
	q = i.Query(t, `SELECT payload, truncated, bytes FROM quarantine WHERE reason='bad_json' AND bytes > 70000`)
	if len(q) != 1 || len(q[0].Values) != 1 {
		t.Fatalf("want one big bad_json record, got %d series", len(q))
	}
	got, _ := q[0].Values[0][1].(string)
	if wantP := string(big[:wire.QuarantineCut-1]); got != wantP || q[0].Values[0][2] != true || q[0].Values[0][3] != float64(len(big)) {
		t.Errorf("big payload: %d bytes read back (want %d), truncated %v, bytes %v", len(got), len(wantP), q[0].Values[0][2], q[0].Values[0][3])
	}
}

// checkRow compares the single row of rows with want (nil: the field must be absent).
func checkRow(t *testing.T, rows []testenv.Series, want map[string]any) {
	t.Helper()
	if len(rows) != 1 || len(rows[0].Values) != 1 {
		t.Fatalf("want one row, got %+v", rows)
	}
	for k, v := range want {
		col := -1
		for c, name := range rows[0].Columns {
			if name == k {
				col = c
			}
		}
		var got any
		if col >= 0 {
			got = rows[0].Values[0][col]
		}
		if got != v {
			t.Errorf("%s = %v (%T), want %v", k, got, got, v)
		}
	}
}
