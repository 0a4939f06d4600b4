package wire

import (
	"math"
	"syscall"
	"testing"
	"time"
)

// fiveSeconds is a realistic batch of 5 s: GPS at 10 Hz (50), tachograph at 1 Hz (5) and sound
// at 10 Hz (50), every optional field known and numbers at the precision of their source.
func fiveSeconds() *Batch {
	start := recv.Add(-5 * time.Second)
	b := &Batch{V: 1, Vehicle: "PIU-001", Epoch: "e-7f3a9c", Seq: 1042, SentAt: NewTime(recv), Clock: ClockGPS, Kid: "PIU-001-2026"}
	for i := range 50 {
		at := NewTime(start.Add(time.Duration(i) * 100 * time.Millisecond))
		b.GPS = append(b.GPS, GPS{T: at, Lat: -20.8367123 + float64(i)*1.0321e-6, Lon: -40.7292456 - float64(i)*2.0117e-6,
			SpeedKmh: ptr(12.3 + float64(i%7)*0.1), CourseDeg: ptr(90.25 + float64(i%5)), HDOP: ptr(0.9), Sats: ptr(9),
			Fix: Fix3D, AltM: ptr(4.7)})
		b.Sound = append(b.Sound, Sound{T: at, LAeqDB: ptr(68.2 + math.Sin(float64(i))), LAmaxDB: ptr(74.1), DurS: ptr(0.1)})
	}
	for i := range 5 {
		b.Tacho = append(b.Tacho, Tacho{T: NewTime(start.Add(time.Duration(i) * time.Second)), SpeedKmh: ptr(12.1),
			OdometerKm: ptr(10234.555 + float64(i)*0.003), Card: "0000000086H101"})
	}
	return b
}

// BenchmarkDecode decodes the 5 s batch with Decode; BenchmarkDecodeReflect with the
// encoding/json decoder alone, as Decode did before scanBatch, for a side-by-side comparison in
// one run. cpu-ns/op is the process's CPU time (garbage collection included) per decode: on a
// loaded machine it is steadier than the wall time.
func BenchmarkDecode(b *testing.B) {
	benchmarkDecode(b, unmarshalBatch)
}

func BenchmarkDecodeReflect(b *testing.B) {
	benchmarkDecode(b, reflectBatch)
}

func benchmarkDecode(b *testing.B, unmarshal func([]byte) (*Batch, missing, *Error)) {
	p, err := Encode(fiveSeconds(), nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	cpu0 := cpuTime()
	for b.Loop() {
		if _, err := DefaultLimits.decode(testTopic, p, recv, unmarshal); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64((cpuTime()-cpu0).Nanoseconds())/float64(b.N), "cpu-ns/op")
}

// cpuTime is the user and system CPU time of the process so far.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func BenchmarkDecodeSigned(b *testing.B) {
	p, err := Encode(fiveSeconds(), testKey)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Decode(testTopic, p, recv); err != nil {
			b.Fatal(err)
		}
		if err := Verify(p, testPub); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncode(b *testing.B) {
	batch := fiveSeconds()
	p, err := Encode(batch, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(p)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(batch, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodeSigned(b *testing.B) {
	batch := fiveSeconds()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Encode(batch, testKey); err != nil {
			b.Fatal(err)
		}
	}
}

func TestFiveSecondsIsValid(t *testing.T) {
	p, err := Encode(fiveSeconds(), testKey)
	if err != nil {
		t.Fatal(err)
	}
	b, err := Decode(testTopic, p, recv)
	if err != nil {
		t.Fatal(err)
	}
	if b.Readings() != 105 || !equalBatch(b, func() *Batch { w := fiveSeconds(); w.Sig = b.Sig; return w }()) {
		t.Errorf("benchmark batch does not round-trip: %d readings", b.Readings())
	}
}
