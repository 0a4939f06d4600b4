package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/registry"
)

// TestHelpListsCommands: --help, -h and help print every subcommand with its line, on standard
// output, and exit 0; --version and version print the version.
func TestHelpListsCommands(t *testing.T) {
	for _, arg := range []string{"--help", "-h", "-help", "help"} {
		var out, errOut bytes.Buffer
		if code := run(context.Background(), []string{arg}, &out, &errOut); code != 0 {
			t.Errorf("monitor %s: exit %d; stderr %q", arg, code, errOut.String())
		}
		for _, cmd := range []string{"[serve]", "geofences import-osm", "backup", "verify", "vehicle add", "help", "version"} {
			line := ""
			for _, l := range strings.Split(out.String(), "\n") {
				if strings.HasPrefix(strings.TrimSpace(l), "monitor "+cmd) {
					line = l
				}
			}
			// The command and, after it, what it does.
			if line == "" || len(strings.Fields(line)) < 4 {
				t.Errorf("monitor %s: no line for %q:\n%s", arg, cmd, out.String())
			}
		}
	}
	for _, arg := range []string{"--version", "-version", "version"} {
		var out bytes.Buffer
		if code := run(context.Background(), []string{arg}, &out, io.Discard); code != 0 || strings.TrimSpace(out.String()) != version {
			t.Errorf("monitor %s: exit %d, %q; want %q", arg, code, out.String(), version)
		}
	}
}

// TestBadCommandLines: a bad flag, a missing argument or an unknown command exits 2 and names
// what is wrong.
func TestBadCommandLines(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TRENZINHO_REGISTRY", "")
	cases := []struct {
		args []string
		want []string // in standard error
	}{
		{[]string{"--no-such-flag"}, []string{"-no-such-flag"}},
		{[]string{"serve", "extra"}, []string{`"extra"`}},
		{[]string{"frobnicate"}, []string{`"frobnicate"`, "vehicle add"}},
		{[]string{"backup"}, []string{"DEST"}},
		{[]string{"verify"}, []string{"DRAFT.json"}},
		{[]string{"geofences", "export"}, []string{`"export"`}},
		{[]string{"vehicle", "add", "PIU-009"}, []string{"--registry", "--passwd", "--acl", "--out"}},
		{[]string{"vehicle", "add", "--registry", filepath.Join(dir, "r.yaml"), "--passwd", filepath.Join(dir, "p"), "--out", dir, "PIU-009"}, []string{"missing required flag --acl"}},
		{[]string{"vehicle", "add", "--registry", filepath.Join(dir, "r.yaml"), "--passwd", filepath.Join(dir, "p"), "--acl", filepath.Join(dir, "a"), "--out", dir}, []string{"VEHICLE_ID"}},
	}
	for _, c := range cases {
		stderr := captureStderr(t, func(w io.Writer) {
			if code := run(context.Background(), c.args, io.Discard, w); code != 2 {
				t.Errorf("monitor %s: exit %d, want 2", strings.Join(c.args, " "), code)
			}
		})
		for _, w := range c.want {
			if !strings.Contains(stderr, w) {
				t.Errorf("monitor %s: standard error does not say %q:\n%s", strings.Join(c.args, " "), w, stderr)
			}
		}
	}
}

// captureStderr runs fn with os.Stderr redirected to a file (the subcommands print their usage
// there) and passes fn that writer too; it returns what was written.
func captureStderr(t *testing.T, fn func(w io.Writer)) string {
	t.Helper()
	f, err := os.CreateTemp(t.TempDir(), "stderr")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	saved := os.Stderr
	os.Stderr = f
	defer func() { os.Stderr = saved }()
	fn(f)
	b, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// commentedRegistry is a registry a person wrote: a warning header, remarks on records, a
// quoted value and a flow list.
const commentedRegistry = `# DADOS FICTÍCIOS — NÃO USAR EM AUTOS
#
# Cadastro de teste: os comentários devem sobreviver à edição.
note: dados fictícios

licensees:
  # O permissionário da orla.
  - id: L1
    razao_social: "Trenzinho Alegria da Orla Ltda" # razão social conforme o contrato social
    cnpj: 11.222.333/0001-81
vehicles:
  - id: PIU-001 # o trem azul
    plate: ABC1D23
    licensee: L1
drivers: [] # nenhum condutor ainda
`

// TestVehicleAddKeepsComments: enrolling a new vehicle (and a key for a known one) edits the
// registry's YAML tree, so every comment of the file — its warning header first — and its
// layout stay; the vehicle is registered.
func TestVehicleAddKeepsComments(t *testing.T) {
	e := newEnrolment(t, "pattern write trenzinho/v1/%u/telemetry\npattern write trenzinho/v1/%u/status\n")
	if err := os.WriteFile(e.registry, []byte(commentedRegistry), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := e.add(t, "PIU-002", "--plate", "XYZ9A87", "--licensee", "L1"); err != nil {
		t.Fatal(err)
	}
	if _, err := e.add(t, "PIU-001"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(e.registry)
	if err != nil {
		t.Fatal(err)
	}
	got := string(b)
	if !strings.HasPrefix(got, "# DADOS FICTÍCIOS — NÃO USAR EM AUTOS\n") {
		t.Errorf("the warning header is gone:\n%s", got)
	}
	for _, keep := range []string{
		"# Cadastro de teste: os comentários devem sobreviver à edição.",
		"# O permissionário da orla.",
		`razao_social: "Trenzinho Alegria da Orla Ltda" # razão social conforme o contrato social`,
		"- id: PIU-001 # o trem azul",
		"drivers: [] # nenhum condutor ainda",
	} {
		if !strings.Contains(got, keep) {
			t.Errorf("lost %q:\n%s", keep, got)
		}
	}
	// The order stays: licensees, then vehicles (PIU-001 before the new PIU-002), then drivers.
	if i, j, k := strings.Index(got, "PIU-001"), strings.Index(got, "PIU-002"), strings.Index(got, "drivers:"); !(i < j && j < k) {
		t.Errorf("layout changed:\n%s", got)
	}
	reg, err := registry.Open(e.registry)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"PIU-001", "PIU-002"} {
		if v, ok := reg.Vehicle(id); !ok || v.KeyID == "" || v.PublicKey == "" {
			t.Errorf("%s registered as %+v (%v)", id, v, ok)
		}
	}
	if v, _ := reg.Vehicle("PIU-002"); v.Plate != "XYZ9A87" || v.Licensee != "L1" {
		t.Errorf("PIU-002 = %+v", v)
	}
}

// TestBadTLSFailsAtStart: a CA file that cannot be read stops serve at start with config's
// message (config's TestTLSConfig has every kind of bad file), as it stops ingest and the
// bridge, before the database is created.
func TestBadTLSFailsAtStart(t *testing.T) {
	dir := t.TempDir()
	ca, db := filepath.Join(dir, "missing-ca.pem"), filepath.Join(dir, "monitor.db")
	_, want := config.MQTT{CAFile: ca}.TLSConfig()
	// Bounded: a program that does not fail at start runs until ctx ends.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := cmdServe(ctx, []string{"--mqtt-ca", ca, "--db", db, "--listen", "127.0.0.1:0",
		"--admin-user", "admin", "--admin-password", "a long enough password"})
	if want == nil || err == nil || err.Error() != want.Error() {
		t.Errorf("serve with a missing CA: %v, want %v", err, want)
	}
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("serve created its database before failing (%v)", err)
	}
}
