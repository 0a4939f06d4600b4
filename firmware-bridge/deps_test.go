package main

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/trenzinho/trenzinho/"

// goListDeps runs `go list -deps` on patterns and returns the packages listed.
func goListDeps(t *testing.T, patterns ...string) []string {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("go command not found")
	}
	out, err := exec.Command(goBin, append([]string{"list", "-deps"}, patterns...)...).CombinedOutput()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, out)
	}
	return strings.Fields(string(out))
}

// noMonitor fails for every monitor package in deps and returns which of want were listed.
func noMonitor(t *testing.T, what string, deps []string, want ...string) map[string]bool {
	t.Helper()
	found := map[string]bool{}
	for _, p := range deps {
		if p == module+"monitor" || strings.HasPrefix(p, module+"monitor/") {
			t.Errorf("%s depends on %s", what, p)
		}
		for _, w := range want {
			found[w] = found[w] || p == module+w
		}
	}
	return found
}

// TestNoMonitorDependency: the bridge shares code with the monitor only through top-level
// packages (wire, geofences, configbundle, rules, profile, …), never by importing the monitor's:
// `go list -deps ./firmware-bridge/...` lists no monitor package, and it does list the rules the
// driver's coach runs — the very code that judges.
func TestNoMonitorDependency(t *testing.T) {
	want := []string{"configbundle", "rules", "profile", "firmware-bridge/coach"}
	found := noMonitor(t, "the bridge", goListDeps(t, "./..."), want...)
	for _, p := range want {
		if !found[p] {
			t.Errorf("the bridge does not import %s%s: the check would prove nothing", module, p)
		}
	}
}

// TestSharedLawPackagesImportNoMonitor: the law (rules, profile, profiles) lives in top-level
// packages that import nothing of the monitor, so the bridge's coach runs the very code that
// judges (never a second implementation of the law).
func TestSharedLawPackagesImportNoMonitor(t *testing.T) {
	found := noMonitor(t, "the law packages", goListDeps(t, "../rules/...", "../profile/...", "../profiles/..."),
		"rules", "profile", "profiles")
	for _, p := range []string{"rules", "profile", "profiles"} {
		if !found[p] {
			t.Errorf("go list did not list %s%s: the check would prove nothing", module, p)
		}
	}
}
