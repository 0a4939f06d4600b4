package tacho

import (
	"bytes"
	"errors"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
	"time"
)

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

func corrupt(b []byte, at int) []byte {
	c := bytes.Clone(b)
	c[at] ^= 0x10
	return c
}

// decodeAll feeds the chunks and ends the stream.
func decodeAll(t testing.TB, l Layout, chunks ...[]byte) ([]Reading, Stats) {
	t.Helper()
	d, err := NewDecoder(l)
	if err != nil {
		t.Fatal(err)
	}
	var out []Reading
	for _, c := range chunks {
		out = append(out, d.Feed(c)...)
	}
	out = append(out, d.End()...)
	checkAccounting(t, d)
	return out, d.Stats()
}

// checkAccounting checks that every byte fed was decoded, dropped or skipped, once.
func checkAccounting(t testing.TB, d *Decoder) {
	t.Helper()
	if len(d.buf) != 0 || d.fed != d.consumed+d.dropped+d.stats.GarbageBytes {
		t.Fatalf("accounting: fed %d, consumed %d + dropped %d + garbage %d, %d held",
			d.fed, d.consumed, d.dropped, d.stats.GarbageBytes, len(d.buf))
	}
}

var t0 = time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)

// frameTimes returns the UTC times of the readings, "-" for none.
func frameTimes(rs []Reading) []string {
	var s []string
	for _, r := range rs {
		if r.TimeValid {
			s = append(s, r.Tacho.T.String())
		} else {
			s = append(s, "-")
		}
	}
	return s
}

func TestDecoderVDO(t *testing.T) {
	f1 := EncodeVDO(sampleVDO(0, t0))
	f2 := EncodeVDO(sampleVDO(1, t0.Add(time.Second)))
	f3 := EncodeVDO(sampleVDO(2, t0.Add(2*time.Second)))
	noTime := EncodeVDO(sampleVDO(1, time.Time{}))
	longVIN := bytes.Clone(f1)
	longVIN[vdoVariableOff] = 200
	s1, s2, s3 := "2026-11-29T15:00:00Z", "2026-11-29T15:00:01Z", "2026-11-29T15:00:02Z"

	tests := []struct {
		name   string
		stream []byte
		times  []string
		stats  Stats
	}{
		{"clean", cat(f1, f2, f3), []string{s1, s2, s3}, Stats{FramesOK: 3}},
		{"empty", nil, nil, Stats{}},
		{"garbage only", []byte("no frames here, not even UDTC"), nil, Stats{GarbageBytes: 29}},
		{"garbage before and between", cat([]byte("garbage\x00\x55\x44"), f1, []byte{0x55}, f2, []byte("UDT")),
			[]string{s1, s2}, Stats{FramesOK: 2, GarbageBytes: 10 + 1 + 3}},
		{"bad checksum", cat(f1, corrupt(f2, len(f2)-1), f3), []string{s1, s3}, Stats{FramesOK: 2, BadChecksum: 1}},
		{"bad byte", cat(f1, corrupt(f2, 19), f3), []string{s1, s3}, Stats{FramesOK: 2, BadChecksum: 1}},
		{"cut short in the fixed part", cat(f1[:20], f2, f3), []string{s2, s3}, Stats{FramesOK: 2, Truncated: 1}},
		{"cut short by a bad length", cat(f1[:40], f2), []string{s2}, Stats{FramesOK: 1, Truncated: 1}},
		{"cut short in the cards", cat(f2[:75], f3, f1), []string{s3, s1}, Stats{FramesOK: 2, Truncated: 1}},
		{"cut short at the end", cat(f1, f2[:50]), []string{s1}, Stats{FramesOK: 1, Truncated: 1}},
		{"header at the end", cat(f1, []byte(vdoMagic)), []string{s1}, Stats{FramesOK: 1, Truncated: 1}},
		{"malformed", cat(longVIN, f2), []string{s2}, Stats{FramesOK: 1, Malformed: 1, GarbageBytes: int64(len(f1) - 5)}},
		{"no time", cat(noTime, f1), []string{"-", s1}, Stats{FramesOK: 2, NoTime: 1}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, st := decodeAll(t, LayoutVDO, tt.stream)
			if got := frameTimes(rs); !reflect.DeepEqual(got, tt.times) {
				t.Errorf("readings at %v, want %v", got, tt.times)
			}
			if st != tt.stats {
				t.Errorf("stats %+v, want %+v", st, tt.stats)
			}
		})
	}
}

func TestDecoderStoneridge(t *testing.T) {
	f1 := EncodeStoneridge(sampleSR(MessageVIN, t0))
	f2 := EncodeStoneridge(sampleSR(MessageDIN1, t0.Add(time.Second)))
	f3 := EncodeStoneridge(sampleSR(MessageDIN2, t0.Add(2*time.Second)))
	f4 := EncodeStoneridge(sampleSR(MessageVRN, t0.Add(3*time.Second)))
	s1, s2, s3, s4 := "2026-11-29T15:00:00Z", "2026-11-29T15:00:01Z", "2026-11-29T15:00:02Z", "2026-11-29T15:00:03Z"

	tests := []struct {
		name   string
		stream []byte
		times  []string
		stats  Stats
	}{
		{"clean", cat(f1, f2, f3, f4), []string{s1, s2, s3, s4}, Stats{FramesOK: 4}},
		{"sync run", cat([]byte{0xff, 0xff, 0xff, 0xff}, f1), []string{s1}, Stats{FramesOK: 1, GarbageBytes: 4}},
		{"false headers", cat([]byte{0xff, 0xff, 0xff, 44, 1, 0xff, 0xff, 0xff, 45, 3}, f2),
			[]string{s2}, Stats{FramesOK: 1, GarbageBytes: 10}},
		{"bad checksum", cat(f1, corrupt(f2, 20), f3), []string{s1, s3}, Stats{FramesOK: 2, BadChecksum: 1}},
		{"cut short", cat(f1[:20], f2, f3[:4], f4), []string{s2, s4}, Stats{FramesOK: 2, Truncated: 1, GarbageBytes: 4}},
		{"cut short at the end", cat(f1, f2[:30]), []string{s1}, Stats{FramesOK: 1, Truncated: 1}},
		{"header prefix at the end", cat(f1, f2[:4]), []string{s1}, Stats{FramesOK: 1, GarbageBytes: 4}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rs, st := decodeAll(t, LayoutStoneridge, tt.stream)
			if got := frameTimes(rs); !reflect.DeepEqual(got, tt.times) {
				t.Errorf("readings at %v, want %v", got, tt.times)
			}
			if st != tt.stats {
				t.Errorf("stats %+v, want %+v", st, tt.stats)
			}
		})
	}
}

// messyStream returns a stream of the layout with garbage, a bad checksum, a frame cut short
// and a partial frame at the end, and how many good frames it holds.
func messyStream(l Layout) ([]byte, int) {
	var f [4][]byte
	for i := range f {
		at := t0.Add(time.Duration(i) * time.Second)
		if l == LayoutVDO {
			f[i] = EncodeVDO(sampleVDO(i%3, at))
		} else {
			f[i] = EncodeStoneridge(sampleSR([]MessageID{MessageVIN, MessageDIN1, MessageDIN2, MessageVRN}[i], at))
		}
	}
	return cat([]byte("\x00\xffU\xff\xff\xffUD"), f[0], []byte("junk"), corrupt(f[1], 25), f[2],
		f[1][:33], f[3], []byte{0xaa}, f[0], f[2][:30]), 4
}

func TestDecoderSplits(t *testing.T) {
	for _, l := range []Layout{LayoutVDO, LayoutStoneridge} {
		t.Run(string(l), func(t *testing.T) {
			stream, good := messyStream(l)
			whole, wholeStats := decodeAll(t, l, stream)
			if len(whole) != good {
				t.Fatalf("%d readings, want %d (stats %+v)", len(whole), good, wholeStats)
			}
			if wholeStats.BadChecksum != 1 || wholeStats.Truncated != 2 {
				t.Errorf("stats %+v, want 1 bad checksum and 2 truncated", wholeStats)
			}
			for k := 0; k <= len(stream); k++ {
				rs, st := decodeAll(t, l, stream[:k], stream[k:])
				if !reflect.DeepEqual(rs, whole) || st != wholeStats {
					t.Fatalf("split at %d: %d readings, %+v; want %d, %+v", k, len(rs), st, len(whole), wholeStats)
				}
			}
			chunks := make([][]byte, len(stream))
			for i := range stream {
				chunks[i] = stream[i : i+1]
			}
			if rs, st := decodeAll(t, l, chunks...); !reflect.DeepEqual(rs, whole) || st != wholeStats {
				t.Fatalf("byte by byte: %d readings, %+v", len(rs), st)
			}
		})
	}
}

func TestDecoderKeepsNoInput(t *testing.T) {
	f := EncodeVDO(sampleVDO(1, t0))
	d, _ := NewDecoder(LayoutVDO)
	chunk := bytes.Clone(f[:50])
	if rs := d.Feed(chunk); len(rs) != 0 {
		t.Fatalf("readings from half a frame")
	}
	for i := range chunk {
		chunk[i] = 0 // the caller reuses its read buffer
	}
	rs := d.Feed(f[50:])
	if len(rs) != 1 || rs[0].Tacho.Card != "0000000086H10100" {
		t.Fatalf("readings %+v", rs)
	}
}

func TestParseLayout(t *testing.T) {
	for s, want := range map[string]Layout{"vdo": LayoutVDO, "VDO": LayoutVDO, "Stoneridge": LayoutStoneridge} {
		if l, err := ParseLayout(s); err != nil || l != want {
			t.Errorf("ParseLayout(%q) = %q, %v", s, l, err)
		}
	}
	if _, err := ParseLayout("sr"); err == nil {
		t.Error("ParseLayout(sr): no error")
	}
	if _, err := NewDecoder("x"); err == nil {
		t.Error("NewDecoder(x): no error")
	}
	if LayoutVDO.Baud() != 10400 || LayoutStoneridge.Baud() != 1200 || Layout("x").Baud() != 0 {
		t.Error("Baud")
	}
}

func TestDecodeStream(t *testing.T) {
	stream, good := messyStream(LayoutVDO)
	rs, st, err := DecodeStream(iotest.OneByteReader(bytes.NewReader(stream)), "vdo")
	if err != nil {
		t.Fatal(err)
	}
	whole, wholeStats := decodeAll(t, LayoutVDO, stream)
	if len(rs) != good || st != wholeStats {
		t.Fatalf("%d readings, %+v; want %d, %+v", len(rs), st, good, wholeStats)
	}
	for i := range rs {
		if !reflect.DeepEqual(rs[i], whole[i].Tacho) {
			t.Errorf("reading %d = %+v, want %+v", i, rs[i], whole[i].Tacho)
		}
	}

	if _, _, err := DecodeStream(bytes.NewReader(stream), "d8"); err == nil {
		t.Error("unknown layout: no error")
	}

	boom := errors.New("boom")
	f := EncodeVDO(sampleVDO(0, t0))
	r := io.MultiReader(bytes.NewReader(cat(f, f[:10])), iotest.ErrReader(boom))
	rs, st, err = DecodeStream(r, "vdo")
	if !errors.Is(err, boom) || len(rs) != 1 || st.Truncated != 1 {
		t.Errorf("read error: %v, %d readings, %+v", err, len(rs), st)
	}
}
