package bridge

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// TestBridgeRecoversLostEpoch: a bridge whose epoch file was deleted while 40 batches waited
// in its spool (5 already acknowledged) starts, instead of refusing to run: every waiting
// reading reaches a real Mosquitto under a new epoch with seqs 1 … 35, signed again, and the
// retained status links the new epoch to the old one.
func TestBridgeRecoversLostEpoch(t *testing.T) {
	broker := testenv.StartMosquitto(t, testenv.MosquittoOptions{})
	const vehicle = "TEST-REKEY"
	pub, key, _ := ed25519.GenerateKey(rand.Reader)
	cfg := Config{Vehicle: vehicle, StateDir: filepath.Join(t.TempDir(), "state"), Key: key, Kid: "k1",
		MQTT: config.MQTT{URL: broker.URL()}, Logger: testLogger(t), StatusEvery: time.Hour}

	// The first life: 40 batches spooled while the broker was out of reach, the first five
	// acknowledged before that.
	b, err := Open(cfg)
	if err != nil {
		t.Fatal(err)
	}
	oldEpoch := b.Epoch()
	t0 := time.Now().UTC().Truncate(time.Second).Add(-10 * time.Minute)
	var want []time.Time // the GPS times of the readings still to send
	for i := range 40 {
		_, err := b.spool.Append(func(seq uint64) ([]byte, error) {
			at := t0.Add(time.Duration(i) * time.Second)
			bt := wire.Batch{V: wire.Version, Vehicle: vehicle, Epoch: oldEpoch, Seq: seq, Clock: wire.ClockGPS, Kid: "k1",
				SentAt: wire.NewTime(at), GPS: []wire.GPS{{T: wire.NewTime(at), Lat: -20.8367, Lon: -40.7292, SpeedKmh: ptr(30.0), Fix: wire.Fix3D}}}
			return wire.Encode(&bt, key)
		})
		if err != nil {
			t.Fatal(err)
		}
		if i >= 5 {
			want = append(want, t0.Add(time.Duration(i)*time.Second))
		}
	}
	for seq := uint64(1); seq <= 5; seq++ {
		if err := b.spool.Ack(seq); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.spool.Close(); err != nil {
		t.Fatal(err)
	}

	// The SD card loses the epoch file.
	if err := os.Remove(filepath.Join(cfg.StateDir, "epoch")); err != nil {
		t.Fatal(err)
	}

	// Listen as the monitor would.
	var mu sync.Mutex
	var got []*wire.Batch
	var status *wire.Status
	sub := mqtt.NewClient(mqtt.NewClientOptions().AddBroker(broker.URL()).SetClientID("listener"))
	if tok := sub.Connect(); !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("connect: %v", tok.Error())
	}
	defer sub.Disconnect(100)
	tok := sub.SubscribeMultiple(map[string]byte{wire.TelemetryTopic(vehicle): 1, wire.StatusTopic(vehicle): 1}, func(_ mqtt.Client, m mqtt.Message) {
		mu.Lock()
		defer mu.Unlock()
		if m.Topic() == wire.StatusTopic(vehicle) {
			var st wire.Status
			if err := json.Unmarshal(m.Payload(), &st); err == nil && st.Online {
				status = &st
			}
			return
		}
		if err := wire.Verify(m.Payload(), pub); err != nil {
			t.Errorf("a re-sent batch fails its signature: %v", err)
		}
		bt, err := wire.Decode(m.Topic(), m.Payload(), time.Now())
		if err != nil {
			t.Errorf("a re-sent batch does not decode: %v", err)
			return
		}
		got = append(got, bt)
	})
	if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
		t.Fatalf("subscribe: %v", tok.Error())
	}

	// The second life: the bridge starts and sends.
	b, err = Open(cfg)
	if err != nil {
		t.Fatalf("the bridge refuses to run without its epoch file: %v", err)
	}
	newEpoch := b.Epoch()
	if newEpoch == oldEpoch {
		t.Fatalf("the old epoch %q was kept", oldEpoch)
	}
	ctx, cancel := context.WithCancel(context.Background())
	runDone := make(chan error, 1)
	go func() { runDone <- b.Run(ctx) }()
	eventually(t, "35 batches and the status", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(got) >= len(want) && status != nil && b.spool.Depth() == 0
	})
	cancel()
	if err := <-runDone; err != nil {
		t.Fatalf("Run: %v", err)
	}

	mu.Lock()
	defer mu.Unlock()
	if len(got) != len(want) {
		t.Fatalf("%d batches arrived, want %d", len(got), len(want))
	}
	for i, bt := range got {
		if bt.Epoch != newEpoch || bt.Seq != uint64(i+1) || bt.Kid != "k1" {
			t.Errorf("batch %d: epoch %s seq %d kid %s; want %s, %d, k1", i, bt.Epoch, bt.Seq, bt.Kid, newEpoch, i+1)
		}
		if len(bt.GPS) != 1 || !bt.GPS[0].T.Equal(want[i]) || !bt.SentAt.Equal(want[i]) {
			t.Errorf("batch %d: readings %+v, want the GPS fix of %v", i, bt.GPS, want[i])
		}
	}
	if status.Epoch != newEpoch || status.PreviousEpoch != oldEpoch {
		t.Errorf("status: epoch %q previous_epoch %q; want %q and %q", status.Epoch, status.PreviousEpoch, newEpoch, oldEpoch)
	}
}
