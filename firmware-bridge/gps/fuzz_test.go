package gps

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/trenzinho/trenzinho/wire"
)

// fuzzSeeds are sentence bodies (without '$' and checksum) from real receivers and from
// the edge cases of the table tests.
var fuzzSeeds = []string{
	"GPRMC,202640.000,A,4404.1306,N,12118.8515,W,0.03,225.97,130415,,,D",
	"GPGGA,202640.000,4404.1306,N,12118.8515,W,2,10,0.98,1127.7,M,-19.6,M,0000,0000",
	"GPGSA,A,3,20,16,09,03,07,10,23,19,27,30,,,1.64,0.98,1.31",
	"GPZDA,202640.000,13,04,2015,,",
	"GNVTG,,T,,M,0.029,N,0.053,K,A",
	"GNRMC,003956.00,A,4552.65403,S,17030.00668,E,0.025,,120419,,,A,V",
	"GNGSA,A,3,13,16,21,15,10,29,27,20,,,,,1.05,0.64,0.83,1",
	"GNGNS,191503.01,3645.876324,N,03124.670280,E,AAN,08,1.3,-6.7,32.0,,,V",
	"GPGLL,4404.1295864,N,12118.8685453,W,213121.000,A,D",
	"GPRMC,,V,,,,,,,,,,N",
	"GPGGA,,,,,,0,,,,,,,,",
	"GPGGA,235959.99,2030.0000,S,04030.0000,W,6,04,2.5,5.5,M,-5.0,M,,",
	"GPRMC,235959.99,A,2030.0000,S,04030.0000,W,10.0,90.0,311226,,,E",
	"GPGSV,3,1,12,05,06,110,19,10,24,284,34,13,37,124,29,15,63,083,11,1",
	"PGRME,15.0,M,22.5,M,27.0,M",
}

// FuzzDecoder feeds arbitrary bytes to DecodeFile, whole and one byte at a time.
func FuzzDecoder(f *testing.F) {
	f.Add([]byte(nmea(fuzzSeeds[0]) + "\r\n" + nmea(fuzzSeeds[1]) + "\r\n"))
	f.Add([]byte("\xb5b\x01\x07" + nmea(fuzzSeeds[4]) + nmea(fuzzSeeds[5]) + "\r"))
	f.Add([]byte("# comment\n$GPRMC,120000,A*00\n$$$\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, stats, err := DecodeFile(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		checkFuzzed(t, got, stats)
		got, stats, err = DecodeFile(iotest.OneByteReader(bytes.NewReader(data)))
		if err != nil {
			t.Fatal(err)
		}
		checkFuzzed(t, got, stats)
	})
}

// FuzzSentences gives each line of its input a correct checksum, so that the fuzzer
// explores the fields and the merging of epochs rather than the checksum.
func FuzzSentences(f *testing.F) {
	f.Add(strings.Join(fuzzSeeds[:4], "\n"))
	f.Add(strings.Join(fuzzSeeds[4:9], "\n"))
	f.Add(strings.Join(fuzzSeeds[9:], "\n"))
	f.Fuzz(func(t *testing.T, input string) {
		var (
			d   Decoder
			got []wire.GPS
		)
		for _, body := range strings.Split(input, "\n") {
			got = append(got, d.Line([]byte(nmea(body)))...)
		}
		got = append(got, d.Flush()...)
		checkFuzzed(t, got, d.Stats())
	})
}

// checkFuzzed verifies what must hold for any input.
func checkFuzzed(t *testing.T, got []wire.GPS, stats Stats) {
	t.Helper()
	if stats.Readings != int64(len(got)) {
		t.Errorf("Readings = %d, returned %d", stats.Readings, len(got))
	}
	for _, c := range counters(stats) {
		if c < 0 {
			t.Errorf("negative counter: %+v", stats)
		}
	}
	finite := func(p *float64) bool { return p == nil || !math.IsNaN(*p) && !math.IsInf(*p, 0) }
	for i, g := range got {
		if _, err := json.Marshal(g); err != nil {
			t.Errorf("reading %d: %v", i, err)
		}
		if !(math.Abs(g.Lat) <= 90 && math.Abs(g.Lon) <= 180) {
			t.Errorf("reading %d: position %v %v", i, g.Lat, g.Lon)
		}
		if !finite(g.SpeedKmh) || !finite(g.CourseDeg) || !finite(g.HDOP) || !finite(g.AltM) {
			t.Errorf("reading %d: not finite: %+v", i, g)
		}
		if g.SpeedKmh != nil && *g.SpeedKmh < 0 || g.CourseDeg != nil && (*g.CourseDeg < 0 || *g.CourseDeg > 360) {
			t.Errorf("reading %d: speed or course out of range: %+v", i, g)
		}
		if g.HDOP != nil && *g.HDOP <= 0 || g.Sats != nil && *g.Sats <= 0 {
			t.Errorf("reading %d: zero for unknown: %+v", i, g)
		}
		if g.Fix != "" && (!g.Fix.Valid() || g.Fix == wire.FixNone) {
			t.Errorf("reading %d: fix %q", i, g.Fix)
		}
		if i > 0 && g.T.Equal(got[i-1].T.Time) {
			t.Errorf("reading %d: same time as the previous one", i)
		}
	}
}
