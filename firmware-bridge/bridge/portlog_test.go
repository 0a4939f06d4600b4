package bridge

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/trenzinho/trenzinho/firmware-bridge/serialport"
)

// lockedBuffer is a log sink the test reads while the loop writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// count is how many log lines contain every one of subs.
func (b *lockedBuffer) count(subs ...string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	n := 0
	for _, line := range strings.Split(b.buf.String(), "\n") {
		all := line != ""
		for _, s := range subs {
			all = all && strings.Contains(line, s)
		}
		if all {
			n++
		}
	}
	return n
}

// TestPortLoopLogsAMissingPort: a configured port that does not exist is logged at start — the
// device starts as "missing" in the status, so that state's change cannot be what logs — and
// again each time the failure changes (the path becomes something that is not a serial port),
// after the port opened (a real pseudo-terminal) and was lost; retries of the same failure are
// not logged again.
func TestPortLoopLogsAMissingPort(t *testing.T) {
	link := filepath.Join(t.TempDir(), "ttyNOPE")
	logs := &lockedBuffer{}
	log := slog.New(slog.NewTextHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	st := newDeviceState("gps")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		portLoop(ctx, log, "gps", serialport.Config{Path: link, Baud: 9600}, st, func() {}, func(rw io.ReadWriter) error {
			buf := make([]byte, 256)
			for {
				if _, err := rw.Read(buf); err != nil {
					return err
				}
			}
		})
	}()
	defer func() {
		cancel()
		<-done
	}()
	missing := []string{"device missing", "device=gps", "port=" + link}

	eventually(t, "the missing port logged at start", func() bool { return logs.count(missing...) == 1 })
	if logs.count("no such file") != 1 {
		t.Errorf("the log does not say why:\n%s", logs.String())
	}
	// Retried after 1 s and 2 s more with the same failure (each retry logged at debug level):
	// not logged again as missing.
	eventually(t, "two retries", func() bool { return logs.count("port still does not open", "device=gps", "port="+link) >= 2 })
	before := logs.count(missing...)
	if before != 1 {
		t.Errorf("the same failure logged %d times, want once:\n%s", before, logs.String())
	}

	// The path becomes a directory: another failure, logged.
	if err := os.Mkdir(link, 0o755); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the changed failure logged", func() bool { return logs.count(missing...) == before+1 })
	if err := os.Remove(link); err != nil {
		t.Fatal(err)
	}

	// A real serial device appears under the name: opened, and logged.
	p := openPTY(t, link)
	eventually(t, "the port opened", func() bool { return logs.count("device open", "port="+link) == 1 })
	if n := logs.count(missing...); n != before+1 {
		t.Errorf("%d missing lines before the port opened, want %d (one per failure):\n%s", n, before+1, logs.String())
	}

	// Unplugged: lost, and missing again, logged once more.
	p.Close()
	eventually(t, "the port missing again", func() bool { return logs.count(missing...) == before+2 })
	if logs.count("device lost", "port="+link) != 1 {
		t.Errorf("the loss is not logged:\n%s", logs.String())
	}
}
