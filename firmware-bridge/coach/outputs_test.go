package coach

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/firmware-bridge/gpio"
)

// fileLine is a real value-file line that reads the file back after every write, so that the
// test sees what a GPIO's value file went through.
type fileLine struct {
	l    *gpio.ValueFile
	path string
	mu   sync.Mutex
	seen []string
}

func newFileLine(t *testing.T, name string) *fileLine {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte("0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l, err := gpio.OpenValueFile(path, false)
	if err != nil {
		t.Fatal(err)
	}
	return &fileLine{l: l, path: path}
}

func (f *fileLine) Set(on bool) error {
	if err := f.l.Set(on); err != nil {
		return err
	}
	b, err := os.ReadFile(f.path)
	f.mu.Lock()
	f.seen = append(f.seen, strings.TrimSpace(string(b)))
	f.mu.Unlock()
	return err
}

func (f *fileLine) values() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return strings.Join(f.seen, "")
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestOutputsPatternOnValueFiles(t *testing.T) {
	buzzer, led := newFileLine(t, "buzzer"), newFileLine(t, "led")
	o := &Outputs{Buzzer: buzzer, LED: led, Logger: quiet}
	o.Start()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { o.Run(ctx, func() State { return State{} }, 0); close(done) }()
	o.Warn(Warning{Kind: KindSiteSound})
	// Three long beeps: on, off, on, off, on, then off at the end of the pattern.
	want := "101010"
	waitFor(t, "the site_sound pattern", func() bool { return len(buzzer.values()) >= len(want) })
	cancel()
	<-done
	if got := buzzer.values(); !strings.HasPrefix(got, want) || got[len(got)-1] != '0' {
		t.Errorf("buzzer value file went %q, want %q then off", got, want)
	}
	if got := led.values(); !strings.HasPrefix(got, want) {
		t.Errorf("LED value file went %q, want %q", got, want)
	}
}

func TestLimiterFollowsStateAndFailsSafe(t *testing.T) {
	relay := newFileLine(t, "relay")
	var on atomic.Bool
	o := &Outputs{Limiter: relay, Logger: quiet}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { o.Run(ctx, func() State { return State{Limiter: on.Load()} }, 5*time.Millisecond); close(done) }()
	on.Store(true)
	waitFor(t, "the relay on", func() bool { return strings.HasSuffix(relay.values(), "1") })
	on.Store(false)
	waitFor(t, "the relay off", func() bool { return strings.HasSuffix(relay.values(), "10") })
	on.Store(true)
	waitFor(t, "the relay on again", func() bool { return strings.HasSuffix(relay.values(), "101") })
	cancel() // the bridge stops: the relay is released, the sound system untouched
	<-done
	if got := relay.values(); !strings.HasSuffix(got, "1010") {
		t.Errorf("relay value file went %q; want released (0) when the coach stops", got)
	}
}

func TestEveryKindHasAPattern(t *testing.T) {
	for _, k := range Kinds {
		if len(Patterns[k]) == 0 {
			t.Errorf("kind %s has no pattern", k)
		}
	}
}
