package mosquittoauth_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/internal/mosquittoauth"
)

func TestHashFormat(t *testing.T) {
	h, err := mosquittoauth.Hash("segredo-de-teste", nil)
	if err != nil {
		t.Fatal(err)
	}
	parts := strings.Split(h, "$")
	if len(parts) != 5 || parts[1] != "7" || parts[2] != "101" || len(parts[3]) != 16 || len(parts[4]) != 88 {
		t.Fatalf("hash %q is not mosquitto_passwd's $7$ format", h)
	}
	if !mosquittoauth.Check(h, "segredo-de-teste") || mosquittoauth.Check(h, "segredo-de-teste2") {
		t.Error("Check does not tell the right password from a wrong one")
	}
	h2, _ := mosquittoauth.Hash("segredo-de-teste", nil)
	if h2 == h {
		t.Error("two hashes of one password share their salt")
	}
}

// TestCheckReadsMosquittoPasswd: a line written by the real mosquitto_passwd verifies with
// Check, i.e. both compute the same PBKDF2-SHA512 (the broker accepting Hash's lines is proved
// by monitor's vehicle tests against a real Mosquitto).
func TestCheckReadsMosquittoPasswd(t *testing.T) {
	bin, err := exec.LookPath("mosquitto_passwd")
	if err != nil {
		t.Skip("mosquitto_passwd not installed")
	}
	path := filepath.Join(t.TempDir(), "passwd")
	if out, err := exec.Command(bin, "-c", "-b", path, "PIU-001", "senha-com-ç-e-espaço ").CombinedOutput(); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	b, _ := os.ReadFile(path)
	_, hash, _ := strings.Cut(strings.TrimSpace(string(b)), ":")
	if !mosquittoauth.Check(hash, "senha-com-ç-e-espaço ") {
		t.Errorf("mosquitto_passwd's %q does not verify", hash)
	}
	if mosquittoauth.Check(hash, "senha-com-ç-e-espaço") {
		t.Error("a wrong password verifies")
	}
}

func TestSetPassword(t *testing.T) {
	path := filepath.Join(t.TempDir(), "passwd")
	if err := os.WriteFile(path, []byte("# comentário\ningest:$7$101$abc$def\n"), 0o640); err != nil {
		t.Fatal(err)
	}
	h1, _ := mosquittoauth.Hash("um", nil)
	h2, _ := mosquittoauth.Hash("dois", nil)
	if err := mosquittoauth.SetPassword(path, "PIU-001", h1, false); err != nil {
		t.Fatal(err)
	}
	if err := mosquittoauth.SetPassword(path, "PIU-001", h2, false); !errors.Is(err, mosquittoauth.ErrUserExists) {
		t.Fatalf("second add without replace: %v", err)
	}
	if err := mosquittoauth.SetPassword(path, "PIU-001", h2, true); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	want := "# comentário\ningest:$7$101$abc$def\nPIU-001:" + h2 + "\n"
	if string(b) != want {
		t.Errorf("file:\n%s\nwant\n%s", b, want)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the file's 0640 kept", fi.Mode().Perm())
	}
	users, _ := mosquittoauth.Users(path)
	if strings.Join(users, ",") != "ingest,PIU-001" {
		t.Errorf("users %v", users)
	}
	for _, bad := range []string{"", "a:b", "a/b", "+", "#", "a b"} {
		if err := mosquittoauth.SetPassword(path, bad, h1, false); err == nil {
			t.Errorf("user %q accepted", bad)
		}
	}
	fresh := filepath.Join(t.TempDir(), "new")
	if err := mosquittoauth.SetPassword(fresh, "PIU-002", h1, false); err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(fresh); fi.Mode().Perm() != 0o600 {
		t.Errorf("new password file mode %v, want 0600", fi.Mode().Perm())
	}
}

func TestACL(t *testing.T) {
	const patterns = `# vehicles publish their own topics
pattern write trenzinho/v1/%u/telemetry
pattern write trenzinho/v1/%u/status
user ingest
topic read trenzinho/v1/+/telemetry
topic write trenzinho/v1/_sys/quarantine/#
`
	a, err := mosquittoauth.ParseACL([]byte(patterns))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		user, topic string
		want        bool
	}{
		{"PIU-001", "trenzinho/v1/PIU-001/telemetry", true},
		{"PIU-001", "trenzinho/v1/PIU-001/status", true},
		{"PIU-001", "trenzinho/v1/PIU-002/telemetry", false},
		{"PIU-001", "trenzinho/v1/PIU-001/episodes", false},
		{"PIU-001", "trenzinho/v1/_sys/quarantine/PIU-001", false},
		{"ingest", "trenzinho/v1/_sys/quarantine/PIU-001", true},
		{"ingest", "trenzinho/v1/PIU-001/telemetry", false}, // read only (and its own pattern topic is trenzinho/v1/ingest/…)
	} {
		if got := a.CanWrite(tc.user, tc.user, tc.topic); got != tc.want {
			t.Errorf("%s writes %s: %v, want %v", tc.user, tc.topic, got, tc.want)
		}
	}
	topics := []string{"trenzinho/v1/PIU-001/telemetry", "trenzinho/v1/PIU-001/status"}

	// A pattern ACL covers a new vehicle: nothing is added.
	dir := t.TempDir()
	path := filepath.Join(dir, "acl")
	os.WriteFile(path, []byte(patterns), 0o644)
	if added, err := mosquittoauth.GrantWrite(path, "PIU-001", topics); err != nil || added {
		t.Errorf("pattern ACL: added %v, %v", added, err)
	}
	if b, _ := os.ReadFile(path); string(b) != patterns {
		t.Errorf("pattern ACL changed:\n%s", b)
	}

	// A per-user ACL gets the vehicle's entries, once.
	perUser := "user ingest\ntopic read trenzinho/v1/+/telemetry"
	os.WriteFile(path, []byte(perUser), 0o644)
	for i := range 2 {
		added, err := mosquittoauth.GrantWrite(path, "PIU-001", topics)
		if err != nil || added != (i == 0) {
			t.Fatalf("per-user ACL, call %d: added %v, %v", i, added, err)
		}
	}
	b, _ := os.ReadFile(path)
	want := perUser + "\n\nuser PIU-001\ntopic write trenzinho/v1/PIU-001/telemetry\ntopic write trenzinho/v1/PIU-001/status\n"
	if string(b) != want {
		t.Errorf("per-user ACL:\n%s\nwant\n%s", b, want)
	}
	// A deny wins.
	a, _ = mosquittoauth.ParseACL([]byte("pattern write trenzinho/v1/%u/#\npattern deny trenzinho/v1/%u/status\n"))
	if a.CanWrite("PIU-001", "c", "trenzinho/v1/PIU-001/status") || !a.CanWrite("PIU-001", "c", "trenzinho/v1/PIU-001/telemetry") {
		t.Error("deny not honoured")
	}
	if _, err := mosquittoauth.ParseACL([]byte("topci write x\n")); err == nil {
		t.Error("a misspelt keyword is accepted")
	}
}

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		filter, topic string
		want          bool
	}{
		{"a/b", "a/b", true}, {"a/+", "a/b", true}, {"a/+", "a/b/c", false}, {"a/#", "a", true},
		{"a/#", "a/b/c", true}, {"#", "a/b", true}, {"a/b", "a/c", false}, {"+/b", "a/b", true},
	} {
		if got := mosquittoauth.Match(tc.filter, tc.topic); got != tc.want {
			t.Errorf("Match(%q, %q) = %v", tc.filter, tc.topic, got)
		}
	}
}
