package config

import (
	"flag"
	"io"
	"testing"
	"time"
)

func TestEnvThenFlag(t *testing.T) {
	env := map[string]string{"TRENZINHO_MQTT_URL": "tcp://env:1883", "TRENZINHO_GAP": "90s", "TRENZINHO_N": "x"}
	lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }

	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	b := &Binder{FS: fs, Lookup: lookup}
	var m MQTT
	var gap time.Duration
	b.BindMQTT(&m)
	b.Duration(&gap, "TRENZINHO_GAP", time.Minute, "gap")
	if err := b.Parse([]string{"--mqtt-user", "flaguser"}); err != nil {
		t.Fatal(err)
	}
	if m.URL != "tcp://env:1883" || m.User != "flaguser" || gap != 90*time.Second {
		t.Fatalf("got %+v gap %v", m, gap)
	}

	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	b = &Binder{FS: fs, Lookup: lookup}
	b.BindMQTT(&m)
	if err := b.Parse([]string{"--mqtt-url", "tcp://flag:1"}); err != nil || m.URL != "tcp://flag:1" {
		t.Fatalf("flag must override env: %v %q", err, m.URL)
	}

	fs = flag.NewFlagSet("t", flag.ContinueOnError)
	b = &Binder{FS: fs, Lookup: lookup}
	var n int
	b.Int(&n, "TRENZINHO_N", 3, "n")
	if err := b.Parse(nil); err == nil {
		t.Fatal("bad integer in the environment must be an error")
	}
}

func TestFlagName(t *testing.T) {
	if got := FlagName("TRENZINHO_METRICS_LISTEN"); got != "metrics-listen" {
		t.Fatal(got)
	}
}

func TestLogger(t *testing.T) {
	if _, err := Logger(io.Discard, "debug"); err != nil {
		t.Fatal(err)
	}
	if _, err := Logger(io.Discard, "loud"); err == nil {
		t.Fatal("an unknown log level must be an error, not silently info")
	}
}
