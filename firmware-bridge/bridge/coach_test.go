package bridge

import (
	"crypto/ed25519"
	"crypto/rand"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/firmware-bridge/coach"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// TestCoachSeesReadingsAndBundle: the bridge hands the driver's coach the bundle it puts in
// force and every reading it batches, timed as batched (a tachograph reading timed by the
// bridge's clock included); the coach warns of the speed over the limit from them.
func TestCoachSeesReadingsAndBundle(t *testing.T) {
	pub, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var ws []coach.Warning
	co := coach.New(coach.Options{Vehicle: "PIU-001", Logger: testLogger(t), Emit: func(w coach.Warning) {
		mu.Lock()
		ws = append(ws, w)
		mu.Unlock()
	}})
	done := make(chan struct{})
	defer close(done)
	go co.Run(done)
	b := newTestBridge(t, Config{Vehicle: "PIU-001", ConfigKey: pub, Coach: co, BatchInterval: time.Hour})

	now := time.Now().UTC().Truncate(time.Second)
	msg, err := configbundle.Sign(&configbundle.Bundle{Format: configbundle.Format, Vehicle: "PIU-001", Licensee: "L1",
		Version: 4, IssuedAt: now.Add(-time.Hour), ValidUntil: now.Add(time.Hour),
		Profile:   configbundle.Profile{ID: "piuma", YAML: string(profile.PiumaYAML())},
		Geofences: []byte(`{"type":"FeatureCollection","features":[]}`)}, priv)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.ReceiveConfig(msg); err != nil {
		t.Fatal(err)
	}
	if v := co.State().ConfigVersion; v != 4 {
		t.Fatalf("the coach runs bundle %d, want 4", v)
	}

	stop := runBatch(b)
	base := now.Add(-time.Minute)
	for i := range 5 {
		at := base.Add(time.Duration(i) * time.Second)
		g := wire.GPS{T: wire.NewTime(at), Lat: -20.8367, Lon: -40.7292 + float64(i)*0.0001, SpeedKmh: ptr(35.0), HDOP: ptr(0.8), Fix: wire.Fix3D}
		b.readings <- reading{GPS: &g, received: at}
		b.readings <- reading{Tacho: &wire.Tacho{SpeedKmh: ptr(35.0)}, needsTime: true, received: at}
	}
	eventually(t, "the coach's speed warning", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(ws) > 0
	})
	if err := stop(); err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if w := ws[0]; w.Kind != coach.KindSpeedOver || w.Value != 35 || w.Limit != 30 || w.T.Before(base) {
		t.Errorf("warning %+v", w)
	}
}
