package bridge

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

func siteWarning(t time.Time) wire.Warning {
	return wire.Warning{T: wire.NewTime(t), Kind: wire.WarningSiteSound, Rule: "sensitive_zone_sound", Site: "hospital-1",
		DistanceM: ptr(290.0), Value: ptr(74.2), Limit: ptr(65.0)}
}

// TestWarnClosesTheBatch: a warning goes in the open batch with the readings before it and
// closes that batch at once, without waiting for the interval; it is not counted as a reading.
func TestWarnClosesTheBatch(t *testing.T) {
	b := newTestBridge(t, Config{BatchInterval: time.Hour})
	base := time.Now().Truncate(time.Second)
	for i := range 3 {
		b.readings <- gpsReading(base.Add(time.Duration(i) * time.Second))
	}
	if err := b.Warn(siteWarning(base.Add(2500 * time.Millisecond))); err != nil {
		t.Fatal(err)
	}
	stop := runBatch(b)
	eventually(t, "the warning's batch in the spool", func() bool { return b.spool.LastSeq() == 1 })
	// A warning with no time takes the bridge's.
	before := time.Now().Add(-time.Second)
	if err := b.Warn(wire.Warning{Kind: wire.WarningSpeedOver, Rule: "speed", Value: ptr(31.0), Limit: ptr(30.0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the second warning's batch", func() bool { return b.spool.LastSeq() == 2 })
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	got := spooled(t, b)
	if len(got) != 2 {
		t.Fatalf("%d batches, want 2", len(got))
	}
	if got[0].Readings() != 3 || len(got[0].Warnings) != 1 || got[0].Warnings[0].Site != "hospital-1" || *got[0].Warnings[0].DistanceM != 290 {
		t.Errorf("first batch: %d readings, warnings %+v", got[0].Readings(), got[0].Warnings)
	}
	if got[1].Readings() != 0 || len(got[1].Warnings) != 1 || got[1].Warnings[0].T.Before(before) || got[1].Warnings[0].T.After(time.Now().Add(time.Second)) {
		t.Errorf("second batch: %d readings, warnings %+v", got[1].Readings(), got[1].Warnings)
	}
	if n := b.warned.Load(); n != 2 {
		t.Errorf("warnings_total %d, want 2", n)
	}
}

// TestWarnRefusesInvalid: a warning the receiver would reject is refused by Warn, so that it
// never takes a batch of readings down with it.
func TestWarnRefusesInvalid(t *testing.T) {
	b := newTestBridge(t, Config{BatchInterval: time.Hour})
	now := time.Now()
	for name, w := range map[string]wire.Warning{
		"unknown kind":  {T: wire.NewTime(now), Kind: "siren", Rule: "speed"},
		"no rule":       {T: wire.NewTime(now), Kind: wire.WarningSpeedNear},
		"bad distance":  {T: wire.NewTime(now), Kind: wire.WarningSiteSound, Rule: "sensitive_zone_sound", DistanceM: ptr(-3.0)},
		"site too long": {T: wire.NewTime(now), Kind: wire.WarningSiteSound, Rule: "sensitive_zone_sound", Site: strings.Repeat("x", wire.MaxSiteLen+1)},
	} {
		if err := b.Warn(w); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	if len(b.readings) != 0 || b.warned.Load() != 0 {
		t.Errorf("%d queued, %d counted", len(b.readings), b.warned.Load())
	}
	// A full queue refuses without blocking.
	for len(b.readings) < cap(b.readings) {
		b.readings <- gpsReading(now)
	}
	if err := b.Warn(siteWarning(now)); err != ErrWarningQueueFull {
		t.Errorf("Warn on a full queue: %v", err)
	}
}

const warnKillDirEnv = "BRIDGE_WARN_KILL_DIR"

// TestWarnKillChild is the process TestWarnSurvivesKill kills: it runs the batcher, hands it a
// warning, prints "W" once the warning's batch is in the spool, and waits to be killed.
func TestWarnKillChild(t *testing.T) {
	dir := os.Getenv(warnKillDirEnv)
	if dir == "" {
		t.Skip("helper process of TestWarnSurvivesKill")
	}
	b, err := Open(Config{Vehicle: "TEST-KILL", StateDir: dir, BatchInterval: time.Hour})
	if err != nil {
		fmt.Printf("E %v\n", err)
		os.Exit(2)
	}
	go b.batch(context.Background())
	at := time.Now()
	b.readings <- gpsReading(at)
	if err := b.Warn(siteWarning(at)); err != nil {
		fmt.Printf("E %v\n", err)
		os.Exit(2)
	}
	for b.spool.LastSeq() < 1 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("W")
	// A reading after the warning stays in the open batch: the kill loses it, as the package
	// documentation says, and the warning's batch is not touched by it.
	b.readings <- gpsReading(at.Add(time.Second))
	select {}
}

// TestWarnSurvivesKill: once the warning's batch is spooled (milliseconds after Warn, not at the
// end of the batch interval), a kill -9 does not lose it: the next start finds it in the spool,
// ready to publish.
func TestWarnSurvivesKill(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWarnKillChild$", "-test.v")
	cmd.Env = append(os.Environ(), warnKillDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	seen := false
	for sc.Scan() {
		line := sc.Text()
		if strings.HasPrefix(line, "E ") {
			t.Fatalf("child: %s", line)
		}
		if line == "W" {
			seen = true
			break
		}
	}
	if !seen {
		cmd.Wait()
		t.Fatal("the child ended before spooling the warning")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	cmd.Wait()

	b := newTestBridge(t, Config{Vehicle: "TEST-KILL", StateDir: dir, BatchInterval: time.Hour})
	got := spooled(t, b)
	if len(got) != 1 || len(got[0].Warnings) != 1 || got[0].Readings() != 1 || got[0].Warnings[0].Rule != "sensitive_zone_sound" {
		t.Fatalf("after kill -9, spool holds %+v", got)
	}
}

// TestWarnPublished: through a real Mosquitto, a signed batch carries the warning, and its
// signature verifies with the vehicle's key.
func TestWarnPublished(t *testing.T) {
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	const vehicle = "TEST-WARN"
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	var mu sync.Mutex
	var payloads [][]byte
	sub := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID("listener"))
	if tok := sub.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer sub.Disconnect(100)
	if tok := sub.Subscribe(wire.TelemetryTopic(vehicle), 1, func(_ mqtt.Client, m mqtt.Message) {
		mu.Lock()
		defer mu.Unlock()
		payloads = append(payloads, m.Payload())
	}); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}

	b := newTestBridge(t, Config{Vehicle: vehicle, Key: key, Kid: "k1", BatchInterval: time.Hour, StatusEvery: time.Hour,
		MQTT: config.MQTT{URL: broker.URL()}})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- b.Run(ctx) }()
	defer func() { cancel(); <-done }()
	if err := b.Warn(siteWarning(time.Now())); err != nil {
		t.Fatal(err)
	}
	eventually(t, "the warning published", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(payloads) > 0
	})
	mu.Lock()
	p := payloads[0]
	mu.Unlock()
	bt, err := wire.Decode(wire.TelemetryTopic(vehicle), p, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Verify(p, pub); err != nil {
		t.Fatalf("signed batch with a warning: %v", err)
	}
	if len(bt.Warnings) != 1 || bt.Warnings[0].Kind != wire.WarningSiteSound {
		t.Errorf("published batch: %+v", bt)
	}
}
