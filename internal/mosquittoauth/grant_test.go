package mosquittoauth_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/trenzinho/trenzinho/internal/mosquittoauth"
)

// The repository's ACL lets a vehicle read its own configuration bundle and nobody else's,
// never write it, and lets the monitor write every vehicle's.
func TestRepositoryACLConfigTopic(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "deploy", "mosquitto", "acl"))
	if err != nil {
		t.Fatal(err)
	}
	a, err := mosquittoauth.ParseACL(b)
	if err != nil {
		t.Fatal(err)
	}
	own, other := "trenzinho/v1/PIU-001/config", "trenzinho/v1/PIU-002/config"
	if !a.CanRead("PIU-001", "bridge-PIU-001", own) || a.CanRead("PIU-001", "x", other) {
		t.Error("a vehicle must read its own configuration and only it")
	}
	if a.CanWrite("PIU-001", "bridge-PIU-001", own) {
		t.Error("a vehicle may write its own configuration")
	}
	if !a.CanWrite("svc.monitor", "m", own) || a.CanWrite("svc.ingest", "i", own) {
		t.Error("only the monitor writes configurations")
	}
}

func TestGrantRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "acl")
	perUser := "user svc.monitor\ntopic write trenzinho/v1/+/config\n"
	os.WriteFile(path, []byte(perUser), 0o644)
	write, read := []string{"trenzinho/v1/PIU-001/telemetry"}, []string{"trenzinho/v1/PIU-001/config"}
	for i := range 2 {
		added, err := mosquittoauth.Grant(path, "PIU-001", write, read)
		if err != nil || added != (i == 0) {
			t.Fatalf("call %d: added %v, %v", i, added, err)
		}
	}
	b, _ := os.ReadFile(path)
	want := perUser + "\nuser PIU-001\ntopic write trenzinho/v1/PIU-001/telemetry\ntopic read trenzinho/v1/PIU-001/config\n"
	if string(b) != want {
		t.Errorf("ACL:\n%s\nwant\n%s", b, want)
	}
	a, _ := mosquittoauth.ParseACL(b)
	if a.CanWrite("PIU-001", "c", read[0]) {
		t.Error("a read grant lets the vehicle write")
	}
}
