package deploy

import (
	"fmt"
	"regexp"
	"strings"
	"testing"
	"text/template"

	"go.yaml.in/yaml/v3"
)

type alertRule struct {
	Alert       string            `yaml:"alert"`
	Record      string            `yaml:"record"`
	Expr        string            `yaml:"expr"`
	For         string            `yaml:"for"`
	Labels      map[string]string `yaml:"labels"`
	Annotations map[string]string `yaml:"annotations"`
}

type ruleFile struct {
	Groups []struct {
		Name  string      `yaml:"name"`
		Rules []alertRule `yaml:"rules"`
	} `yaml:"groups"`
}

func loadAlerts(t *testing.T, b []byte) []alertRule {
	t.Helper()
	var f ruleFile
	dec := yaml.NewDecoder(strings.NewReader(string(b)))
	dec.KnownFields(true)
	if err := dec.Decode(&f); err != nil {
		t.Fatalf("alerts.yml: %v", err)
	}
	var out []alertRule
	for _, g := range f.Groups {
		if g.Name == "" || len(g.Rules) == 0 {
			t.Errorf("alerts.yml: group %q without a name or rules", g.Name)
		}
		out = append(out, g.Rules...)
	}
	return out
}

// scrapeJobs are the job names of prometheus.yml.
func scrapeJobs(t *testing.T) map[string]bool {
	t.Helper()
	var prom struct {
		ScrapeConfigs []struct {
			JobName string `yaml:"job_name"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/prometheus/prometheus.yml"), &prom); err != nil {
		t.Fatal(err)
	}
	jobs := map[string]bool{}
	for _, sc := range prom.ScrapeConfigs {
		jobs[sc.JobName] = true
	}
	return jobs
}

// promDuration is Prometheus's duration syntax: 30s, 5m, 1h30m, 2d.
var promDuration = regexp.MustCompile(`^([0-9]+(ms|s|m|h|d|w|y))+$`)

// portuguese: words every pt-BR sentence of the annotations is likely to hold and an English
// one is not.
var portuguese = regexp.MustCompile(`(?i)(\b(de|do|da|dos|das|em|na|nas|nos|ao|aos|por|um|uma|não|há|está|são|sem|com|para|pelo|pela|veículo|veículos|nenhum|minutos)\b|ção|ções)`)

// The alert kinds the deployment must cover, and the metrics that can express each.
var wantAlertKinds = map[string][]string{
	"serviço fora do ar (up == 0)":  {"up"},
	"veículo offline":               {"trenzinho_monitor_vehicle_online", "trenzinho_bridge_batches_acked_total"},
	"spool crescendo":               {"trenzinho_monitor_vehicle_spool_depth", "trenzinho_bridge_spool_depth"},
	"atraso do ingest":              {"trenzinho_ingest_lag_seconds_bucket"},
	"taxa de quarentena":            {"trenzinho_ingest_quarantined_total"},
	"erros de gravação no InfluxDB": {"trenzinho_ingest_writes_total", "trenzinho_ingest_influx_up"},
	"erros de gravação do monitor":  {"trenzinho_monitor_commit_seconds_bucket", "trenzinho_monitor_commit_errors_total"},
	"monitor reiniciando (commit)":  {"process_start_time_seconds"},
	"monitor sem telemetria":        {"trenzinho_monitor_batches_total"},
	"ingest desconectado do broker": {"trenzinho_ingest_mqtt_up"},
}

func TestAlertRules(t *testing.T) {
	checkAlertRules(t, readFile(t, "deploy/prometheus/alerts.yml"), registeredMetrics(t), scrapeJobs(t))
}

func checkAlertRules(t *testing.T, b []byte, jm jobMetrics, jobs map[string]bool) {
	t.Helper()
	rules := loadAlerts(t, b)
	if len(rules) == 0 {
		t.Fatal("alerts.yml: no rules")
	}
	names := map[string]bool{}
	used := map[string]bool{}
	for _, r := range rules {
		where := "alert " + r.Alert
		if r.Alert == "" {
			t.Errorf("alerts.yml: a rule without alert: (record %q)", r.Record)
			continue
		}
		if names[r.Alert] {
			t.Errorf("%s: name used twice", where)
		}
		names[r.Alert] = true
		if !promDuration.MatchString(r.For) {
			t.Errorf("%s: for: %q, want a duration such as 5m", where, r.For)
		}
		switch r.Labels["severity"] {
		case "critical", "warning":
		default:
			t.Errorf("%s: severity %q, want critical or warning", where, r.Labels["severity"])
		}
		for _, k := range []string{"summary", "description"} {
			text := r.Annotations[k]
			switch {
			case strings.TrimSpace(text) == "":
				t.Errorf("%s: no %s", where, k)
			case !portuguese.MatchString(text):
				t.Errorf("%s: %s %q does not read as Portuguese (the person on call reads pt-BR)", where, k, text)
			}
			if err := renderAnnotation(text); err != nil {
				t.Errorf("%s: %s: %v", where, k, err)
			}
		}
		for _, p := range checkPromQL(r.Expr, jm, jobs) {
			t.Errorf("%s: %s", where, p)
		}
		sels, _ := promSelectors(r.Expr)
		for _, s := range sels {
			used[s.Metric] = true
		}
	}
	for kind, metrics := range wantAlertKinds {
		ok := false
		for _, m := range metrics {
			ok = ok || used[m]
		}
		if !ok {
			t.Errorf("no alert for %s (none uses %v)", kind, metrics)
		}
	}
}

// renderAnnotation executes an annotation as Prometheus does: a Go template with $labels,
// $value and Prometheus's functions.
func renderAnnotation(text string) error {
	funcs := template.FuncMap{}
	for _, f := range []string{"humanize", "humanize1024", "humanizeDuration", "humanizePercentage", "humanizeTimestamp", "title", "toUpper", "toLower", "reReplaceAll", "args", "safeHtml", "match", "graphLink", "tableLink", "query", "first", "label", "value", "sortByLabel", "strvalue", "pathPrefix", "externalURL", "parseDuration", "toTime"} {
		funcs[f] = func(args ...any) string { return fmt.Sprint(args...) }
	}
	prefix := `{{$labels := .Labels}}{{$externalLabels := .ExternalLabels}}{{$value := .Value}}`
	tpl, err := template.New("annotation").Option("missingkey=zero").Funcs(funcs).Parse(prefix + text)
	if err != nil {
		return err
	}
	var out strings.Builder
	return tpl.Execute(&out, map[string]any{
		"Labels":         map[string]string{"job": "monitor", "instance": "monitor:8080", "vehicle": "PIU-001", "device": "tacho", "reason": "bad_json"},
		"ExternalLabels": map[string]string{},
		"Value":          1.5,
	})
}
