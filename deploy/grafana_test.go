package deploy

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// dashboardQuery is one query of a dashboard: a panel's target or a template variable.
type dashboardQuery struct {
	Where      string
	Datasource string // uid
	Flux       string
	PromQL     string
}

// grafanaDashboard is a dashboard file, decoded generically.
type grafanaDashboard struct {
	File    string
	UID     string
	Title   string
	Panels  []map[string]any // every panel, rows' nested panels included
	Queries []dashboardQuery
}

func loadDashboards(t *testing.T) []grafanaDashboard {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(t), "deploy", "grafana", "dashboards")
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []grafanaDashboard
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, parseDashboard(t, filepath.Base(f), b))
	}
	return out
}

func parseDashboard(t *testing.T, name string, b []byte) grafanaDashboard {
	t.Helper()
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	d := grafanaDashboard{File: name}
	d.UID, _ = raw["uid"].(string)
	d.Title, _ = raw["title"].(string)
	uidOf := func(v any) string {
		m, _ := v.(map[string]any)
		s, _ := m["uid"].(string)
		return s
	}
	var walk func(list []any)
	walk = func(list []any) {
		for _, p := range list {
			pm, ok := p.(map[string]any)
			if !ok {
				continue
			}
			d.Panels = append(d.Panels, pm)
			if sub, ok := pm["panels"].([]any); ok {
				walk(sub)
			}
			title, _ := pm["title"].(string)
			panelDS := uidOf(pm["datasource"])
			targets, _ := pm["targets"].([]any)
			for i, tg := range targets {
				tm, _ := tg.(map[string]any)
				q := dashboardQuery{Where: fmt.Sprintf("%s: panel %q target %d", name, title, i), Datasource: panelDS}
				if ds := uidOf(tm["datasource"]); ds != "" {
					q.Datasource = ds
				}
				q.Flux, _ = tm["query"].(string)
				q.PromQL, _ = tm["expr"].(string)
				d.Queries = append(d.Queries, q)
			}
		}
	}
	panels, _ := raw["panels"].([]any)
	walk(panels)
	templating, _ := raw["templating"].(map[string]any)
	vars, _ := templating["list"].([]any)
	for _, v := range vars {
		vm, _ := v.(map[string]any)
		if typ, _ := vm["type"].(string); typ != "query" {
			continue
		}
		q := dashboardQuery{Where: fmt.Sprintf("%s: variable %v", name, vm["name"]), Datasource: uidOf(vm["datasource"])}
		switch s := vm["query"].(type) {
		case string:
			q.Flux = s
		case map[string]any:
			q.Flux, _ = s["query"].(string)
		}
		d.Queries = append(d.Queries, q)
	}
	return d
}

// provisionedDatasources are the data sources' uids by type.
func provisionedDatasources(t *testing.T) map[string]string {
	t.Helper()
	var f struct {
		Datasources []struct {
			UID      string         `yaml:"uid"`
			Type     string         `yaml:"type"`
			URL      string         `yaml:"url"`
			JSONData map[string]any `yaml:"jsonData"`
		} `yaml:"datasources"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/grafana/provisioning/datasources/datasources.yml"), &f); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, ds := range f.Datasources {
		out[ds.UID] = ds.Type
		if ds.Type == "influxdb" && ds.JSONData["version"] != "Flux" {
			t.Errorf("data source %s: jsonData.version %v, want Flux", ds.UID, ds.JSONData["version"])
		}
	}
	return out
}

var (
	fluxMeasurement = regexp.MustCompile(`r\._measurement\s*==\s*"([^"]*)"|measurement:\s*"([^"]*)"`)
	fluxField       = regexp.MustCompile(`r\._field\s*==\s*"([^"]*)"`)
	fluxFieldSet    = regexp.MustCompile(`contains\(\s*value:\s*r\._field\s*,\s*set:\s*\[([^\]]*)\]`)
	fluxFieldOther  = regexp.MustCompile(`r\._field\s*(=~|!=|!~)`)
	fluxColumnRef   = regexp.MustCompile(`\br\.([A-Za-z_][A-Za-z0-9_]*)`)
	fluxTagArg      = regexp.MustCompile(`\btag:\s*"([^"]*)"`)
	fluxColumns     = regexp.MustCompile(`(?:columns|rowKey|columnKey):\s*\[([^\]]*)\]`)
	fluxBucket      = regexp.MustCompile(`\bbucket:\s*([^,)\s]+)`)
	quoted          = regexp.MustCompile(`"([^"]*)"`)
)

// Columns every Flux table has, or that a query makes itself.
var fluxSystemColumns = setOf("_time", "_value", "_field", "_measurement", "_start", "_stop")

// checkFlux reports what is wrong with a Flux query against the schema ingest writes. A panel
// query must name its measurements and fields; a variable's query may name a measurement and a
// tag only.
func checkFlux(q string, schema map[string]measurementSchema, isVariable bool) []string {
	var problems []string
	var ms []string
	for _, m := range fluxMeasurement.FindAllStringSubmatch(q, -1) {
		name := m[1] + m[2]
		if _, ok := schema[name]; !ok {
			problems = append(problems, fmt.Sprintf("measurement %q is not written by ingest", name))
			continue
		}
		ms = append(ms, name)
	}
	var fields []string
	for _, m := range fluxField.FindAllStringSubmatch(q, -1) {
		fields = append(fields, m[1])
	}
	for _, m := range fluxFieldSet.FindAllStringSubmatch(q, -1) {
		for _, f := range quoted.FindAllStringSubmatch(m[1], -1) {
			fields = append(fields, f[1])
		}
	}
	if fluxFieldOther.MatchString(q) {
		problems = append(problems, "a field is selected by a pattern or a negation: name the fields with == or contains()")
	}
	if len(ms) == 0 && len(problems) == 0 {
		problems = append(problems, "names no _measurement")
	}
	if len(fields) == 0 && !isVariable {
		problems = append(problems, "names no _field")
	}
	fieldsOf, tagsOf := map[string]bool{}, map[string]bool{}
	for _, m := range ms {
		for f := range schema[m].Fields {
			fieldsOf[f] = true
		}
		for tg := range schema[m].Tags {
			tagsOf[tg] = true
		}
	}
	for _, f := range fields {
		if !fieldsOf[f] {
			problems = append(problems, fmt.Sprintf("field %q is not written by ingest in %v", f, ms))
		}
	}
	for _, m := range ms {
		hit := len(fields) == 0
		for _, f := range fields {
			hit = hit || schema[m].Fields[f]
		}
		if !hit {
			problems = append(problems, fmt.Sprintf("measurement %s has none of the fields %v", m, fields))
		}
	}
	// Columns: r.X, tag: "X", columns: [...] are system columns, tags or (after a pivot) fields.
	known := func(c string) bool { return fluxSystemColumns[c] || tagsOf[c] || fieldsOf[c] }
	for _, m := range fluxColumnRef.FindAllStringSubmatch(q, -1) {
		if !known(m[1]) {
			problems = append(problems, fmt.Sprintf("column r.%s is neither a tag nor a field of %v", m[1], ms))
		}
	}
	for _, m := range fluxTagArg.FindAllStringSubmatch(q, -1) {
		if !tagsOf[m[1]] {
			problems = append(problems, fmt.Sprintf("tag %q is not written by ingest in %v", m[1], ms))
		}
	}
	for _, m := range fluxColumns.FindAllStringSubmatch(q, -1) {
		for _, c := range quoted.FindAllStringSubmatch(m[1], -1) {
			if !known(c[1]) {
				problems = append(problems, fmt.Sprintf("column %q is neither a tag nor a field of %v", c[1], ms))
			}
		}
	}
	for _, m := range fluxBucket.FindAllStringSubmatch(q, -1) {
		if m[1] != "v.defaultBucket" {
			problems = append(problems, fmt.Sprintf("bucket %s: use v.defaultBucket (the data source's INFLUX_BUCKET)", m[1]))
		}
	}
	// Sound levels are energy quantities: never average decibels (docs/rules.md, "Sound").
	for _, f := range fields {
		if (f == "laeq_db" || f == "lamax_db") && regexp.MustCompile(`fn:\s*mean\b|\|>\s*mean\(`).MatchString(q) {
			pow := strings.Index(q, "math.pow")
			mean := regexp.MustCompile(`fn:\s*mean\b|\|>\s*mean\(`).FindStringIndex(q)[0]
			log := strings.LastIndex(q, "math.log10")
			if pow < 0 || pow > mean || log < mean {
				problems = append(problems, fmt.Sprintf("averages %s arithmetically: convert to energy (math.pow(x: 10.0, y: L/10.0)) before the mean and back (10·math.log10) after", f))
			}
		}
	}
	return problems
}

func TestGrafanaDashboards(t *testing.T) {
	checkDashboards(t, loadDashboards(t), ingestSchema(t), registeredMetrics(t), scrapeJobs(t))
}

func checkDashboards(t *testing.T, dashboards []grafanaDashboard, schema map[string]measurementSchema, jm jobMetrics, jobs map[string]bool) {
	t.Helper()
	ds := provisionedDatasources(t)
	if len(dashboards) < 2 {
		t.Fatalf("%d dashboards, want the fleet and the pipeline dashboards", len(dashboards))
	}
	uids := map[string]bool{}
	byUID := map[string]grafanaDashboard{}
	for _, d := range dashboards {
		if d.UID == "" || d.Title == "" {
			t.Errorf("%s: no uid or title", d.File)
		}
		if uids[d.UID] {
			t.Errorf("%s: uid %s used twice", d.File, d.UID)
		}
		uids[d.UID] = true
		byUID[d.UID] = d
		for _, p := range d.Panels {
			title, _ := p["title"].(string)
			typ, _ := p["type"].(string)
			if title == "" {
				t.Errorf("%s: a %s panel without a title", d.File, typ)
			}
			if typ == "row" || typ == "text" {
				continue
			}
			if desc, _ := p["description"].(string); !portuguese.MatchString(desc) {
				t.Errorf("%s: panel %q: description %q missing or not in Portuguese", d.File, title, desc)
			}
			if dsm, ok := p["datasource"].(map[string]any); ok {
				if uid, _ := dsm["uid"].(string); uid != "" && !strings.HasPrefix(uid, "-- ") {
					if _, ok := ds[uid]; !ok {
						t.Errorf("%s: panel %q: data source %q is not provisioned", d.File, title, uid)
					}
				}
			}
			if targets, _ := p["targets"].([]any); len(targets) == 0 {
				t.Errorf("%s: panel %q has no query", d.File, title)
			}
		}
		for _, q := range d.Queries {
			typ, ok := ds[q.Datasource]
			switch {
			case !ok:
				t.Errorf("%s: data source %q is not provisioned", q.Where, q.Datasource)
			case typ == "influxdb":
				if q.Flux == "" {
					t.Errorf("%s: InfluxDB query without Flux", q.Where)
				}
				for _, p := range checkFlux(q.Flux, schema, strings.Contains(q.Where, "variable")) {
					t.Errorf("%s: %s", q.Where, p)
				}
			case typ == "prometheus":
				for _, p := range checkPromQL(q.PromQL, jm, jobs) {
					t.Errorf("%s: %s", q.Where, p)
				}
			default:
				t.Errorf("%s: data source type %s", q.Where, typ)
			}
		}
	}
	// What each dashboard is for.
	uses := func(uid string, what ...string) {
		d, ok := byUID[uid]
		if !ok {
			t.Errorf("no dashboard %s", uid)
			return
		}
		var all strings.Builder
		for _, q := range d.Queries {
			all.WriteString(q.Flux + "\n" + q.PromQL + "\n")
		}
		for _, w := range what {
			if !strings.Contains(all.String(), w) {
				t.Errorf("dashboard %s shows nothing of %s", uid, w)
			}
		}
	}
	uses("trenzinho-frota", `"speed_kmh"`, `"laeq_db"`, "trenzinho_monitor_open_episodes")
	uses("trenzinho-pipeline", "up{", "trenzinho_ingest_", "trenzinho_monitor_", "trenzinho_monitor_vehicle_online", `"quarantine"`)
}

// TestCheckFlux: the Flux checks find what they are for.
func TestCheckFlux(t *testing.T) {
	schema := ingestSchema(t)
	good := `from(bucket: v.defaultBucket) |> filter(fn: (r) => r._measurement == "tacho" and r._field == "speed_kmh") |> keep(columns: ["_time", "_value", "vehicle"])`
	if p := checkFlux(good, schema, false); len(p) > 0 {
		t.Errorf("good query: %v", p)
	}
	for q, want := range map[string]string{
		`from(bucket: v.defaultBucket) |> filter(fn: (r) => r._measurement == "tachograph" and r._field == "speed_kmh")`:                                  "measurement",
		`from(bucket: v.defaultBucket) |> filter(fn: (r) => r._measurement == "tacho" and r._field == "speed")`:                                           "field",
		`from(bucket: v.defaultBucket) |> filter(fn: (r) => r._measurement == "tacho")`:                                                                   "names no _field",
		`from(bucket: v.defaultBucket) |> filter(fn: (r) => r._field == "speed_kmh")`:                                                                     "names no _measurement",
		`from(bucket: "trenzinho") |> filter(fn: (r) => r._measurement == "tacho" and r._field == "speed_kmh")`:                                           "bucket",
		`from(bucket: v.defaultBucket) |> filter(fn: (r) => r._measurement == "tacho" and r._field == "speed_kmh" and r.driver == "x")`:                   "column r.driver",
		`from(bucket: v.defaultBucket) |> filter(fn: (r) => r._measurement == "sound" and r._field == "laeq_db") |> aggregateWindow(every: 1m, fn: mean)`: "arithmetically",
		`from(bucket: v.defaultBucket) |> filter(fn: (r) => r._measurement == "gps" and r._field =~ /la/)`:                                                "pattern",
	} {
		p := checkFlux(q, schema, false)
		if !strings.Contains(strings.Join(p, "; "), want) {
			t.Errorf("%s: problems %q, want one about %s", q, p, want)
		}
	}
}
