package packaging

import (
	"bufio"
	"bytes"
	"context"
	"crypto/md5"
	"debug/buildinfo"
	"debug/elf"
	"encoding/hex"
	"errors"
	"fmt"
	"go/build"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
)

// The version make pi is given, and the Debian version build-deb.sh must derive from it.
const (
	testVersion    = "v1.2.3-4-gabcdef0-dirty"
	wantDebVersion = "1.2.3+4+gabcdef0+dirty"
)

// piArch is one Raspberry Pi target of make pi.
type piArch struct {
	deb     string // Debian architecture
	goarch  string
	binary  string // file name in dist/
	qemu    string // qemu-user emulator, without the -static suffix
	machine elf.Machine
}

var piArches = []piArch{
	{"arm64", "arm64", "firmware-bridge-linux-arm64", "qemu-aarch64", elf.EM_AARCH64},
	{"armhf", "arm", "firmware-bridge-linux-armv7", "qemu-arm", elf.EM_ARM},
}

// Paths the package installs.
const (
	pkgBinary   = "/usr/bin/firmware-bridge"
	pkgUnit     = "/lib/systemd/system/trenzinho-bridge.service"
	pkgRules    = "/lib/udev/rules.d/70-trenzinho-bridge.rules"
	pkgEnv      = "/etc/trenzinho/bridge.env"
	pkgDoc      = "/usr/share/doc/trenzinho-bridge/bridge.md"
	pkgCopy     = "/usr/share/doc/trenzinho-bridge/copyright"
	serviceUser = "trenzinho"
)

// workDir holds what the tests build; TestMain removes it.
var workDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "trenzinho-packaging-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	workDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// missing reports a missing tool: a failure in CI (CI set), whose machine must have it, and a
// skip elsewhere.
func missing(t testing.TB, format string, args ...any) {
	t.Helper()
	msg := fmt.Sprintf(format, args...)
	if os.Getenv("CI") != "" {
		t.Fatal(msg)
	}
	t.Skip(msg)
}

// tool finds a command or reports the Debian package that provides it.
func tool(t testing.TB, pkg string, names ...string) string {
	t.Helper()
	for _, name := range names {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
		if p := filepath.Join("/usr/bin", name); isExecutable(p) {
			return p
		}
	}
	missing(t, "%s not found: install the Debian package %s (apt-get install -y %s)", names[0], pkg, pkg)
	return ""
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// goTool is the go command of the toolchain running the tests.
func goTool() string {
	if p := filepath.Join(build.Default.GOROOT, "bin", "go"); isExecutable(p) {
		return p
	}
	return "go"
}

func source(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(testenv.RepoRoot(t), "packaging", "deb", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// once runs an expensive build at most once for all tests.
type once struct {
	sync.Once
	path string
	err  error
}

var distBuild, nativeBuild once

// dist runs make pi into a temporary dist directory and returns it.
func dist(t testing.TB) string {
	t.Helper()
	mk := tool(t, "make", "make")
	tool(t, "dpkg", "dpkg-deb")
	distBuild.Do(func() {
		distBuild.path = filepath.Join(workDir, "dist")
		cmd := exec.Command(mk, "--no-print-directory", "-C", testenv.RepoRoot(t), "pi",
			"VERSION="+testVersion, "DIST="+distBuild.path, "GO="+goTool())
		// Not a sub-make of a make test that may be running this: no inherited flags or jobserver.
		for _, kv := range os.Environ() {
			if k, _, _ := strings.Cut(kv, "="); k != "MAKEFLAGS" && k != "MFLAGS" && k != "MAKELEVEL" {
				cmd.Env = append(cmd.Env, kv)
			}
		}
		if out, err := cmd.CombinedOutput(); err != nil {
			distBuild.err = fmt.Errorf("make pi: %v\n%s", err, out)
		}
	})
	if distBuild.err != nil {
		t.Fatal(distBuild.err)
	}
	return distBuild.path
}

// native builds firmware-bridge for this machine.
func native(t testing.TB) string {
	t.Helper()
	nativeBuild.Do(func() {
		nativeBuild.path = filepath.Join(workDir, "native", "firmware-bridge")
		cmd := exec.Command(goTool(), "build", "-o", nativeBuild.path, "./firmware-bridge")
		cmd.Dir = testenv.RepoRoot(t)
		if out, err := cmd.CombinedOutput(); err != nil {
			nativeBuild.err = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if nativeBuild.err != nil {
		t.Fatal(nativeBuild.err)
	}
	return nativeBuild.path
}

// result is what a command printed and its exit status.
type result struct {
	stdout, stderr []byte
	code           int
}

// run runs a command to completion; only a failure to start it (or a time-out) fails the test.
func run(t testing.TB, timeout time.Duration, name string, args ...string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s %s: timed out after %s", name, strings.Join(args, " "), timeout)
	}
	var exit *exec.ExitError
	code := 0
	if errors.As(err, &exit) {
		code = exit.ExitCode()
	} else if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return result{stdout.Bytes(), stderr.Bytes(), code}
}

// mustRun runs a command that must succeed and returns its standard output.
func mustRun(t testing.TB, name string, args ...string) string {
	t.Helper()
	r := run(t, 2*time.Minute, name, args...)
	if r.code != 0 {
		t.Fatalf("%s %s: exit status %d\n%s%s", name, strings.Join(args, " "), r.code, r.stdout, r.stderr)
	}
	return string(r.stdout)
}

// gpsdLogs returns the gpsd conformance captures the gps package keeps in
// firmware-bridge/gps/testdata/gpsd.
func gpsdLogs(t *testing.T) []string {
	t.Helper()
	dir := filepath.Join(testenv.RepoRoot(t), "firmware-bridge", "gps", "testdata", "gpsd")
	logs, err := filepath.Glob(filepath.Join(dir, "*.log"))
	if err != nil {
		t.Fatal(err)
	}
	if len(logs) == 0 {
		t.Fatalf("no *.log in %s", dir)
	}
	sort.Strings(logs)
	return logs
}

// TestPiBinaries checks that make pi's binaries are static Linux executables for the Pi (their
// version is checked by running them, in TestCrossDecodeNMEA: -trimpath keeps -ldflags out of
// the build information).
func TestPiBinaries(t *testing.T) {
	for _, a := range piArches {
		t.Run(a.deb, func(t *testing.T) {
			path := filepath.Join(dist(t), a.binary)
			bi, err := buildinfo.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			settings := map[string]string{}
			for _, s := range bi.Settings {
				settings[s.Key] = s.Value
			}
			want := map[string]string{"GOOS": "linux", "GOARCH": a.goarch, "CGO_ENABLED": "0", "-trimpath": "true"}
			for k, v := range want {
				if settings[k] != v {
					t.Errorf("build setting %s = %q, want %q", k, settings[k], v)
				}
			}
			if a.goarch == "arm" && !strings.HasPrefix(settings["GOARM"], "7") {
				t.Errorf("GOARM = %q, want 7 (armv7, Raspberry Pi 2 and later)", settings["GOARM"])
			}
			f, err := elf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if f.Machine != a.machine {
				t.Errorf("ELF machine %v, want %v", f.Machine, a.machine)
			}
			for _, p := range f.Progs {
				if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
					t.Errorf("not a static executable: has %v", p.Type)
				}
			}
		})
	}
}

// TestCrossDecodeNMEA runs the arm64 and armv7 builds under qemu-user and checks that they
// decode every capture of the gpsd corpus byte for byte as the native build does.
func TestCrossDecodeNMEA(t *testing.T) {
	logs := gpsdLogs(t)
	nat := native(t)
	want := make(map[string]result, len(logs))
	readings := 0
	for _, l := range logs {
		r := run(t, time.Minute, nat, "decode", "nmea", l)
		want[l] = r
		readings += bytes.Count(r.stdout, []byte("\n"))
	}
	if readings == 0 {
		t.Fatal("the native build decoded no reading from the corpus")
	}
	for _, a := range piArches {
		t.Run(a.deb, func(t *testing.T) {
			qemu := tool(t, "qemu-user-static", a.qemu+"-static", a.qemu)
			bin := filepath.Join(dist(t), a.binary)
			t.Parallel()
			if v := run(t, time.Minute, qemu, bin, "version"); strings.TrimSpace(string(v.stdout)) != testVersion {
				t.Fatalf("version under %s: %q (exit %d, %s)", filepath.Base(qemu), v.stdout, v.code, v.stderr)
			}
			for _, l := range logs {
				got := run(t, time.Minute, qemu, bin, "decode", "nmea", l)
				w := want[l]
				name := filepath.Base(l)
				if got.code != w.code {
					t.Errorf("%s: exit status %d, native %d", name, got.code, w.code)
				}
				if d := firstDiff(got.stdout, w.stdout); d != "" {
					t.Errorf("%s: standard output differs from the native build's: %s", name, d)
				}
				if d := firstDiff(got.stderr, w.stderr); d != "" {
					t.Errorf("%s: standard error differs from the native build's: %s", name, d)
				}
			}
		})
	}
}

// firstDiff describes the first line where got and want differ, or returns "".
func firstDiff(got, want []byte) string {
	if bytes.Equal(got, want) {
		return ""
	}
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := 0; i < max(len(g), len(w)); i++ {
		var gl, wl string
		if i < len(g) {
			gl = g[i]
		}
		if i < len(w) {
			wl = w[i]
		}
		if gl != wl {
			return fmt.Sprintf("line %d:\n  got  %q\n  want %q", i+1, gl, wl)
		}
	}
	return "same lines, different bytes"
}

// debEntry is one line of dpkg-deb -c.
type debEntry struct {
	mode, owner string
}

// TestDebPackages checks the contents of both .deb packages.
func TestDebPackages(t *testing.T) {
	for _, a := range piArches {
		t.Run(a.deb, func(t *testing.T) {
			dir := dist(t)
			deb := filepath.Join(dir, fmt.Sprintf("trenzinho-bridge_%s_%s.deb", wantDebVersion, a.deb))
			if _, err := os.Stat(deb); err != nil {
				t.Fatalf("make pi did not build %s: %v", filepath.Base(deb), err)
			}

			// Control fields.
			fields := map[string]string{}
			for _, line := range strings.Split(mustRun(t, "dpkg-deb", "-f", deb), "\n") {
				if k, v, ok := strings.Cut(line, ": "); ok && !strings.HasPrefix(line, " ") {
					fields[k] = v
				}
			}
			for k, v := range map[string]string{"Package": "trenzinho-bridge", "Version": wantDebVersion, "Architecture": a.deb} {
				if fields[k] != v {
					t.Errorf("%s: %q, want %q", k, fields[k], v)
				}
			}
			if !strings.Contains(fields["Depends"], "adduser") {
				t.Errorf("Depends: %q lacks adduser (postinst creates the user with it)", fields["Depends"])
			}
			for _, k := range []string{"Maintainer", "Installed-Size", "Description"} {
				if fields[k] == "" {
					t.Errorf("no %s field", k)
				}
			}

			// Files, modes and owners.
			entries := map[string]debEntry{}
			for _, line := range strings.Split(strings.TrimSpace(mustRun(t, "dpkg-deb", "-c", deb)), "\n") {
				f := strings.Fields(line)
				if len(f) < 6 {
					t.Fatalf("dpkg-deb -c: %q", line)
				}
				entries[strings.TrimPrefix(f[5], ".")] = debEntry{f[0], f[1]}
			}
			wantFiles := map[string]string{
				pkgBinary: "-rwxr-xr-x",
				pkgUnit:   "-rw-r--r--",
				pkgRules:  "-rw-r--r--",
				pkgEnv:    "-rw-------", // may hold the broker password
				pkgDoc:    "-rw-r--r--",
				pkgCopy:   "-rw-r--r--",
			}
			for path, e := range entries {
				if e.owner != "root/root" {
					t.Errorf("%s owned by %s, want root/root", path, e.owner)
				}
				if strings.HasPrefix(e.mode, "d") {
					continue
				}
				if _, ok := wantFiles[path]; !ok {
					t.Errorf("unexpected file %s", path)
				}
			}
			for path, mode := range wantFiles {
				if e, ok := entries[path]; !ok {
					t.Errorf("%s missing", path)
				} else if e.mode != mode {
					t.Errorf("%s mode %s, want %s", path, e.mode, mode)
				}
			}

			// Control archive: conffiles, maintainer scripts, md5sums.
			ctrl := t.TempDir()
			mustRun(t, "dpkg-deb", "-e", deb, ctrl)
			conffiles, err := os.ReadFile(filepath.Join(ctrl, "conffiles"))
			if err != nil {
				t.Fatal(err)
			}
			if string(conffiles) != pkgEnv+"\n" {
				t.Errorf("conffiles = %q, want %q", conffiles, pkgEnv+"\n")
			}
			for _, s := range []string{"postinst", "prerm", "postrm"} {
				p := filepath.Join(ctrl, s)
				fi, err := os.Stat(p)
				if err != nil {
					t.Errorf("no %s: %v", s, err)
					continue
				}
				if fi.Mode().Perm() != 0o755 {
					t.Errorf("%s mode %v, want 0755", s, fi.Mode().Perm())
				}
				b, _ := os.ReadFile(p)
				if !bytes.HasPrefix(b, []byte("#!/bin/sh\n")) || !bytes.Contains(b, []byte("\nset -e\n")) {
					t.Errorf("%s: want a #!/bin/sh script with set -e", s)
				}
				if r := run(t, time.Minute, "sh", "-n", p); r.code != 0 {
					t.Errorf("%s: syntax error: %s", s, r.stderr)
				}
			}

			// Data: the binary make pi built, the files from packaging/deb and docs/, and sums.
			data := t.TempDir()
			mustRun(t, "dpkg-deb", "-x", deb, data)
			sameFile(t, filepath.Join(data, pkgBinary), filepath.Join(dir, a.binary))
			sameFile(t, filepath.Join(data, pkgUnit), filepath.Join(testenv.RepoRoot(t), "packaging", "deb", "trenzinho-bridge.service"))
			sameFile(t, filepath.Join(data, pkgRules), filepath.Join(testenv.RepoRoot(t), "packaging", "deb", "70-trenzinho-bridge.rules"))
			sameFile(t, filepath.Join(data, pkgEnv), filepath.Join(testenv.RepoRoot(t), "packaging", "deb", "bridge.env"))
			sameFile(t, filepath.Join(data, pkgDoc), filepath.Join(testenv.RepoRoot(t), "docs", "bridge.md"))
			checkMD5Sums(t, filepath.Join(ctrl, "md5sums"), data, wantFiles)
			checkCopyright(t, filepath.Join(data, pkgCopy), filepath.Join(dir, a.binary))
		})
	}
}

func sameFile(t *testing.T, got, want string) {
	t.Helper()
	g, err := os.ReadFile(got)
	if err != nil {
		t.Error(err)
		return
	}
	w, err := os.ReadFile(want)
	if err != nil {
		t.Error(err)
		return
	}
	if !bytes.Equal(g, w) {
		t.Errorf("%s in the package differs from %s", filepath.Base(got), want)
	}
}

// checkMD5Sums checks DEBIAN/md5sums against the unpacked data: every file but the conffiles
// listed with its right sum.
func checkMD5Sums(t *testing.T, sums, data string, files map[string]string) {
	t.Helper()
	b, err := os.ReadFile(sums)
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		sum, path, ok := strings.Cut(line, "  ")
		if !ok {
			t.Errorf("md5sums: %q", line)
			continue
		}
		listed["/"+path] = true
		content, err := os.ReadFile(filepath.Join(data, path))
		if err != nil {
			t.Errorf("md5sums lists %s: %v", path, err)
			continue
		}
		if h := md5.Sum(content); hex.EncodeToString(h[:]) != sum {
			t.Errorf("md5sums: wrong sum for %s", path)
		}
	}
	for path := range files {
		if want := path != pkgEnv; listed[path] != want {
			t.Errorf("md5sums lists %s: %v, want %v", path, listed[path], want)
		}
	}
}

// checkCopyright checks that the copyright file is in the machine-readable format and names
// every Go module linked into the binary.
func checkCopyright(t *testing.T, path, binary string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	text := string(b)
	if !strings.HasPrefix(text, "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/\n") {
		t.Error("copyright: not in the Debian machine-readable format")
	}
	field := regexp.MustCompile(`^[A-Za-z-]+:( |$)`)
	for i, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		if line != "" && !strings.HasPrefix(line, " ") && !field.MatchString(line) {
			t.Errorf("copyright line %d is neither a field nor a continuation: %q", i+1, line)
			break
		}
	}
	bi, err := buildinfo.ReadFile(binary)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text, "Go runtime and standard library") {
		t.Error("copyright: no license of the Go runtime")
	}
	for _, dep := range bi.Deps {
		if !strings.Contains(text, "==== "+dep.Path+" "+dep.Version+":") {
			t.Errorf("copyright: no license text of Go module %s %s", dep.Path, dep.Version)
		}
	}
}

// unitFile is a parsed systemd unit: section → key → values in order.
type unitFile map[string]map[string][]string

func parseUnit(t *testing.T, b []byte) unitFile {
	t.Helper()
	u := unitFile{}
	section := ""
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			section = line[1 : len(line)-1]
			if u[section] != nil {
				t.Errorf("unit line %d: section [%s] twice", n, section)
			}
			u[section] = map[string][]string{}
		default:
			k, v, ok := strings.Cut(line, "=")
			if !ok || section == "" || strings.HasSuffix(line, "\\") {
				t.Fatalf("unit line %d: %q is not Key=value in a section", n, line)
			}
			k = strings.TrimSpace(k)
			u[section][k] = append(u[section][k], strings.TrimSpace(v))
		}
	}
	return u
}

// get returns the last value of a key ("" when absent).
func (u unitFile) get(section, key string) string {
	vs := u[section][key]
	if len(vs) == 0 {
		return ""
	}
	return vs[len(vs)-1]
}

// runSettings returns the settings of firmware-bridge run as --help lists them: environment
// variable → default ("" when none).
func runSettings(t *testing.T) map[string]string {
	t.Helper()
	r := run(t, time.Minute, native(t), "run", "--help")
	if r.code != 0 {
		t.Fatalf("firmware-bridge run --help: exit status %d\n%s", r.code, r.stderr)
	}
	re := regexp.MustCompile(`\(env (TRENZINHO_[A-Z0-9_]+)\)(?: \(default "?([^")]*)"?\))?`)
	settings := map[string]string{}
	for _, m := range re.FindAllStringSubmatch(string(r.stdout)+string(r.stderr), -1) {
		settings[m[1]] = m[2]
	}
	if len(settings) < 10 {
		t.Fatalf("firmware-bridge run --help lists only %d settings", len(settings))
	}
	return settings
}

// parseSystemdDuration reads a systemd time span such as "60s", "1min" or "30".
func parseSystemdDuration(s string) (time.Duration, error) {
	if n, err := strconv.Atoi(s); err == nil {
		return time.Duration(n) * time.Second, nil
	}
	return time.ParseDuration(strings.NewReplacer("min", "m", "sec", "s").Replace(s))
}

// TestUnitFile checks the systemd unit: what it must say, what it must not, that it agrees
// with the program and the package, and that systemd-analyze verify accepts it.
func TestUnitFile(t *testing.T) {
	src := source(t, "trenzinho-bridge.service")
	u := parseUnit(t, src)
	for _, c := range []struct{ section, key, want string }{
		{"Unit", "StartLimitIntervalSec", "0"},
		{"Service", "Type", "notify"},
		{"Service", "NotifyAccess", "main"},
		{"Service", "Restart", "always"},
		{"Service", "User", serviceUser},
		{"Service", "Group", serviceUser},
		{"Service", "SupplementaryGroups", "dialout"},
		{"Service", "NoNewPrivileges", "yes"},
		{"Service", "ProtectSystem", "strict"},
		{"Service", "StateDirectory", "trenzinho-bridge"},
		{"Service", "PrivateTmp", "yes"},
		{"Service", "ProtectHome", "yes"},
		{"Service", "CapabilityBoundingSet", ""},
		{"Service", "AmbientCapabilities", ""},
		{"Service", "EnvironmentFile", pkgEnv},
		{"Service", "ExecStart", pkgBinary + " run"},
		{"Install", "WantedBy", "multi-user.target"},
	} {
		if _, ok := u[c.section][c.key]; !ok {
			t.Errorf("[%s] %s= missing", c.section, c.key)
		} else if got := u.get(c.section, c.key); got != c.want {
			t.Errorf("[%s] %s=%s, want %q", c.section, c.key, got, c.want)
		}
	}
	// Each of these hides or denies the serial ports (ProtectClock= implies a device list).
	for _, k := range []string{"PrivateDevices", "DevicePolicy", "DeviceAllow", "ProtectClock", "PrivateUsers", "DynamicUser"} {
		if _, ok := u["Service"][k]; ok {
			t.Errorf("[Service] %s= must not be set: the bridge opens /dev/ttyUSB* and /dev/ttyACM*", k)
		}
	}
	if !strings.Contains(u.get("Service", "ExecCondition"), "TRENZINHO_VEHICLE") {
		t.Error("ExecCondition= does not check TRENZINHO_VEHICLE")
	}

	// The unit agrees with the program: state directory and watchdog against batch interval.
	settings := runSettings(t)
	stateDir := "/var/lib/" + u.get("Service", "StateDirectory")
	if settings["TRENZINHO_STATE_DIR"] != stateDir {
		t.Errorf("the program's default state directory is %q, the unit's %q", settings["TRENZINHO_STATE_DIR"], stateDir)
	}
	if !slices.Contains(u["Service"]["Environment"], "TRENZINHO_STATE_DIR="+stateDir) {
		t.Errorf("Environment= does not pin TRENZINHO_STATE_DIR=%s", stateDir)
	}
	wd, err := parseSystemdDuration(u.get("Service", "WatchdogSec"))
	if err != nil {
		t.Fatalf("WatchdogSec=%s: %v", u.get("Service", "WatchdogSec"), err)
	}
	batch, err := time.ParseDuration(settings["TRENZINHO_BATCH_INTERVAL"])
	if err != nil {
		t.Fatalf("default batch interval %q: %v", settings["TRENZINHO_BATCH_INTERVAL"], err)
	}
	if wd < 3*batch {
		t.Errorf("WatchdogSec=%s is less than three batch intervals (%s)", wd, batch)
	}

	// systemd-analyze verify, in a root holding the unit, its commands and the host's units.
	analyze, err := exec.LookPath("systemd-analyze")
	if err != nil {
		t.Log("systemd-analyze not found: structural checks only")
		return
	}
	rootDir := t.TempDir()
	unitDir := filepath.Join(rootDir, "lib", "systemd", "system")
	for _, d := range []string{unitDir, filepath.Join(rootDir, "usr", "bin"), filepath.Join(rootDir, "bin"), filepath.Join(rootDir, "etc", "trenzinho")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if host, err := filepath.EvalSymlinks("/lib/systemd/system"); err == nil {
		mustRun(t, "cp", "-a", host+"/.", unitDir+"/")
	}
	sh, err := filepath.EvalSymlinks("/bin/sh")
	if err != nil {
		t.Fatal(err)
	}
	copyFile(t, sh, filepath.Join(rootDir, "bin", "sh"), 0o755)
	copyFile(t, native(t), filepath.Join(rootDir, pkgBinary), 0o755)
	if err := os.WriteFile(filepath.Join(unitDir, "trenzinho-bridge.service"), src, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rootDir, pkgEnv), source(t, "bridge.env"), 0o600); err != nil {
		t.Fatal(err)
	}
	r := run(t, time.Minute, analyze, "verify", "--root="+rootDir, pkgUnit)
	// verify warns about unknown keys and bad values but exits 0: any output is a failure.
	if r.code != 0 || len(bytes.TrimSpace(r.stdout)) > 0 || len(bytes.TrimSpace(r.stderr)) > 0 {
		t.Errorf("systemd-analyze verify: exit status %d\n%s%s", r.code, r.stdout, r.stderr)
	}
}

func copyFile(t *testing.T, from, to string, mode os.FileMode) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, mode); err != nil {
		t.Fatal(err)
	}
}

// envLine matches a setting of bridge.env, active or commented out.
var envLine = regexp.MustCompile(`^(#?)(TRENZINHO_[A-Z0-9_]+)=(.*)$`)

// envSettings returns the active settings of bridge.env.
func envSettings(t *testing.T) map[string]string {
	t.Helper()
	active := map[string]string{}
	for _, line := range strings.Split(string(source(t, "bridge.env")), "\n") {
		if m := envLine.FindStringSubmatch(line); m != nil && m[1] == "" {
			active[m[2]] = m[3]
		}
	}
	return active
}

// TestEnvFile checks /etc/trenzinho/bridge.env: every setting of firmware-bridge run is there
// exactly once, documented by the comment above it, in a form systemd and sh read alike.
func TestEnvFile(t *testing.T) {
	b := source(t, "bridge.env")
	if !utf8.Valid(b) {
		t.Fatal("bridge.env is not UTF-8")
	}
	settings := runSettings(t)
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	seen := map[string]int{}
	active := regexp.MustCompile(`^TRENZINHO_[A-Z0-9_]+=[^\s'"\\$` + "`" + `]*$`)
	for i, line := range lines {
		m := envLine.FindStringSubmatch(line)
		if m == nil {
			if line != "" && !strings.HasPrefix(line, "#") {
				t.Errorf("line %d: %q is neither a comment nor NAME=value", i+1, line)
			}
			continue
		}
		name := m[2]
		seen[name]++
		if _, ok := settings[name]; !ok {
			t.Errorf("line %d: %s is not a setting of firmware-bridge run", i+1, name)
		}
		if m[1] == "" && !active.MatchString(line) {
			t.Errorf("line %d: %q: keep values free of spaces, quotes and $ so that systemd and sh read them alike", i+1, line)
		}
		// Documented: the nearest line above the group of settings it belongs to is a comment.
		j := i - 1
		for j >= 0 && envLine.MatchString(lines[j]) {
			j--
		}
		if j < 0 || !strings.HasPrefix(lines[j], "# ") {
			t.Errorf("line %d: %s has no comment above it", i+1, name)
		}
	}
	for name := range settings {
		if seen[name] != 1 {
			t.Errorf("%s appears %d times in bridge.env, want once", name, seen[name])
		}
	}
	env := envSettings(t)
	if v, ok := env["TRENZINHO_VEHICLE"]; !ok || v != "" {
		t.Errorf("TRENZINHO_VEHICLE=%q: the package ships it present and empty (the unit's ExecCondition waits for it)", v)
	}
	if _, ok := env["TRENZINHO_STATE_DIR"]; ok {
		t.Error("TRENZINHO_STATE_DIR is set: the unit lets the service write only to its StateDirectory")
	}
}

// udevRule matches one key, operator and value of a udev rule.
var udevRule = regexp.MustCompile(`^([A-Z_]+(?:\{[^}]+\})?)(==|!=|\+=|-=|:=|=)"([^"]*)"$`)

// TestUdevRules checks the udev rules: each active rule names one adapter by vendor:product
// and gives it one of the names the settings file uses.
func TestUdevRules(t *testing.T) {
	b := source(t, "70-trenzinho-bridge.rules")
	text := string(b)
	for _, hint := range []string{"udevadm info", "ATTRS{serial}", "/etc/udev/rules.d/70-trenzinho-bridge.rules", "ID_PATH"} {
		if !strings.Contains(text, hint) {
			t.Errorf("the rules' comments do not mention %s", hint)
		}
	}
	links := map[string]bool{}
	ids := map[string]string{}
	for n, line := range strings.Split(text, "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		kv := map[string]string{}
		for _, part := range strings.Split(line, ", ") {
			m := udevRule.FindStringSubmatch(part)
			if m == nil {
				t.Errorf("line %d: cannot read %q", n+1, part)
				continue
			}
			kv[m[1]+m[2]] = m[3]
		}
		hex4 := regexp.MustCompile(`^[0-9a-f]{4}$`)
		vendor, product := kv["ATTRS{idVendor}=="], kv["ATTRS{idProduct}=="]
		if kv["SUBSYSTEM=="] != "tty" || !hex4.MatchString(vendor) || !hex4.MatchString(product) {
			t.Errorf("line %d: want SUBSYSTEM==\"tty\" and a lower-case ATTRS{idVendor}, ATTRS{idProduct}", n+1)
		}
		link := kv["SYMLINK+="]
		if !regexp.MustCompile(`^trenzinho-(gps|tacho|slm)$`).MatchString(link) {
			t.Errorf("line %d: SYMLINK+=%q, want trenzinho-gps, -tacho or -slm", n+1, link)
		}
		if kv["ENV{ID_MM_DEVICE_IGNORE}="] != "1" {
			t.Errorf("line %d: ModemManager is not told to leave the port alone", n+1)
		}
		id := vendor + ":" + product
		if prev, ok := ids[id]; ok {
			t.Errorf("line %d: %s named both %s and %s: one adapter would get both names", n+1, id, prev, link)
		}
		ids[id] = link
		links[link] = true
	}
	for _, id := range []string{"0403:6001", "067b:2303", "1a86:7523", "10c4:ea60", "1546:01a7"} {
		if _, ok := ids[id]; !ok {
			t.Errorf("no rule for %s", id)
		}
	}
	// Every port the settings file points at has a rule.
	for name, v := range envSettings(t) {
		if strings.HasSuffix(name, "_PORT") && v != "" {
			if !links[strings.TrimPrefix(v, "/dev/")] {
				t.Errorf("%s=%s: no udev rule makes that name", name, v)
			}
		}
	}
	// udevadm verify exists from systemd 253 on.
	if udevadm, err := exec.LookPath("udevadm"); err == nil {
		if run(t, time.Minute, udevadm, "verify", "--help").code == 0 {
			p := filepath.Join(testenv.RepoRoot(t), "packaging", "deb", "70-trenzinho-bridge.rules")
			if r := run(t, time.Minute, udevadm, "verify", p); r.code != 0 {
				t.Errorf("udevadm verify: %s%s", r.stdout, r.stderr)
			}
		}
	}
}

// TestMaintainerScripts runs postinst, prerm and postrm as dpkg would, with the commands they
// call replaced by stubs that record their arguments and with the system paths they test
// moved into a temporary directory.
func TestMaintainerScripts(t *testing.T) {
	if sc, err := exec.LookPath("shellcheck"); err == nil {
		dir := filepath.Join(testenv.RepoRoot(t), "packaging")
		r := run(t, time.Minute, sc, "-s", "sh", filepath.Join(dir, "deb", "postinst"), filepath.Join(dir, "deb", "prerm"), filepath.Join(dir, "deb", "postrm"))
		if r.code != 0 {
			t.Errorf("shellcheck:\n%s", r.stdout)
		}
		if r := run(t, time.Minute, sc, filepath.Join(dir, "build-deb.sh")); r.code != 0 {
			t.Errorf("shellcheck build-deb.sh:\n%s", r.stdout)
		}
	}

	type env struct {
		systemd, udev, stateDir, userExists bool
		vehicle                             string
	}
	// script runs one maintainer script and returns the stub calls and its output.
	script := func(t *testing.T, name string, e env, args ...string) (calls []string, out string) {
		t.Helper()
		dir := t.TempDir()
		stubs := filepath.Join(dir, "bin")
		if err := os.Mkdir(stubs, 0o755); err != nil {
			t.Fatal(err)
		}
		log := filepath.Join(dir, "calls")
		for _, s := range []string{"getent", "addgroup", "adduser", "install", "udevadm", "deb-systemd-helper", "deb-systemd-invoke", "systemctl"} {
			code := "0"
			if s == "getent" && !e.userExists {
				code = "2"
			}
			stub := fmt.Sprintf("#!/bin/sh\necho \"%s $*\" >>%q\nexit %s\n", s, log, code)
			if err := os.WriteFile(filepath.Join(stubs, s), []byte(stub), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		paths := map[string]string{
			"/run/systemd/system":       filepath.Join(dir, "run", "systemd", "system"),
			"/run/udev":                 filepath.Join(dir, "run", "udev"),
			"/var/lib/trenzinho-bridge": filepath.Join(dir, "state"),
			pkgEnv:                      filepath.Join(dir, "bridge.env"),
		}
		for path, exists := range map[string]bool{"/run/systemd/system": e.systemd, "/run/udev": e.udev, "/var/lib/trenzinho-bridge": e.stateDir} {
			if exists {
				if err := os.MkdirAll(paths[path], 0o755); err != nil {
					t.Fatal(err)
				}
			}
		}
		envFile := strings.Replace(string(source(t, "bridge.env")), "\nTRENZINHO_VEHICLE=\n", "\nTRENZINHO_VEHICLE="+e.vehicle+"\n", 1)
		if err := os.WriteFile(paths[pkgEnv], []byte(envFile), 0o600); err != nil {
			t.Fatal(err)
		}
		text := string(source(t, name))
		for from, to := range paths {
			text = strings.ReplaceAll(text, from, to)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o755); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command("/bin/sh", append([]string{p}, args...)...)
		cmd.Env = []string{"PATH=" + stubs + ":/usr/bin:/bin", "LC_ALL=C"}
		b, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, b)
		}
		if l, err := os.ReadFile(log); err == nil {
			calls = strings.Split(strings.TrimSpace(string(l)), "\n")
		}
		if e.stateDir {
			if _, err := os.Stat(paths["/var/lib/trenzinho-bridge"]); err != nil {
				t.Errorf("%s %s removed the state directory", name, strings.Join(args, " "))
			}
		}
		return calls, strings.ReplaceAll(string(b), dir, "")
	}
	// inOrder checks that want occur in calls in this order, each as the prefix of a call.
	inOrder := func(t *testing.T, calls []string, want ...string) {
		t.Helper()
		i := 0
		for _, c := range calls {
			if i < len(want) && strings.HasPrefix(c, want[i]) {
				i++
			}
		}
		if i < len(want) {
			t.Errorf("no call %q (in this order) among:\n  %s", want[i], strings.Join(calls, "\n  "))
		}
	}
	absent := func(t *testing.T, calls []string, prefixes ...string) {
		t.Helper()
		for _, c := range calls {
			for _, p := range prefixes {
				if strings.HasPrefix(c, p) {
					t.Errorf("unexpected call %q", c)
				}
			}
		}
	}
	const unit = "trenzinho-bridge.service"

	t.Run("install", func(t *testing.T) {
		calls, out := script(t, "postinst", env{systemd: true, udev: true}, "configure")
		inOrder(t, calls,
			"addgroup --system", "adduser --system", "adduser --quiet trenzinho dialout",
			"install -d -o trenzinho -g trenzinho -m 0750",
			"udevadm control --reload-rules", "udevadm trigger",
			"deb-systemd-helper enable "+unit, "systemctl --system daemon-reload", "deb-systemd-invoke start "+unit)
		if !strings.Contains(out, "TRENZINHO_VEHICLE") {
			t.Errorf("postinst does not tell the installer to set TRENZINHO_VEHICLE; it printed %q", out)
		}
	})
	t.Run("upgrade", func(t *testing.T) {
		calls, out := script(t, "postinst", env{systemd: true, udev: true, stateDir: true, userExists: true, vehicle: "PIU-001"}, "configure", "0.9.0")
		inOrder(t, calls, "adduser --quiet trenzinho dialout", "deb-systemd-invoke restart "+unit)
		absent(t, calls, "addgroup", "adduser --system", "install ")
		if out != "" {
			t.Errorf("postinst printed %q on a configured upgrade", out)
		}
	})
	t.Run("install-without-systemd-running", func(t *testing.T) {
		calls, _ := script(t, "postinst", env{}, "configure")
		inOrder(t, calls, "deb-systemd-helper enable "+unit)
		absent(t, calls, "systemctl", "deb-systemd-invoke", "udevadm")
	})
	t.Run("remove", func(t *testing.T) {
		calls, _ := script(t, "prerm", env{systemd: true, stateDir: true}, "remove")
		inOrder(t, calls, "deb-systemd-invoke stop "+unit)
		calls, _ = script(t, "postrm", env{systemd: true, udev: true, stateDir: true}, "remove")
		inOrder(t, calls, "deb-systemd-helper mask "+unit, "systemctl --system daemon-reload", "udevadm control --reload-rules")
	})
	t.Run("upgrade-prerm", func(t *testing.T) {
		calls, _ := script(t, "prerm", env{systemd: true}, "upgrade", "1.0.0")
		absent(t, calls, "deb-systemd-invoke")
	})
	t.Run("purge", func(t *testing.T) {
		calls, out := script(t, "postrm", env{systemd: true, stateDir: true}, "purge")
		inOrder(t, calls, "deb-systemd-helper purge "+unit, "deb-systemd-helper unmask "+unit)
		if !strings.Contains(out, "kept") {
			t.Errorf("postrm purge does not say it kept the spool: %q", out)
		}
	})
}

// TestServiceNotifiesSystemd starts firmware-bridge run as the unit does (Type=notify,
// WatchdogSec=) with the shipped settings, and checks that it tells systemd it is ready and
// keeps the watchdog fed; systemd would otherwise fail the start or kill the bridge.
func TestServiceNotifiesSystemd(t *testing.T) {
	u := parseUnit(t, source(t, "trenzinho-bridge.service"))
	if u.get("Service", "Type") != "notify" && u.get("Service", "WatchdogSec") == "" {
		t.Skip("the unit expects no notifications")
	}
	dir := t.TempDir()
	sock := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: sock, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	var environ []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TRENZINHO_") && !strings.HasPrefix(kv, "NOTIFY_SOCKET=") && !strings.HasPrefix(kv, "WATCHDOG_") {
			environ = append(environ, kv)
		}
	}
	for k, v := range envSettings(t) {
		environ = append(environ, k+"="+v)
	}
	environ = append(environ,
		"TRENZINHO_VEHICLE=TEST-001",
		"TRENZINHO_STATE_DIR="+filepath.Join(dir, "state"),
		"TRENZINHO_MQTT_URL=tcp://127.0.0.1:1", // nothing listens: the bridge spools
		"TRENZINHO_GPS_PORT="+filepath.Join(dir, "no-gps"),
		"TRENZINHO_TACHO_PORT="+filepath.Join(dir, "no-tacho"),
		"TRENZINHO_SLM_PORT="+filepath.Join(dir, "no-slm"),
		"NOTIFY_SOCKET="+sock,
		"WATCHDOG_USEC=2000000",
	)
	cmd := exec.Command(native(t), "run")
	cmd.Env = environ
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	stopped := false
	defer func() {
		if !stopped {
			_ = cmd.Process.Kill()
			<-exited
		}
	}()

	// wait reads notifications until one holds state or the time is up.
	wait := func(state string, timeout time.Duration) bool {
		deadline := time.Now().Add(timeout)
		buf := make([]byte, 4096)
		for time.Now().Before(deadline) {
			_ = conn.SetReadDeadline(deadline)
			n, err := conn.Read(buf)
			if err != nil {
				return false
			}
			if slices.Contains(strings.Split(string(buf[:n]), "\n"), state) {
				return true
			}
		}
		return false
	}
	if !wait("READY=1", 20*time.Second) {
		t.Fatalf("firmware-bridge run sent no READY=1 within 20 s, but the unit says Type=notify: "+
			"systemd would fail its start (wire firmware-bridge/sdnotify into the run command)\n%s", stderr.String())
	}
	if !wait("WATCHDOG=1", 5*time.Second) {
		t.Fatalf("firmware-bridge run sent no WATCHDOG=1 within 5 s with WATCHDOG_USEC=2000000: systemd would kill it\n%s", stderr.String())
	}
	if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		stopped = true
		if err != nil {
			t.Errorf("firmware-bridge run on SIGTERM: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Errorf("firmware-bridge run did not stop within 20 s of SIGTERM\n%s", stderr.String())
	}
}
