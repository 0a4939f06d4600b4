package deploy

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http/httptest"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	dto "github.com/prometheus/client_model/go"

	"github.com/trenzinho/trenzinho/firmware-bridge/bridge"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/ingest/archive"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/judge"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// metric is one metric a program registers.
type metric struct {
	Name   string
	Labels map[string]bool            // variable labels
	Values map[string]map[string]bool // label values seen in a scrape (vectors pre-initialised by the program)
	Type   dto.MetricType
	Typed  bool // Type is known (the metric had series in the scrape)
}

// jobMetrics are the metrics of each Prometheus job, by name.
type jobMetrics map[string]map[string]*metric

// recorder registers collectors on a real registry and remembers their descriptions, so that
// vectors without series (nothing observed yet) are known too.
type recorder struct {
	reg   *prometheus.Registry
	descs []*prometheus.Desc
}

func (r *recorder) Register(c prometheus.Collector) error {
	if err := r.reg.Register(c); err != nil {
		return err
	}
	ch := make(chan *prometheus.Desc, 64)
	go func() { c.Describe(ch); close(ch) }()
	for d := range ch {
		r.descs = append(r.descs, d)
	}
	return nil
}

func (r *recorder) MustRegister(cs ...prometheus.Collector) {
	for _, c := range cs {
		if err := r.Register(c); err != nil {
			panic(err)
		}
	}
}

func (r *recorder) Unregister(c prometheus.Collector) bool { return r.reg.Unregister(c) }

var descRE = regexp.MustCompile(`^Desc\{fqName: "([^"]+)", .*variableLabels: \{([^}]*)\}\}$`)

// metrics returns what was registered, with the label values of a scrape.
func (r *recorder) metrics(t testing.TB) map[string]*metric {
	t.Helper()
	out := map[string]*metric{}
	for _, d := range r.descs {
		m := descRE.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot read the metric description %s", d)
		}
		mm := &metric{Name: m[1], Labels: map[string]bool{}, Values: map[string]map[string]bool{}}
		for _, l := range strings.Split(m[2], ",") {
			l = strings.TrimSuffix(strings.TrimPrefix(strings.TrimSpace(l), "c("), ")")
			if l != "" {
				mm.Labels[l] = true
			}
		}
		out[mm.Name] = mm
	}
	mfs, err := r.reg.Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	for _, mf := range mfs {
		mm := out[mf.GetName()]
		if mm == nil {
			mm = &metric{Name: mf.GetName(), Labels: map[string]bool{}, Values: map[string]map[string]bool{}}
			out[mm.Name] = mm
		}
		mm.Type, mm.Typed = mf.GetType(), true
		for _, s := range mf.GetMetric() {
			for _, lp := range s.GetLabel() {
				mm.Labels[lp.GetName()] = true
				if mm.Values[lp.GetName()] == nil {
					mm.Values[lp.GetName()] = map[string]bool{}
				}
				mm.Values[lp.GetName()][lp.GetValue()] = true
			}
		}
	}
	return out
}

func newRecorder() *recorder {
	r := &recorder{reg: prometheus.NewRegistry()}
	// What every program's main registers besides its own metrics.
	r.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	return r
}

var (
	registeredOnce sync.Once
	registered     jobMetrics
	registeredErr  string
)

// registeredMetrics registers the metrics of ingest, the monitor and the bridge the way their
// main functions do (ingest/main.go, monitor/serve.go, firmware-bridge/run.go) — by calling the
// packages' own constructors, not by reading their source — and returns them by Prometheus job.
func registeredMetrics(t *testing.T) jobMetrics {
	t.Helper()
	registeredOnce.Do(func() {
		defer func() {
			if p := recover(); p != nil {
				registeredErr = fmt.Sprint("registering the programs' metrics panicked: ", p)
			}
		}()
		registered = jobMetrics{}
		log := slog.New(slog.NewTextHandler(io.Discard, nil))

		in := newRecorder()
		archive.NewMetrics(in)
		registered["ingest"] = in.metrics(t)

		mon := newRecorder()
		dir := t.TempDir()
		db, err := store.Open(context.Background(), filepath.Join(dir, "monitor.db"))
		if err != nil {
			registeredErr = err.Error()
			return
		}
		t.Cleanup(func() { db.Close() })
		set, err := geofences.Sample()
		if err != nil {
			registeredErr = err.Error()
			return
		}
		engine := rules.New(profile.Piuma(), set)
		hub := api.NewHub(api.HubConfig{Logger: log})
		judge.New(judge.Config{Engine: engine, Store: db, Hub: hub, Logger: log, Metrics: mon, Pruner: db.PruneBatches})
		// The API registers on the *prometheus.Registry it serves, whose collectors cannot be
		// listed: two requests make its request and login counters show in a scrape.
		srv := api.New(api.Config{Logger: log, Users: db, Audit: db, Episodes: db, Drafts: db, Health: db.Ping, Metrics: mon.reg, Hub: hub})
		srv.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("GET", "/healthz", nil))
		srv.Handler().ServeHTTP(httptest.NewRecorder(), httptest.NewRequest("POST", "/api/v1/login",
			strings.NewReader(`{"user":"nobody","password":"wrong-password"}`)))
		registered["monitor"] = mon.metrics(t)
		for _, name := range []string{"trenzinho_monitor_http_requests_total", "trenzinho_monitor_logins_total"} {
			if m := registered["monitor"][name]; m != nil {
				m.Values = map[string]map[string]bool{} // values of two requests, not every value
			}
		}

		br := newRecorder()
		b, err := bridge.Open(bridge.Config{Vehicle: "TEST-001", StateDir: t.TempDir(), Logger: log,
			GPS: &bridge.Device{}, Tacho: &bridge.Device{}, SLM: &bridge.Device{}})
		if err != nil {
			registeredErr = err.Error()
			return
		}
		b.Register(br)
		registered["bridge"] = br.metrics(t)
	})
	if registeredErr != "" {
		t.Fatal(registeredErr)
	}
	return registered
}

// TestRegisteredMetrics: the registration above finds the programs' own metrics (so that the
// checks built on it cannot pass on an empty set).
func TestRegisteredMetrics(t *testing.T) {
	jm := registeredMetrics(t)
	for job, names := range map[string][]string{
		"ingest":  {"trenzinho_ingest_messages_total", "trenzinho_ingest_quarantined_total", "trenzinho_ingest_writes_total", "process_start_time_seconds"},
		"monitor": {"trenzinho_monitor_batches_total", "trenzinho_monitor_commit_seconds", "trenzinho_monitor_http_requests_total", "go_goroutines"},
		"bridge":  {"trenzinho_bridge_spool_depth", "trenzinho_bridge_device_up"},
	} {
		for _, n := range names {
			if jm[job][n] == nil {
				t.Errorf("job %s: %s not registered", job, n)
			}
		}
	}
	if v := jm["ingest"]["trenzinho_ingest_quarantined_total"].Values["reason"]; !v["bad_json"] {
		t.Errorf("ingest's quarantine reasons were not scraped: %v", v)
	}
	if !jm["monitor"]["trenzinho_monitor_batches_total"].Labels["outcome"] {
		t.Error("the monitor's batches_total has no outcome label")
	}
}
