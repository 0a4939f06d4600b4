package slm

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"testing"
	"time"
)

var brt = time.FixedZone("-03", -3*3600)

func mustHex(t testing.TB, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(s)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPCEFrame(t *testing.T) {
	f := PCEFrame{
		DeciDB: 682,
		Status: [3]byte{0, 3, 0},
		Time:   time.Date(2026, 11, 29, 12, 0, 5, 0, brt),
	}
	b := EncodePCE(f)
	if want := mustHex(t, "7f02aa000300261129120005"+"00"); !bytes.Equal(b, want) {
		t.Fatalf("EncodePCE = % x, want % x", b, want)
	}
	got, err := DecodePCE(b, brt)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, f) || got.DB() != 68.2 {
		t.Errorf("DecodePCE = %+v (%v dB), want %+v", got, got.DB(), f)
	}
	if got.Time.UTC().Format(time.RFC3339) != "2026-11-29T15:00:05Z" {
		t.Errorf("meter clock in UTC = %v", got.Time.UTC())
	}
	// The hour byte's bit 7 is kept apart from the hour.
	f.HourFlag, f.Trailer, f.Status = true, 0x5a, [3]byte{0, 3, 3}
	b = EncodePCE(f)
	if b[9] != 0x92 {
		t.Errorf("hour byte = %#x, want 0x92", b[9])
	}
	if got, err := DecodePCE(b, brt); err != nil || !reflect.DeepEqual(got, f) {
		t.Errorf("with flag: %+v, %v", got, err)
	}
	// No clock.
	f = PCEFrame{DeciDB: 1600}
	if got, err := DecodePCE(EncodePCE(f), nil); err != nil || !got.Time.IsZero() || got.DB() != 160 {
		t.Errorf("no clock: %+v, %v", got, err)
	}
	// A time outside the two BCD year digits is written as no clock.
	f.Time = time.Date(2100, 1, 1, 0, 0, 0, 0, time.UTC)
	if got, err := DecodePCE(EncodePCE(f), nil); err != nil || !got.Time.IsZero() {
		t.Errorf("year 2100: %+v, %v", got, err)
	}
}

func TestDecodePCEErrors(t *testing.T) {
	good := EncodePCE(PCEFrame{DeciDB: 682, Time: time.Date(2026, 11, 29, 12, 0, 5, 0, time.UTC)})
	set := func(kv ...int) []byte {
		b := bytes.Clone(good)
		for i := 0; i < len(kv); i += 2 {
			b[kv[i]] = byte(kv[i+1])
		}
		return b
	}
	for name, b := range map[string][]byte{
		"short":          good[:12],
		"long":           append(bytes.Clone(good), 0),
		"start":          set(0, 0x7e),
		"level 0":        set(1, 0, 2, 0),
		"level 160.1 dB": set(1, 0x06, 2, 0x41),
		"bad BCD":        set(11, 0x0a),
		"month 13":       set(7, 0x13),
		"month 0":        set(7, 0x00),
		"day 0":          set(8, 0x00),
		"31 November":    set(8, 0x31),
		"hour 24":        set(9, 0x24),
		"minute 60":      set(10, 0x60),
		"second 60":      set(11, 0x60),
	} {
		if _, err := DecodePCE(b, nil); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// pceStream returns n frames at 10 Hz with a meter clock from start (ten frames a meter
// second), levels alternating 60 and 70 dB.
func pceStream(start time.Time, n int) ([]byte, []PCEFrame) {
	var b []byte
	var fs []PCEFrame
	for i := range n {
		f := PCEFrame{DeciDB: uint16(600 + 100*(i%2)), Status: [3]byte{0, 3, 0},
			Time: start.Add(time.Duration(i/10) * time.Second)}
		fs = append(fs, f)
		b = append(b, EncodePCE(f)...)
	}
	return b, fs
}

func decodePCEAll(t testing.TB, chunks ...[]byte) ([]PCEFrame, Stats) {
	t.Helper()
	d := NewPCEDecoder(brt)
	var out []PCEFrame
	for _, c := range chunks {
		out = append(out, d.Feed(c)...)
	}
	out = append(out, d.End()...)
	if len(d.buf) != 0 || d.fed != d.consumed+d.dropped+d.stats.GarbageBytes {
		t.Fatalf("accounting: fed %d, consumed %d + dropped %d + garbage %d, %d held",
			d.fed, d.consumed, d.dropped, d.stats.GarbageBytes, len(d.buf))
	}
	return out, d.Stats()
}

func TestPCEDecoder(t *testing.T) {
	start := time.Date(2026, 11, 29, 12, 0, 0, 0, brt)
	s, fs := pceStream(start, 4)
	f := func(i int) []byte { return s[13*i : 13*i+13] }
	tests := []struct {
		name   string
		stream []byte
		want   []PCEFrame
		stats  Stats
	}{
		{"clean", s, fs, Stats{FramesOK: 4}},
		{"garbage", cat([]byte("\x00\x7f\x7f\x01"), f(0), []byte{0x7f, 0x02, 0x58, 0, 3}, f(1), f(2)),
			fs[:3], Stats{FramesOK: 3, GarbageBytes: 9}},
		{"zeros", cat(make([]byte, 20), []byte{0x7f}, make([]byte, 12), f(3)), fs[3:], Stats{FramesOK: 1, GarbageBytes: 33}},
		{"cut short", cat(f(0)[:5], f(1), f(2)[:9], f(3)), []PCEFrame{fs[1], fs[3]}, Stats{FramesOK: 2, GarbageBytes: 14}},
		{"cut short at the end", cat(f(0), f(1)[:8]), fs[:1], Stats{FramesOK: 1, Truncated: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := decodePCEAll(t, tt.stream)
			if !reflect.DeepEqual(got, tt.want) || st != tt.stats {
				t.Errorf("%d frames, %+v; want %d, %+v", len(got), st, len(tt.want), tt.stats)
			}
		})
	}
}

func TestPCEDecoderSplits(t *testing.T) {
	s, _ := pceStream(time.Date(2026, 11, 29, 12, 0, 0, 0, brt), 4)
	stream := cat([]byte("\x7f\x00"), s[:20], []byte{0xff}, s[13:], []byte{0x7f, 0x01})
	whole, wholeStats := decodePCEAll(t, stream)
	if len(whole) != 4 {
		t.Fatalf("%d frames, %+v", len(whole), wholeStats)
	}
	for k := 0; k <= len(stream); k++ {
		got, st := decodePCEAll(t, stream[:k], stream[k:])
		if !reflect.DeepEqual(got, whole) || st != wholeStats {
			t.Fatalf("split at %d: %d frames, %+v; want %d, %+v", k, len(got), st, len(whole), wholeStats)
		}
	}
	var chunks [][]byte
	for i := range stream {
		chunks = append(chunks, stream[i:i+1])
	}
	if got, st := decodePCEAll(t, chunks...); !reflect.DeepEqual(got, whole) || st != wholeStats {
		t.Fatalf("byte by byte: %d frames, %+v", len(got), st)
	}
}

func TestStartPCE(t *testing.T) {
	var b bytes.Buffer
	if err := StartPCE(&b); err != nil || !bytes.Equal(b.Bytes(), []byte{0xac, 0xff}) {
		t.Errorf("StartPCE wrote % x, %v", b.Bytes(), err)
	}
	if err := StartPCE(failWriter{}); err == nil {
		t.Error("StartPCE: no error from a failing writer")
	}
}

type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errFail }
