package deploy

import (
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// expectedAbsent are the host directories docker-compose.yml mounts that the operator creates
// (deploy/init-secrets.sh makes both): they hold a private key and passwords, so they are not in
// the repository. Each must be named in .env.example and in docs/operations.md.
var expectedAbsent = []string{"certs/mosquitto", "secrets/mosquitto"}

// wantServices are the services of the deployment.
var wantServices = []string{"grafana", "influxdb", "ingest", "monitor", "mosquitto", "prometheus"}

func TestComposeServices(t *testing.T) {
	c := loadCompose(t)
	var names []string
	for n := range c.Services {
		names = append(names, n)
	}
	sort.Strings(names)
	if !slices.Equal(names, wantServices) {
		t.Errorf("services %v, want %v", names, wantServices)
	}
	for _, name := range names {
		s := c.Services[name]
		switch r, _ := s["restart"].(string); r {
		case "always", "unless-stopped", "on-failure":
		default:
			t.Errorf("service %s: restart %q, want always, unless-stopped or on-failure", name, r)
		}
		hc, _ := s["healthcheck"].(map[string]any)
		test := stringList(hc["test"])
		switch {
		case hc == nil:
			t.Errorf("service %s: no healthcheck", name)
		case len(test) < 2 || (test[0] != "CMD" && test[0] != "CMD-SHELL"):
			t.Errorf("service %s: healthcheck test %q: want [CMD …] or [CMD-SHELL …]", name, test)
		case hc["disable"] == true:
			t.Errorf("service %s: healthcheck disabled", name)
		}
		for _, k := range []string{"interval", "timeout", "retries"} {
			if hc != nil && hc[k] == nil {
				t.Errorf("service %s: healthcheck without %s", name, k)
			}
		}
		for _, k := range []string{"interval", "timeout", "start_period"} {
			if v, ok := hc[k].(string); ok {
				if _, err := time.ParseDuration(v); err != nil {
					t.Errorf("service %s: healthcheck %s %q: %v", name, k, v, err)
				}
			}
		}
		// Logs rotate: the deployment runs for years.
		lg, _ := s["logging"].(map[string]any)
		opts, _ := lg["options"].(map[string]any)
		if lg == nil || opts["max-size"] == nil || opts["max-file"] == nil {
			t.Errorf("service %s: no log rotation (logging.options max-size and max-file)", name)
		}
		img, _ := s["image"].(string)
		switch {
		case img == "":
			t.Errorf("service %s: no image", name)
		case s["build"] != nil && !strings.Contains(img, "${APP_VERSION"):
			t.Errorf("service %s: built image %q should be tagged with ${APP_VERSION}", name, img)
		case !strings.Contains(img, ":") || strings.HasSuffix(img, ":latest"):
			t.Errorf("service %s: image %q is not pinned to a version", name, img)
		}
		deps, _ := s["depends_on"].(map[string]any)
		for dep, v := range deps {
			if _, ok := c.Services[dep]; !ok {
				t.Errorf("service %s depends on unknown service %s", name, dep)
			}
			if cond, _ := v.(map[string]any)["condition"].(string); cond != "service_healthy" {
				t.Errorf("service %s: depends on %s with condition %q, want service_healthy", name, dep, cond)
			}
		}
	}
}

func TestComposeVolumes(t *testing.T) {
	c := loadCompose(t)
	env := loadEnvExample(t).Values
	used := map[string]bool{}
	var missing []string
	for _, name := range sortedKeys(c.Services) {
		for _, m := range c.mounts(t, name) {
			if !strings.HasPrefix(m.Target, "/") {
				t.Errorf("service %s: mount target %q is not absolute", name, m.Target)
			}
			if !m.Bind {
				if _, ok := c.Volumes[m.Source]; !ok {
					t.Errorf("service %s: named volume %s is not declared under volumes:", name, m.Source)
				}
				used[m.Source] = true
				continue
			}
			src, _, err := interpolate(m.Source, env)
			if err != nil {
				t.Errorf("service %s: volume %s: %v", name, m.Source, err)
				continue
			}
			if filepath.IsAbs(src) {
				t.Errorf("service %s: host path %s (from .env.example) is absolute: the default must be in the checkout", name, src)
				continue
			}
			rel := filepath.ToSlash(filepath.Clean(src))
			if strings.HasPrefix(rel, "../") {
				t.Errorf("service %s: host path %s leaves the checkout", name, src)
			}
			if !exists(t, rel) {
				missing = append(missing, rel)
			}
			// Configuration from the repository is mounted read-only.
			if !m.ReadOnly {
				t.Errorf("service %s: bind mount %s is writable: mount configuration :ro", name, m.Source)
			}
		}
		if b, ok := c.Services[name]["build"].(map[string]any); ok {
			ctx, _ := b["context"].(string)
			df, _ := b["dockerfile"].(string)
			if df == "" {
				df = "Dockerfile"
			}
			if !exists(t, ctx) || !exists(t, filepath.Join(ctx, df)) {
				t.Errorf("service %s: build context %q or its %s is missing", name, ctx, df)
			}
		}
	}
	sort.Strings(missing)
	missing = slices.Compact(missing)
	if !slices.Equal(missing, expectedAbsent) {
		t.Errorf("host paths missing from the checkout: %q, want exactly the operator-made %q", missing, expectedAbsent)
	}
	for name := range c.Volumes {
		if !used[name] {
			t.Errorf("volume %s is declared but no service mounts it", name)
		}
	}
	envText := string(readFile(t, ".env.example"))
	ops := string(readFile(t, "docs/operations.md"))
	for _, dir := range expectedAbsent {
		if !strings.Contains(envText, "./"+dir) {
			t.Errorf(".env.example does not document the operator-made directory ./%s", dir)
		}
		if !strings.Contains(ops, dir) {
			t.Errorf("docs/operations.md does not document the operator-made directory %s", dir)
		}
	}
}

// secretKey names settings that hold a secret.
var secretKey = regexp.MustCompile(`(?i)pass(word|wd)?|token|secret|private_?key`)

// requiredRef is a whole value that is one ${NAME:?message} reference.
var requiredRef = regexp.MustCompile(`^\$\{([A-Z][A-Z0-9_]*):\?[^}]*\}$`)

// plainRef is a whole value that is one ${NAME} reference (empty allowed).
var plainRef = regexp.MustCompile(`^\$\{([A-Z][A-Z0-9_]*)\}$`)

// optionalSecrets are the secrets of optional features: empty turns the feature off (a
// notification channel the file does not configure, the 156 system's API), so they are plain
// ${NAME} references; the monitor refuses to start when a channel its notifications file
// configures lacks its secret.
var optionalSecrets = map[string]bool{"SMTP_PASSWORD": true, "TELEGRAM_TOKEN": true, "VAPID_PRIVATE_KEY": true, "COMPLAINTS_TOKEN": true}

func TestComposeNoInlineSecrets(t *testing.T) {
	c := loadCompose(t)
	env := loadEnvExample(t)
	checked := map[string]bool{}
	check := func(where, value string) {
		m := requiredRef.FindStringSubmatch(value)
		if o := plainRef.FindStringSubmatch(value); o != nil && optionalSecrets[o[1]] {
			m = o
		}
		if m == nil {
			t.Errorf("%s: %q: a secret must be exactly one ${VAR:?message} reference to .env", where, value)
			return
		}
		checked[m[1]] = true
		if v := env.Values[m[1]]; v != "" {
			t.Errorf("%s: .env.example ships a value for the secret %s (%q): leave it empty", where, m[1], v)
		}
	}
	n := 0
	for _, name := range sortedKeys(c.Services) {
		for k, v := range c.environment(t, name) {
			if secretKey.MatchString(k) {
				check(fmt.Sprintf("service %s: environment %s", name, k), v)
				n++
			}
		}
		// Passwords on command lines: mosquitto_sub -P, --password=…
		hc, _ := c.Services[name]["healthcheck"].(map[string]any)
		for _, args := range [][]string{stringList(c.Services[name]["command"]), stringList(hc["test"])} {
			for i, a := range args {
				if (a == "-P" || a == "--pw" || a == "--password" || a == "-p:") && i+1 < len(args) {
					check(fmt.Sprintf("service %s: argument %s", name, a), args[i+1])
					n++
				}
				if k, v, ok := strings.Cut(a, "="); ok && strings.HasPrefix(k, "-") && secretKey.MatchString(k) {
					check(fmt.Sprintf("service %s: argument %s", name, k), v)
					n++
				}
			}
		}
	}
	// Every secret of .env.example is used where this test looks.
	for _, name := range env.Names {
		if secretKey.MatchString(name) && !checked[name] {
			t.Errorf(".env.example: the secret %s is not used by any setting this test checks (%d checked)", name, n)
		}
	}
}

func TestComposeVariablesMatchEnvExample(t *testing.T) {
	c := loadCompose(t)
	env := loadEnvExample(t)
	used := map[string]bool{}
	walkStrings(c.Raw, "", func(at, s string) {
		refs, err := references(s)
		if err != nil {
			t.Errorf("%s: %v", at, err)
		}
		for _, r := range refs {
			used[r.Name] = true
			if strings.HasPrefix(r.Op, ":-") || r.Op == "-" {
				t.Errorf("%s: ${%s%s…}: put the default in .env.example, not in the compose file", at, r.Name, r.Op)
			}
		}
	})
	for name := range used {
		if _, ok := env.Values[name]; !ok {
			t.Errorf("docker-compose.yml uses ${%s}, which .env.example does not set", name)
		}
	}
	for _, name := range env.Names {
		if !used[name] {
			t.Errorf(".env.example sets %s, which docker-compose.yml does not use", name)
		}
	}
	// ingest parses the retention with Go's time.ParseDuration (InfluxDB accepts more units).
	if _, err := time.ParseDuration(env.Values["INFLUX_RETENTION"]); err != nil {
		t.Errorf(".env.example: INFLUX_RETENTION: %v", err)
	}
	// A boolean the programs parse must not be empty (strconv.ParseBool("") fails at start).
	for _, name := range []string{"REQUIRE_SIGNATURES", "MONITOR_SECURE_COOKIE"} {
		if v := env.Values[name]; v != "true" && v != "false" {
			t.Errorf(".env.example: %s=%q, want true or false", name, v)
		}
	}
}

// TestComposeContainerPaths: the paths the programs are configured with inside their
// containers are mounted, from files that exist.
func TestComposeContainerPaths(t *testing.T) {
	c := loadCompose(t)
	env := loadEnvExample(t).Values
	want := func(svc, containerPath string, wantDir bool) {
		t.Helper()
		r, ok := c.resolve(t, svc, containerPath, env)
		switch {
		case !ok && wantDir && c.holdsMounts(t, svc, containerPath):
			// A directory made by the mounts inside it (include_dir of the tuned file).
		case !ok:
			t.Errorf("service %s: %s is not in any mount", svc, containerPath)
		case r.Volume != "":
		case slices.ContainsFunc(expectedAbsent, func(d string) bool { return r.HostRel == d || strings.HasPrefix(r.HostRel, d+"/") }):
		default:
			fi, err := os.Stat(filepath.Join(testenv.RepoRoot(t), r.HostRel))
			if err != nil {
				t.Errorf("service %s: %s comes from %s, which does not exist", svc, containerPath, r.HostRel)
			} else if fi.IsDir() != wantDir {
				t.Errorf("service %s: %s comes from %s: directory %v, want %v", svc, containerPath, r.HostRel, fi.IsDir(), wantDir)
			}
		}
	}

	// The broker: its -c file, and every file its configuration names.
	cmd := stringList(c.Services["mosquitto"]["command"])
	if i := slices.Index(cmd, "-c"); i < 0 || i+1 >= len(cmd) {
		t.Errorf("mosquitto: command %q has no -c CONFIG", cmd)
	} else {
		want("mosquitto", cmd[i+1], false)
	}
	for _, d := range mosquittoDirectives(t, readFile(t, "deploy/mosquitto/compose.conf")) {
		switch d.Name {
		case "cafile", "certfile", "keyfile", "password_file", "acl_file":
			want("mosquitto", d.Value, false)
		case "include_dir", "persistence_location":
			want("mosquitto", strings.TrimSuffix(d.Value, "/"), true)
		}
	}
	if r, _ := c.resolve(t, "mosquitto", "/mosquitto/data", env); r.Volume == "" {
		t.Error("mosquitto: its persistence directory is not a named volume")
	}

	// ingest and monitor.
	me := c.environment(t, "monitor")
	want("monitor", me["TRENZINHO_GEOFENCES"], true)
	want("monitor", filepath.Dir(me["TRENZINHO_DB"]), true)
	if r, _ := c.resolve(t, "monitor", me["TRENZINHO_DB"], env); r.Volume == "" {
		t.Error("monitor: TRENZINHO_DB is not in a named volume")
	}
	want("monitor", "/etc/trenzinho/profiles/piuma.yaml", false)
	for _, svc := range []string{"monitor", "ingest"} {
		// REGISTRY_FILE, when set, is a file in the registry volume of both.
		reg := "/var/lib/trenzinho/registry/registry.yaml"
		if r, _ := c.resolve(t, svc, reg, env); r.Volume != "registry" {
			t.Errorf("%s: %s is not in the registry volume", svc, reg)
		}
	}
	if !strings.Contains(string(readFile(t, ".env.example")), "/var/lib/trenzinho/registry/registry.yaml") {
		t.Error(".env.example does not show the registry path inside the registry volume")
	}

	// Prometheus: its configuration, the rule files and the file_sd directory.
	var prom struct {
		RuleFiles     []string `yaml:"rule_files"`
		ScrapeConfigs []struct {
			FileSD []struct {
				Files []string `yaml:"files"`
			} `yaml:"file_sd_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/prometheus/prometheus.yml"), &prom); err != nil {
		t.Fatal(err)
	}
	for _, a := range stringList(c.Services["prometheus"]["command"]) {
		if v, ok := strings.CutPrefix(a, "--config.file="); ok {
			if r, _ := c.resolve(t, "prometheus", v, env); r.HostRel != "deploy/prometheus/prometheus.yml" {
				t.Errorf("prometheus: --config.file %s is not deploy/prometheus/prometheus.yml", v)
			}
		}
	}
	if len(prom.RuleFiles) == 0 {
		t.Error("prometheus.yml loads no rule files")
	}
	for _, f := range prom.RuleFiles {
		if r, _ := c.resolve(t, "prometheus", f, env); r.HostRel != "deploy/prometheus/alerts.yml" {
			t.Errorf("prometheus: rule file %s is not deploy/prometheus/alerts.yml", f)
		}
	}
	for _, sc := range prom.ScrapeConfigs {
		for _, sd := range sc.FileSD {
			for _, f := range sd.Files {
				want("prometheus", filepath.Dir(f), true)
			}
		}
	}

	// Grafana: the provisioning directory and the dashboards' directory.
	want("grafana", "/etc/grafana/provisioning/datasources", true)
	want("grafana", "/etc/grafana/provisioning/dashboards", true)
	var providers struct {
		Providers []struct {
			Options struct {
				Path string `yaml:"path"`
			} `yaml:"options"`
		} `yaml:"providers"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/grafana/provisioning/dashboards/dashboards.yml"), &providers); err != nil {
		t.Fatal(err)
	}
	if len(providers.Providers) == 0 {
		t.Error("grafana: no dashboard provider")
	}
	for _, p := range providers.Providers {
		if r, _ := c.resolve(t, "grafana", p.Options.Path, env); r.HostRel != "deploy/grafana/dashboards" {
			t.Errorf("grafana: dashboards path %s is not deploy/grafana/dashboards", p.Options.Path)
		}
	}
}

// TestGrafanaProvisioningVariables: the $VARs of the provisioning files are in the grafana
// service's environment (Grafana expands them from its own environment).
func TestGrafanaProvisioningVariables(t *testing.T) {
	c := loadCompose(t)
	env := c.environment(t, "grafana")
	root := filepath.Join(testenv.RepoRoot(t), "deploy", "grafana", "provisioning")
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		var text strings.Builder
		for _, line := range strings.Split(string(b), "\n") {
			if !strings.HasPrefix(strings.TrimSpace(line), "#") {
				text.WriteString(line + "\n")
			}
		}
		for _, m := range regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`).FindAllStringSubmatch(text.String(), -1) {
			n++
			if _, ok := env[m[1]]; !ok {
				t.Errorf("%s uses $%s, which is not in the grafana service's environment", p, m[1])
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Error("no variable in the provisioning files: the token must come from the environment")
	}
}

// TestComposePorts: only the vehicles' TLS listener is published on every interface; the
// plain MQTT listener is not published at all.
func TestComposePorts(t *testing.T) {
	c := loadCompose(t)
	env := loadEnvExample(t).Values
	published := map[string]bool{}
	for _, name := range sortedKeys(c.Services) {
		for _, p := range stringList(c.Services[name]["ports"]) {
			s, _, err := interpolate(p, env)
			if err != nil {
				t.Errorf("service %s: port %s: %v", name, p, err)
				continue
			}
			parts := strings.Split(s, ":")
			var host, hostPort string
			switch len(parts) {
			case 2:
				hostPort = parts[0]
			case 3:
				host, hostPort = parts[0], parts[1]
			default:
				t.Errorf("service %s: port %q: want [HOST:]PORT:PORT", name, p)
				continue
			}
			published[hostPort] = true
			if (host == "" || host == "0.0.0.0") && !(name == "mosquitto" && hostPort == "8883") {
				t.Errorf("service %s: %s is published on every interface (with .env.example): only the broker's TLS port may be", name, p)
			}
			if host != "" && net.ParseIP(host) == nil {
				t.Errorf("service %s: port %s: host %q is not an IP address", name, p, host)
			}
		}
	}
	if published["1883"] {
		t.Error("the plain MQTT port 1883 is published on the host: vehicles must use TLS (8883)")
	}
	if !published["8883"] {
		t.Error("the broker's TLS port 8883 is not published")
	}
}

// TestComposeProgramAddresses: the health checks and Prometheus's targets use the addresses the
// programs listen on.
func TestComposeProgramAddresses(t *testing.T) {
	c := loadCompose(t)
	listenPort := func(svc, key string) string {
		_, port, err := net.SplitHostPort(c.environment(t, svc)[key])
		if err != nil {
			t.Fatalf("%s: %s: %v", svc, key, err)
		}
		return port
	}
	ports := map[string]string{
		"ingest":     listenPort("ingest", "TRENZINHO_METRICS_LISTEN"),
		"monitor":    listenPort("monitor", "TRENZINHO_LISTEN"),
		"influxdb":   "8086",
		"grafana":    "3000",
		"prometheus": "9090",
	}
	for _, svc := range []string{"ingest", "monitor"} {
		hc := stringList(c.Services[svc]["healthcheck"].(map[string]any)["test"])
		if len(hc) != 3 || hc[1] != "/usr/local/bin/healthcheck" {
			t.Errorf("%s: healthcheck %q, want [CMD /usr/local/bin/healthcheck URL]", svc, hc)
			continue
		}
		u, err := url.Parse(hc[2])
		if err != nil || u.Port() != ports[svc] || u.Path != "/healthz" {
			t.Errorf("%s: healthcheck URL %s, want /healthz on port %s", svc, hc[2], ports[svc])
		}
		if cmd := stringList(c.Services[svc]["command"]); len(cmd) == 0 || cmd[0] != "/usr/local/bin/"+svc {
			t.Errorf("%s: command %q, want /usr/local/bin/%s", svc, cmd, svc)
		}
		// Inside the compose network the programs reach the broker's plain listener.
		if u := c.environment(t, svc)["TRENZINHO_MQTT_URL"]; u != "tcp://mosquitto:1883" {
			t.Errorf("%s: TRENZINHO_MQTT_URL %s, want tcp://mosquitto:1883", svc, u)
		}
	}
	if u := c.environment(t, "ingest")["TRENZINHO_INFLUX_URL"]; u != "http://influxdb:"+ports["influxdb"] {
		t.Errorf("ingest: TRENZINHO_INFLUX_URL %s", u)
	}
	// The service accounts are the ones the ACL grants.
	acl := string(readFile(t, "deploy/mosquitto/acl"))
	for _, svc := range []string{"ingest", "monitor"} {
		user := c.environment(t, svc)["TRENZINHO_MQTT_USER"]
		if !strings.Contains(acl, "\nuser "+user+"\n") {
			t.Errorf("%s: MQTT user %q has no section in deploy/mosquitto/acl", svc, user)
		}
	}

	var prom struct {
		ScrapeConfigs []struct {
			JobName       string `yaml:"job_name"`
			StaticConfigs []struct {
				Targets []string `yaml:"targets"`
			} `yaml:"static_configs"`
		} `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(readFile(t, "deploy/prometheus/prometheus.yml"), &prom); err != nil {
		t.Fatal(err)
	}
	scraped := map[string]bool{}
	for _, sc := range prom.ScrapeConfigs {
		for _, st := range sc.StaticConfigs {
			for _, target := range st.Targets {
				host, port, err := net.SplitHostPort(target)
				if err != nil {
					t.Errorf("job %s: target %s: %v", sc.JobName, target, err)
					continue
				}
				svc := host
				if host == "127.0.0.1" || host == "localhost" {
					svc = "prometheus"
				}
				if _, ok := c.Services[svc]; !ok {
					t.Errorf("job %s: target %s is not a compose service", sc.JobName, target)
				} else if ports[svc] != port {
					t.Errorf("job %s: target %s, but %s listens on %s", sc.JobName, target, svc, ports[svc])
				}
				if sc.JobName != svc {
					t.Errorf("job %s scrapes %s: name the job after the service (the alerts match on job)", sc.JobName, svc)
				}
				scraped[svc] = true
			}
		}
	}
	for _, svc := range []string{"ingest", "monitor"} {
		if !scraped[svc] {
			t.Errorf("Prometheus does not scrape %s", svc)
		}
	}
}

// TestScripts: the shell scripts are executable and parse.
func TestScripts(t *testing.T) {
	for _, s := range []string{"deploy/init-secrets.sh", "deploy/backup.sh"} {
		p := filepath.Join(testenv.RepoRoot(t), s)
		fi, err := os.Stat(p)
		if err != nil {
			t.Error(err)
			continue
		}
		if fi.Mode()&0o111 == 0 {
			t.Errorf("%s is not executable", s)
		}
		runOK(t, "bash", "-n", p)
		if out := runOK(t, p, "--help"); !strings.Contains(out, "Usage: deploy/") {
			t.Errorf("%s --help: %q", s, out)
		}
	}
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
