// Package harness starts and watches the real processes that the integration tests and the load
// tests run — Mosquitto with the repository's configuration, InfluxDB 1.8.3, the project's own
// programs — on free loopback ports, and reads what /proc says of them. Every function returns
// an error: internal/testenv wraps them for tests (testing.TB), the load tests
// (ingest/loadtest, monitor/loadtest) call them directly.
package harness

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

// module is the module path whose go.mod RepoRoot looks for.
const module = "github.com/trenzinho/trenzinho"

// RepoRoot returns the repository root: the nearest directory above the working directory
// holding this module's go.mod.
func RepoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if b, err := os.ReadFile(filepath.Join(dir, "go.mod")); err == nil && strings.Contains(string(b), "module "+module+"\n") {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("the go.mod of %s is not above the working directory", module)
		}
		dir = parent
	}
}

// ErrMissing is wrapped by the errors of a program that is not installed.
var ErrMissing = errors.New("not installed")

// LookBinary finds a program: the environment variable env, the repository's .tools/bin, PATH,
// then /usr/sbin and /usr/local/sbin (where Debian puts mosquitto). It returns "" when none has it.
func LookBinary(root, env, name string) string {
	if p := os.Getenv(env); p != "" {
		return p
	}
	if p := filepath.Join(root, ".tools", "bin", name); isFile(p) {
		return p
	}
	if p, err := exec.LookPath(name); err == nil {
		return p
	}
	for _, d := range []string{"/usr/sbin", "/usr/local/sbin"} {
		if p := filepath.Join(d, name); isFile(p) {
			return p
		}
	}
	return ""
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && !st.IsDir()
}

// FreePorts returns n distinct TCP ports on 127.0.0.1 that were free a moment ago.
//
// They are drawn at random below the kernel's ephemeral range (ip_local_port_range), and
// checked free by listening on them. A port the kernel picked for "127.0.0.1:0" would be in
// that range, and once released it is the kernel's again for the next outgoing connection or
// port-0 listener of any process: on a loaded machine running many tests, a server started a
// moment later on it found it taken. Below the range, only a process binding that very port
// can take it. Without the range (not Linux) the kernel picks.
func FreePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			l.Close()
		}
	}()
	lo, hi := belowEphemeral()
	for tries := 0; len(ports) < n && hi > lo && tries < 1000; tries++ {
		p := lo + rand.IntN(hi-lo)
		if slices.Contains(ports, p) {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		ls = append(ls, l)
		ports = append(ports, p)
	}
	for len(ports) < n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		ls = append(ls, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

// belowEphemeral is the range FreePorts draws from: the 12,000 ports below the kernel's
// ephemeral range, not below 10,000 (empty when the range is unknown or starts too low).
func belowEphemeral() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err != nil {
		return 0, 0
	}
	f := strings.Fields(string(b))
	if len(f) != 2 {
		return 0, 0
	}
	start, err := strconv.Atoi(f[0])
	if err != nil {
		return 0, 0
	}
	return max(10000, start-12000), start
}

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	p, err := FreePorts(1)
	if err != nil {
		return 0, err
	}
	return p[0], nil
}

// WaitTCP waits until addr accepts connections or the timeout passes.
func WaitTCP(addr string, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("%s not accepting connections after %s: %w", addr, timeout, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// WaitHTTP waits until GET url answers status, p exits, ctx ends, or the timeout passes.
func WaitHTTP(ctx context.Context, p *Process, url string, status int, timeout time.Duration) error {
	deadline := time.Now().Add(timeout)
	c := http.Client{Timeout: 10 * time.Second}
	for {
		resp, err := c.Get(url)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == status {
				return nil
			}
			err = fmt.Errorf("status %s", resp.Status)
		}
		if !p.Running() {
			return fmt.Errorf("%s exited", p.Name)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("GET %s: no %d after %s: %w", url, status, timeout, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// Scrape reads the Prometheus text exposition at url: "name{labels}" → value.
func Scrape(url string) (map[string]float64, error) {
	resp, err := http.Get(url)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s", url, resp.Status)
	}
	return ParseMetrics(resp.Body)
}

// ParseMetrics reads a Prometheus text exposition: "name{labels}" (as written) → value.
func ParseMetrics(r io.Reader) (map[string]float64, error) {
	out := map[string]float64{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 16<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if i < 0 || err != nil {
			return nil, fmt.Errorf("metrics line %q: not a sample", line)
		}
		out[line[:i]] = v
	}
	return out, sc.Err()
}

// Build builds the packages (as "./ingest") of the repository at root into the directory dir,
// one program per package named for its directory.
func Build(ctx context.Context, root, dir string, pkgs ...string) error {
	cmd := exec.CommandContext(ctx, "go", append([]string{"build", "-o", dir + string(filepath.Separator)}, pkgs...)...)
	cmd.Dir = root
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build %s: %v\n%s", strings.Join(pkgs, " "), err, out)
	}
	return nil
}
