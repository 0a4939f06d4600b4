package fleettest

import (
	"crypto/ed25519"
	"math"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

func TestBatches(t *testing.T) {
	start := time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC)
	key := ed25519.NewKeyFromSeed(make([]byte, ed25519.SeedSize))
	secs := Drive(-20.8367, -40.7292, Repeat(36, 12)...)
	secs[11].DB = 80
	seq := uint64(41) // another vehicle's batches came first
	bs := Trip{Vehicle: "PIU-001", Card: "0000000086H101", Start: start, Seconds: secs, Key: key, Kid: "PIU-001-k1"}.Batches(t, &seq)
	if len(bs) != 3 || seq != 44 {
		t.Fatalf("%d batches, seq at %d; want 3 (5+5+2 s), 44", len(bs), seq)
	}
	for i, b := range bs {
		if b.Seq != uint64(42+i) || b.Epoch != "e-1" || b.Kid != "PIU-001-k1" {
			t.Errorf("batch %d: seq %d epoch %q kid %q", i, b.Seq, b.Epoch, b.Kid)
		}
		if err := wire.Verify(b.Payload, key.Public().(ed25519.PublicKey)); err != nil {
			t.Errorf("batch %d: %v", i, err)
		}
		got, err := wire.Decode(wire.TelemetryTopic("PIU-001"), b.Payload, b.Received)
		if err != nil {
			t.Fatalf("batch %d does not decode: %v", i, err)
		}
		if len(got.GPS) != len(b.GPS) || got.Tacho[0].Card != "0000000086H101" {
			t.Errorf("batch %d decodes to %+v", i, got)
		}
		st := b.Stored()
		if want := start.Add(time.Duration(5*i) * time.Second); !st.TMin.Equal(want) || !b.Received.Equal(st.TMax.Add(time.Second)) {
			t.Errorf("batch %d: from %v to %v received %v; want from %v", i, st.TMin, st.TMax, b.Received, want)
		}
	}
	if len(bs[2].GPS) != 2 || len(bs[2].Sound) != 1 || len(bs[0].Sound) != 0 {
		t.Errorf("last batch: %d GPS, %d sound readings; first: %d sound", len(bs[2].GPS), len(bs[2].Sound), len(bs[0].Sound))
	}
	// 36 km/h is 10 m/s: 12 s east is 120 m.
	if d := (secs[11].Lon - -40.7292) * metresPerDegreeEast; math.Abs(d-120) > 1e-6 {
		t.Errorf("drove %.3f m in 12 s at 36 km/h", d)
	}
}

func TestSpeeding(t *testing.T) {
	s := Speeding()
	if len(s) != 280 || s[59] != 20 || s[60] != 45 || s[79] != 45 || s[80] != 20 {
		t.Errorf("Speeding: %d seconds, %v", len(s), s[55:85])
	}
}
