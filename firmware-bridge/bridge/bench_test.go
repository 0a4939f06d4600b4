package bridge

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/wire"
)

// BenchmarkSpoolReplay measures how fast the bridge replays a spool after an outage: 5,000
// batches of 5 s (5 GPS fixes, 5 tachograph readings, 5 sound readings, about 2.4 KB each) are
// spooled while the broker is unreachable, then published in order to a real Mosquitto (the
// repository's configuration) at QoS 1, each acknowledged in the spool after its PUBACK.
// Reports batches/s from the first publish to the last acknowledgement.
func BenchmarkSpoolReplay(b *testing.B) {
	const batches = 5000
	broker := testenv.StartMosquitto(b, testenv.MosquittoOptions{})
	for range b.N {
		b.StopTimer()
		br, err := Open(Config{Vehicle: "BENCH-1", StateDir: filepath.Join(b.TempDir(), "state"),
			MQTT: config.MQTT{URL: broker.URL()}, Logger: slog.New(slog.DiscardHandler)})
		if err != nil {
			b.Fatal(err)
		}
		t0 := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
		for i := range batches {
			_, err := br.spool.Append(func(seq uint64) ([]byte, error) {
				bt := wire.Batch{V: 1, Vehicle: "BENCH-1", Epoch: br.Epoch(), Seq: seq, Clock: wire.ClockGPS}
				for j := range 5 {
					t := wire.NewTime(t0.Add(time.Duration(i*5+j) * time.Second))
					bt.GPS = append(bt.GPS, wire.GPS{T: t, Lat: -20.8367 - float64(i)*1e-6, Lon: -40.7292, SpeedKmh: ptr(21.3), CourseDeg: ptr(90.0), HDOP: ptr(0.9), Sats: ptr(9), Fix: wire.Fix3D})
					bt.Tacho = append(bt.Tacho, wire.Tacho{T: t, SpeedKmh: ptr(21.25), OdometerKm: ptr(10234.555), Card: "0000000086H101"})
					bt.Sound = append(bt.Sound, wire.Sound{T: t, LAeqDB: ptr(68.2), LAmaxDB: ptr(74.0), DurS: ptr(1.0)})
				}
				bt.SentAt = bt.GPS[4].T
				return wire.Encode(&bt, nil)
			})
			if err != nil {
				b.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		b.StartTimer()
		start := time.Now()
		go func() { done <- br.publish(ctx) }()
		for br.spool.Depth() > 0 {
			time.Sleep(5 * time.Millisecond)
		}
		elapsed := time.Since(start)
		b.StopTimer()
		cancel()
		<-done
		br.spool.Close()
		b.ReportMetric(float64(batches)/elapsed.Seconds(), "batches/s")
	}
}
