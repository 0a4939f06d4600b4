package main

import (
	"os/exec"
	"strings"
	"testing"
)

// TestNoMonitorDependency: the bridge shares code with the monitor only through top-level
// packages (wire, geofences, configbundle, …), never by importing the monitor's.
func TestNoMonitorDependency(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(goBin, "list", "-deps", "./...").CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	found := false
	for _, p := range deps {
		if strings.HasPrefix(p, "github.com/trenzinho/trenzinho/monitor") {
			t.Errorf("the bridge depends on %s", p)
		}
		found = found || p == "github.com/trenzinho/trenzinho/configbundle"
	}
	if !found {
		t.Error("the bridge does not import configbundle: the check would prove nothing")
	}
}
