package harness

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"
)

// Influx is a real InfluxDB 1.8.3 with the Flux endpoint enabled, speaking the v2 write and
// query API through its 1.x compatibility layer (token "user:password", bucket "db/rp").
type Influx struct {
	*Process
	Port int // of the HTTP API
}

// InfluxVersion is the server the tests and the local run use (docs/storage.md §3).
const InfluxVersion = "v1.8.3"

// StartInflux starts influxd (bin; empty: LookBinary(root, "TRENZINHO_INFLUXD", "influxd")) on
// free loopback ports with its data, configuration and log in dir, and waits until it answers.
func StartInflux(ctx context.Context, root, dir, bin string) (*Influx, error) {
	if bin == "" {
		bin = LookBinary(root, "TRENZINHO_INFLUXD", "influxd")
	}
	if bin == "" {
		return nil, fmt.Errorf("influxd %w (go install github.com/influxdata/influxdb/cmd/influxd@%s into .tools/bin)", ErrMissing, InfluxVersion)
	}
	// A port that was free a moment ago may be taken by then on a busy machine: influxd then
	// exits at once, and starts again on other ports.
	for attempt := 1; ; attempt++ {
		i, err := startInflux(ctx, dir, bin)
		if err == nil || attempt == 3 || !errors.Is(err, errExited) {
			return i, err
		}
	}
}

// errExited: the server exited before it answered.
var errExited = errors.New("exited before it answered")

func startInflux(ctx context.Context, dir, bin string) (*Influx, error) {
	ports, err := FreePorts(2)
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "influxdb.conf")
	if err := os.WriteFile(path, []byte(InfluxConfig(dir, fmt.Sprintf("127.0.0.1:%d", ports[0]), fmt.Sprintf("127.0.0.1:%d", ports[1]))), 0o644); err != nil {
		return nil, err
	}
	i := &Influx{Port: ports[1]}
	if i.Process, err = Start(Command{Name: "influxd", LogFile: filepath.Join(dir, "influxd.log"), Argv: []string{bin, "-config", path}}); err != nil {
		return nil, err
	}
	if err := i.waitReady(ctx); err != nil {
		i.Kill()
		return nil, err
	}
	return i, nil
}

// InfluxConfig is the influxd 1.8 configuration for data under dir, the HTTP API on httpAddr and
// the RPC service (backup and restore) on rpcAddr: no reporting, no query log, no self-monitoring
// and no continuous queries. internal/localrun runs it too.
func InfluxConfig(dir, rpcAddr, httpAddr string) string {
	return fmt.Sprintf(`reporting-disabled = true
bind-address = %q
[meta]
  dir = %q
[data]
  dir = %q
  wal-dir = %q
  query-log-enabled = false
[http]
  bind-address = %q
  flux-enabled = true
  log-enabled = false
[logging]
  level = "warn"
[monitor]
  store-enabled = false
[continuous_queries]
  enabled = false
`, rpcAddr, filepath.Join(dir, "meta"), filepath.Join(dir, "data"), filepath.Join(dir, "wal"), httpAddr)
}

func (i *Influx) waitReady(ctx context.Context) error {
	// influxd initialises Flux before it listens: tens of seconds of CPU on a loaded machine.
	// It is waited for while it lives, and a failure to start shows at once as its exit.
	deadline := time.Now().Add(5 * time.Minute)
	c := http.Client{Timeout: 10 * time.Second}
	for {
		resp, err := c.Get(i.URL() + "/ping")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return nil
			}
		}
		if !i.Running() {
			return fmt.Errorf("influxd %w\n%s", errExited, i.Tail(4096))
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("influxd not ready: %v\n%s", err, i.Tail(4096))
		}
		select {
		case <-ctx.Done():
		case <-i.Done():
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// URL of the HTTP API.
func (i *Influx) URL() string { return fmt.Sprintf("http://127.0.0.1:%d", i.Port) }

// Restart starts a stopped or killed influxd again on the same data.
func (i *Influx) Restart(ctx context.Context) error {
	if err := i.Start(); err != nil {
		return err
	}
	return i.waitReady(ctx)
}

// InfluxQL runs an InfluxQL statement in database db (POST for statements that change
// something, GET for queries) and returns the response body.
func (i *Influx) InfluxQL(method, db, q string) ([]byte, error) {
	v := url.Values{"q": {q}, "db": {db}, "epoch": {"ms"}}
	var resp *http.Response
	var err error
	if method == http.MethodPost {
		resp, err = http.PostForm(i.URL()+"/query", v)
	} else {
		resp, err = http.Get(i.URL() + "/query?" + v.Encode())
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("influxql %q: %s: %s", q, resp.Status, b)
	}
	return b, nil
}
