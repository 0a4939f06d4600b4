package repo

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/trenzinho/trenzinho/"

// programs are the packages of the three programs and their parts: what the helper layer under
// internal/ must not import.
var programs = []string{module + "monitor", module + "ingest", module + "firmware-bridge"}

// testKits may import anything: they stand up the programs for the tests.
const testKits = module + "internal/testkit/"

// notLayered are the packages under internal/ that are programs or suites of tests, not
// helpers: they use the test kits and the programs' packages.
var notLayered = []string{module + "internal/e2e", module + "internal/hostile", module + "internal/localrun", module + "internal/repo"}

// kitUsers are the tools outside internal/ that stand up real processes through the test kits'
// harness: the load tests.
var kitUsers = []string{module + "ingest/loadtest", module + "monitor/loadtest"}

// TestLayers: the helper layer (internal/, but the test kits, the test suites and `make run`)
// imports no program's package, and no production package imports a test kit (a test kit
// imports the programs to start them; a production package importing one would drag the tests'
// fixtures into the binaries).
func TestLayers(t *testing.T) {
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"...").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	under := func(p string, roots ...string) bool {
		for _, r := range roots {
			if p == r || strings.HasPrefix(p, strings.TrimSuffix(r, "/")+"/") {
				return true
			}
		}
		return false
	}
	packages := 0
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		pkg, imports := f[0], f[1:]
		packages++
		kit := strings.HasPrefix(pkg, testKits)
		helper := strings.HasPrefix(pkg, module+"internal/") && !kit && !under(pkg, notLayered...)
		for _, imp := range imports {
			if helper && under(imp, programs...) {
				t.Errorf("%s, a helper, imports %s, a program's package", pkg, imp)
			}
			if !kit && !under(pkg, notLayered...) && !under(pkg, kitUsers...) && strings.HasPrefix(imp, testKits) {
				t.Errorf("%s imports the test kit %s", pkg, imp)
			}
		}
	}
	if packages < 20 {
		t.Fatalf("go list listed %d packages", packages)
	}
}
