package deploy

import (
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
)

// reEnvSetting is how a program's --help names the variable of each setting.
var reEnvSetting = regexp.MustCompile(`\(env (TRENZINHO_[A-Z0-9_]+)\)`)

// programSettings returns the TRENZINHO_* variables the program reads, from its --help (every
// setting is a flag bound to its variable: package config's Binder).
func programSettings(t *testing.T, bin string, args ...string) []string {
	t.Helper()
	out, _ := exec.Command(bin, append(args, "-h")...).CombinedOutput() // -h exits 2 after the usage
	var names []string
	for _, m := range reEnvSetting.FindAllStringSubmatch(string(out), -1) {
		if !slices.Contains(names, m[1]) {
			names = append(names, m[1])
		}
	}
	if len(names) < 10 {
		t.Fatalf("%s %s -h names %d settings; its output:\n%s", filepath.Base(bin), strings.Join(args, " "), len(names), out)
	}
	return names
}

// TestServeSettingsDocumentedAndDeployed: every TRENZINHO_* variable that `monitor serve` and
// ingest read is documented (docs/operations.md; ingest's own settings may be in
// docs/storage.md, which the guide points to) and is a decision of the docker-compose
// deployment: set in the service's environment there, or named in .env.example among the
// settings left at the program's default. A setting added to a program without either fails
// here, so that an operator never misses one.
func TestServeSettingsDocumentedAndDeployed(t *testing.T) {
	bin := testenv.Build(t)
	c := loadCompose(t)
	envExample := string(readFile(t, ".env.example"))
	ops := string(readFile(t, "docs/operations.md"))
	storage := string(readFile(t, "docs/storage.md"))
	named := func(doc, v string) bool {
		return regexp.MustCompile(regexp.QuoteMeta(v) + `\b`).MatchString(doc)
	}
	for _, p := range []struct {
		svc  string
		args []string
		// read are variables the program reads outside its flags.
		read []string
		docs string
	}{
		{"monitor", []string{"serve"}, []string{notifyconfig.EnvSMTPPassword, notifyconfig.EnvTelegramToken, notifyconfig.EnvVAPIDKey}, ops},
		{"ingest", nil, nil, ops + storage},
	} {
		vars := append(programSettings(t, filepath.Join(bin, p.svc), p.args...), p.read...)
		set := c.environment(t, p.svc)
		for _, v := range vars {
			if !named(p.docs, v) {
				t.Errorf("%s reads %s, which docs/operations.md does not document", p.svc, v)
			}
			if _, ok := set[v]; !ok && !named(envExample, v) {
				t.Errorf("%s reads %s: docker-compose.yml does not set it for the service and .env.example does not name it among the settings left at their defaults", p.svc, v)
			}
		}
		t.Logf("%s: %d settings", p.svc, len(vars))
	}
}
