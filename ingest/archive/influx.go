package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api"
	"github.com/influxdata/influxdb-client-go/v2/domain"

	"github.com/trenzinho/trenzinho/config"
)

// InfluxConfig are the InfluxDB settings of ingest.
type InfluxConfig struct {
	config.Influx
	// Retention of a bucket (2.x) or retention policy (1.x) that ingest creates; 0 keeps the
	// data for ever. An existing bucket or policy is never changed.
	Retention time.Duration
	// Timeout of one HTTP request (10s).
	Timeout time.Duration
	// Gzip compresses the write requests. Off by default: InfluxDB is usually on the same host
	// or network, where compressing cost ingest 20–36% more CPU per reading and delays every write
	// (docs/benchmarks.md); turn it on for an InfluxDB behind a slow or metered link.
	Gzip bool
}

// DefaultRetention is five years.
const DefaultRetention = 5 * 365 * 24 * time.Hour

// Influx is an InfluxDB server prepared for writing: its version found out, its bucket (2.x)
// or database and retention policy (1.x) created when missing.
type Influx struct {
	// Version as the server reports it ("1.8.3", "v2.7.10").
	Version string
	// Major version: 1 or 2 (or later, which speaks the 2.x API).
	Major int
	// Bucket written to: the 2.x bucket, or db/rp for 1.x.
	Bucket string
	// Writer is the blocking write API for Bucket.
	Writer api.WriteAPIBlocking

	client influxdb2.Client
}

// Close releases the client's idle connections.
func (i *Influx) Close() { i.client.Close() }

// OpenInflux finds out the server's version and prepares its bucket. It tries once; the caller
// retries.
func OpenInflux(ctx context.Context, cfg InfluxConfig) (*Influx, error) {
	if cfg.URL == "" {
		return nil, errors.New("InfluxDB URL is empty (TRENZINHO_INFLUX_URL)")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	base := strings.TrimRight(cfg.URL, "/")
	hc := &http.Client{Timeout: cfg.Timeout}
	version, major, err := serverVersion(ctx, hc, base)
	if err != nil {
		return nil, err
	}
	i := &Influx{Version: version, Major: major}
	if major == 1 {
		i.Bucket, err = ensureDatabase(ctx, hc, base, cfg)
	} else {
		i.Bucket = cfg.Bucket
		err = ensureBucket(ctx, base, cfg)
	}
	if err != nil {
		return nil, err
	}
	i.client = newClient(base, cfg)
	i.Writer = i.client.WriteAPIBlocking(cfg.Org, i.Bucket)
	return i, nil
}

func newClient(base string, cfg InfluxConfig) influxdb2.Client {
	opts := influxdb2.DefaultOptions().
		SetUseGZip(cfg.Gzip).
		SetPrecision(time.Nanosecond).
		SetHTTPRequestTimeout(uint(max(1, cfg.Timeout/time.Second))).
		SetApplicationName("trenzinho-ingest")
	return influxdb2.NewClientWithOptions(base, cfg.Token, opts)
}

// serverVersion asks /ping for the X-Influxdb-Version header (1.x and 2.x both send it, /health
// when it is missing). A server built without a version ("unknown", as `go install` builds
// 1.8) is told by its API instead: only 2.x serves /api/v2/setup.
func serverVersion(ctx context.Context, hc *http.Client, base string) (string, int, error) {
	resp, err := get(ctx, hc, base+"/ping")
	if err != nil {
		return "", 0, fmt.Errorf("InfluxDB ping: %w", err)
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return "", 0, fmt.Errorf("InfluxDB ping: %s", resp.Status)
	}
	version := resp.Header.Get("X-Influxdb-Version")
	if version == "" {
		resp, err := get(ctx, hc, base+"/health")
		if err != nil {
			return "", 0, fmt.Errorf("InfluxDB health: %w", err)
		}
		var h struct {
			Version string `json:"version"`
		}
		err = json.NewDecoder(resp.Body).Decode(&h)
		resp.Body.Close()
		if err != nil {
			return "", 0, fmt.Errorf("InfluxDB health: %s: %w", resp.Status, err)
		}
		version = h.Version
	}
	if major, err := majorVersion(version); err == nil {
		return version, major, nil
	}
	resp, err = get(ctx, hc, base+"/api/v2/setup")
	if err != nil {
		return "", 0, fmt.Errorf("InfluxDB setup: %w", err)
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case http.StatusNotFound:
		return version, 1, nil
	case http.StatusOK:
		return version, 2, nil
	}
	return "", 0, fmt.Errorf("InfluxDB reports version %q and GET /api/v2/setup %s: cannot tell 1.x from 2.x", version, resp.Status)
}

func get(ctx context.Context, hc *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	// The caller closes the body; what it does not read is small.
	return resp, nil
}

// majorVersion parses "1.8.3", "v2.7.10" or "2.7.10-rc1".
func majorVersion(v string) (int, error) {
	s := strings.TrimPrefix(strings.TrimSpace(v), "v")
	s, _, _ = strings.Cut(s, ".")
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("InfluxDB reports version %q: cannot tell 1.x from 2.x", v)
	}
	return n, nil
}

// splitBucket parses a 1.x bucket "db" or "db/rp"; the policy defaults to autogen.
func splitBucket(bucket string) (db, rp string, err error) {
	db, rp, _ = strings.Cut(bucket, "/")
	if rp == "" {
		rp = "autogen"
	}
	if db == "" || strings.Contains(rp, "/") {
		return "", "", fmt.Errorf("InfluxDB 1.x bucket %q: want db or db/rp", bucket)
	}
	return db, rp, nil
}

// ensureDatabase creates the 1.x database and retention policy when missing and returns the
// bucket db/rp.
func ensureDatabase(ctx context.Context, hc *http.Client, base string, cfg InfluxConfig) (string, error) {
	db, rp, err := splitBucket(cfg.Bucket)
	if err != nil {
		return "", err
	}
	q := influxQL{hc: hc, base: base, token: cfg.Token}
	dbs, err := q.column(ctx, "SHOW DATABASES", "", 0)
	if err != nil {
		return "", err
	}
	dur := influxQLDuration(cfg.Retention)
	if !contains(dbs, db) {
		stmt := fmt.Sprintf("CREATE DATABASE %s WITH DURATION %s NAME %s", quoteIdent(db), dur, quoteIdent(rp))
		if _, err := q.column(ctx, stmt, "", 0); err != nil {
			return "", err
		}
		return db + "/" + rp, nil
	}
	rps, err := q.column(ctx, "SHOW RETENTION POLICIES ON "+quoteIdent(db), db, 0)
	if err != nil {
		return "", err
	}
	if !contains(rps, rp) {
		stmt := fmt.Sprintf("CREATE RETENTION POLICY %s ON %s DURATION %s REPLICATION 1", quoteIdent(rp), quoteIdent(db), dur)
		if _, err := q.column(ctx, stmt, db, 0); err != nil {
			return "", err
		}
	}
	return db + "/" + rp, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// influxQLDuration formats a retention: INF for 0, else in the largest whole unit.
func influxQLDuration(d time.Duration) string {
	switch {
	case d <= 0:
		return "INF"
	case d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	default:
		return fmt.Sprintf("%ds", (d+time.Second-1)/time.Second)
	}
}

func quoteIdent(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

// influxQL runs statements on the 1.x /query endpoint; the token user:password is sent as basic
// authentication.
type influxQL struct {
	hc    *http.Client
	base  string
	token string
}

// column runs stmt and returns column col of every row of its first series.
func (q influxQL) column(ctx context.Context, stmt, db string, col int) ([]string, error) {
	form := url.Values{"q": {stmt}}
	if db != "" {
		form.Set("db", db)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, q.base+"/query", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, fmt.Errorf("InfluxQL %s: %w", stmt, err)
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if user, pass, ok := strings.Cut(q.token, ":"); ok {
		req.SetBasicAuth(user, pass)
	}
	resp, err := q.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("InfluxQL %s: %w", stmt, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, fmt.Errorf("InfluxQL %s: %w", stmt, err)
	}
	var r struct {
		Results []struct {
			Error  string `json:"error"`
			Series []struct {
				Values [][]any `json:"values"`
			} `json:"series"`
		} `json:"results"`
		Error string `json:"error"`
	}
	if err := json.Unmarshal(body, &r); err != nil || resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("InfluxQL %s: %s: %s", stmt, resp.Status, strings.TrimSpace(string(body)))
	}
	if r.Error != "" {
		return nil, fmt.Errorf("InfluxQL %s: %s", stmt, r.Error)
	}
	var out []string
	for _, res := range r.Results {
		if res.Error != "" {
			return nil, fmt.Errorf("InfluxQL %s: %s", stmt, res.Error)
		}
		for _, s := range res.Series {
			for _, row := range s.Values {
				if col < len(row) {
					if v, ok := row[col].(string); ok {
						out = append(out, v)
					}
				}
			}
		}
	}
	return out, nil
}

// ensureBucket creates the 2.x bucket in the organisation when it is missing.
func ensureBucket(ctx context.Context, base string, cfg InfluxConfig) error {
	c := newClient(base, cfg)
	defer c.Close()
	params := &domain.GetBucketsParams{Name: &cfg.Bucket, Org: &cfg.Org}
	resp, err := c.APIClient().GetBuckets(ctx, params)
	if err != nil {
		return fmt.Errorf("InfluxDB find bucket %q in org %q: %w", cfg.Bucket, cfg.Org, err)
	}
	if resp.Buckets != nil && len(*resp.Buckets) > 0 {
		return nil
	}
	org, err := c.OrganizationsAPI().FindOrganizationByName(ctx, cfg.Org)
	if err != nil {
		return fmt.Errorf("InfluxDB find org %q: %w", cfg.Org, err)
	}
	expire := domain.RetentionRuleTypeExpire
	rule := domain.RetentionRule{Type: &expire, EverySeconds: int64(max(0, cfg.Retention) / time.Second)}
	if _, err := c.BucketsAPI().CreateBucketWithName(ctx, org, cfg.Bucket, rule); err != nil {
		return fmt.Errorf("InfluxDB create bucket %q in org %q: %w", cfg.Bucket, cfg.Org, err)
	}
	return nil
}
