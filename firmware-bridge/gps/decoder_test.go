package gps

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/trenzinho/trenzinho/wire"
)

// nmea wraps a sentence body ("GPRMC,…") with '$' and its checksum.
func nmea(body string) string {
	var sum byte
	for i := 0; i < len(body); i++ {
		sum ^= body[i]
	}
	return fmt.Sprintf("$%s*%02X", body, sum)
}

// decodeLines runs lines through a new decoder, flushing at the end, and returns the
// readings as JSON lines and the counters.
func decodeLines(t *testing.T, d *Decoder, lines []string) ([]string, Stats) {
	t.Helper()
	var out []string
	add := func(gs []wire.GPS) {
		for _, g := range gs {
			b, err := json.Marshal(g)
			if err != nil {
				t.Fatalf("marshal %+v: %v", g, err)
			}
			out = append(out, string(b))
		}
	}
	for _, l := range lines {
		add(d.Line([]byte(l)))
	}
	add(d.Flush())
	return out, d.Stats()
}

// counters returns the named counters (JSON names) of s.
func counters(s Stats) map[string]int64 {
	b, _ := json.Marshal(s)
	var m map[string]int64
	_ = json.Unmarshal(b, &m)
	return m
}

func TestDecoder(t *testing.T) {
	const (
		rmcA    = "GPRMC,120000.00,A,2030.0000,S,04030.0000,W,10.0,90.0,291126,,,A"
		ggaQ1   = "GPGGA,120000.00,2030.0000,S,04030.0000,W,1,09,0.9,5.5,M,-5.0,M,,"
		gsa3    = "GPGSA,A,3,01,02,03,04,05,06,07,08,09,,,,1.5,0.9,1.2"
		vtg     = "GPVTG,91.0,T,,M,10.1,N,18.7,K,A"
		rmcNext = "GPRMC,120001.00,A,2030.0000,S,04030.0000,W,0.0,,291126,,,A"
		// The merged reading of rmcA, ggaQ1 and gsa3.
		merged = `{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":90,"hdop":0.9,"sats":9,"fix":"3d","alt_m":5.5}`
		next   = `{"t":"2026-11-29T12:00:01Z","lat":-20.5,"lon":-40.5,"speed_kmh":0}`
	)
	tests := []struct {
		name  string
		lines []string
		want  []string
		stats map[string]int64
	}{{
		name:  "rmc alone",
		lines: []string{nmea(rmcA)},
		want:  []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":90}`},
		stats: map[string]int64{"lines": 1, "sentences": 1, "readings": 1},
	}, {
		name:  "rmc before gga",
		lines: []string{nmea(rmcA), nmea(ggaQ1), nmea(gsa3), nmea(rmcNext)},
		want:  []string{merged, next},
		stats: map[string]int64{"readings": 2, "invalid_fixes": 0},
	}, {
		name:  "gga before rmc",
		lines: []string{nmea(ggaQ1), nmea(gsa3), nmea(rmcA), nmea(rmcNext)},
		want:  []string{merged, next},
	}, {
		name:  "rmc speed wins over vtg, vtg course when rmc has none",
		lines: []string{nmea("GPRMC,120000.00,A,2030.0000,S,04030.0000,W,10.0,,291126,,,A"), nmea(vtg)},
		want:  []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":91}`},
	}, {
		name:  "vtg speed in km/h when rmc has none",
		lines: []string{nmea("GPRMC,120000.00,A,2030.0000,S,04030.0000,W,,,291126,,,A"), nmea(vtg)},
		want:  []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.7,"course_deg":91}`},
	}, {
		name:  "bad checksum",
		lines: []string{strings.Replace(nmea(rmcA), "*", "0*", 1), "$GPRMC,120000.00,A*ZZ", nmea(rmcA)[:20] + "*00"},
		want:  nil,
		stats: map[string]int64{"bad_checksums": 3, "sentences": 0, "readings": 0},
	}, {
		name:  "lower-case checksum",
		lines: []string{"$GPRMC,120000.00,A,2030.0000,S,04030.0000,W,10.0,90.0,291126,,,A*53"},
		want:  []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":90}`},
		stats: map[string]int64{"bad_checksums": 0, "sentences": 1},
	}, {
		name:  "no checksum is dropped",
		lines: []string{"$" + rmcA, "$GNRMC,001053.00,A,4404.14083,N,12118.85886,W,0."},
		want:  nil,
		stats: map[string]int64{"no_checksum": 2, "sentences": 0},
	}, {
		name:  "status V",
		lines: []string{nmea("GPRMC,120000.00,V,2030.0000,S,04030.0000,W,10.0,90.0,291126,,,N"), nmea(rmcNext)},
		want:  []string{next},
		stats: map[string]int64{"invalid_fixes": 1, "readings": 1},
	}, {
		name:  "mode N with status A",
		lines: []string{nmea("GPRMC,120000.00,A,2030.0000,S,04030.0000,W,10.0,90.0,291126,,,N")},
		stats: map[string]int64{"invalid_fixes": 1, "readings": 0},
	}, {
		name:  "simulator mode",
		lines: []string{nmea("GPRMC,120000.00,A,2030.0000,S,04030.0000,W,10.0,90.0,291126,,,S")},
		stats: map[string]int64{"invalid_fixes": 1},
	}, {
		name:  "quality 0 overrules rmc A",
		lines: []string{nmea(rmcA), nmea("GPGGA,120000.00,2030.0000,S,04030.0000,W,0,00,99.9,,M,,M,,")},
		stats: map[string]int64{"invalid_fixes": 1, "readings": 0},
	}, {
		name:  "quality 0 alone",
		lines: []string{nmea("GPGGA,120000.00,,,,,0,00,,,M,,M,,"), nmea("GPGGA,120001.00,,,,,0,00,,,M,,M,,")},
		stats: map[string]int64{"invalid_fixes": 2},
	}, {
		name:  "quality 6 is estimated",
		lines: []string{nmea(rmcA), nmea("GPGGA,120000.00,2030.0000,S,04030.0000,W,6,04,2.5,5.5,M,-5.0,M,,"), nmea(gsa3)},
		want:  []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":90,"hdop":2.5,"sats":4,"fix":"estimated","alt_m":5.5}`},
		stats: map[string]int64{"estimated": 1, "readings": 1},
	}, {
		name:  "rmc mode E is estimated",
		lines: []string{nmea("GPRMC,120000.00,A,2030.0000,S,04030.0000,W,10.0,90.0,291126,,,E"), nmea(ggaQ1)},
		want:  []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":90,"hdop":0.9,"sats":9,"fix":"estimated","alt_m":5.5}`},
		stats: map[string]int64{"estimated": 1},
	}, {
		name: "dgps and rtk",
		lines: []string{
			nmea(rmcA), nmea(strings.Replace(ggaQ1, ",1,09,", ",2,09,", 1)), nmea(gsa3),
			nmea(rmcNext), nmea("GPGGA,120001.00,2030.0000,S,04030.0000,W,5,12,0.6,5.5,M,-5.0,M,1.0,0001"),
		},
		want: []string{
			strings.Replace(merged, `"3d"`, `"dgps"`, 1),
			`{"t":"2026-11-29T12:00:01Z","lat":-20.5,"lon":-40.5,"speed_kmh":0,"hdop":0.6,"sats":12,"fix":"rtk","alt_m":5.5}`,
		},
	}, {
		name: "date rollover",
		lines: []string{
			nmea("GPRMC,235959.50,A,2030.0000,S,04030.0000,W,1.0,,311226,,,A"),
			nmea("GPGGA,000000.50,2030.0000,S,04030.0000,W,1,05,1.0,5.5,M,-5.0,M,,"),
			nmea("GPGGA,000001.50,2030.0000,S,04030.0000,W,1,05,1.0,5.5,M,-5.0,M,,"),
			nmea("GPRMC,000002.50,A,2030.0000,S,04030.0000,W,1.0,,010127,,,A"),
		},
		want: []string{
			`{"t":"2026-12-31T23:59:59.5Z","lat":-20.5,"lon":-40.5,"speed_kmh":1.852}`,
			`{"t":"2027-01-01T00:00:00.5Z","lat":-20.5,"lon":-40.5,"hdop":1,"sats":5,"alt_m":5.5}`,
			`{"t":"2027-01-01T00:00:01.5Z","lat":-20.5,"lon":-40.5,"hdop":1,"sats":5,"alt_m":5.5}`,
			`{"t":"2027-01-01T00:00:02.5Z","lat":-20.5,"lon":-40.5,"speed_kmh":1.852}`,
		},
	}, {
		name: "zda dates a gga epoch",
		lines: []string{
			nmea("GPZDA,120000.00,29,11,2026,00,00"),
			nmea("GPGGA,120000.00,2030.0000,S,04030.0000,W,1,05,1.0,5.5,M,-5.0,M,,"),
			nmea(vtg),
		},
		want: []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.7,"course_deg":91,"hdop":1,"sats":5,"alt_m":5.5}`},
	}, {
		name:  "gga without any date",
		lines: []string{nmea(ggaQ1)},
		stats: map[string]int64{"undated": 1, "readings": 0},
	}, {
		name: "multiple talkers, GN preferred",
		lines: []string{
			nmea("GPGGA,120000.00,2030.0000,S,04030.0000,W,1,08,0.9,5.5,M,-5.0,M,,"),
			nmea("GLGGA,120000.00,2030.0000,S,04030.0000,W,1,02,0.9,5.5,M,-5.0,M,,"),
			nmea("GNGGA,120000.00,2030.0000,S,04030.0000,W,1,10,0.8,5.5,M,-5.0,M,,"),
			nmea("GNGSA,A,3,01,02,03,04,05,06,07,08,,,,,1.5,0.8,1.2,1"),
			nmea("GNGSA,A,3,65,66,,,,,,,,,,,1.5,0.8,1.2,2"),
			nmea("BDGSV,1,1,01,214,45,100,40"),
			nmea("GARMC,120000.00,A,2030.0000,S,04030.0000,W,10.0,90.0,291126,,,A"),
			nmea("GNRMC,120000.00,A,2030.0000,S,04030.0000,W,11.0,90.0,291126,,,A"),
		},
		want:  []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":20.372,"course_deg":90,"hdop":0.8,"sats":10,"fix":"3d","alt_m":5.5}`},
		stats: map[string]int64{"unknown_sentences": 1, "readings": 1},
	}, {
		name: "untimed no-fix sentences do not touch the previous epoch",
		lines: []string{
			nmea(ggaQ1), nmea(rmcA), nmea(gsa3),
			nmea("GPVTG,,T,,M,,N,,K,N"), nmea("GPGSA,A,1,,,,,,,,,,,,,,,"),
			nmea("GPGGA,,,,,,0,,,,,,,,"), nmea("GPRMC,,V,,,,,,,,,,N"),
		},
		want:  []string{merged},
		stats: map[string]int64{"invalid_fixes": 1, "readings": 1},
	}, {
		name: "garbage, comments and glued sentences",
		lines: []string{
			"# a comment",
			"\x00\xb5b\x01\x07junk" + nmea(ggaQ1) + nmea(rmcA) + "\r",
			"no sentence here",
			nmea(gsa3) + "\r\n",
			"$$$",
			nmea(rmcNext),
		},
		want:  []string{merged, next},
		stats: map[string]int64{"comments": 1, "garbage": 2, "lines": 6, "no_checksum": 3},
	}, {
		name:  "too long",
		lines: []string{strings.Repeat("x", MaxLineLength-len(nmea(rmcA))) + nmea(rmcA), strings.Repeat("x", MaxLineLength) + nmea(rmcA)},
		want:  []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":90}`},
		stats: map[string]int64{"too_long": 1, "lines": 2},
	}, {
		name: "malformed fields",
		lines: []string{
			nmea("GPRMC,120000.00,A,9530.0000,S,04030.0000,W,10.0,90.0,291126,,,A"),
			nmea("GPRMC,120000.00,A,2030.0000,X,04030.0000,W,10.0,90.0,291126,,,A"),
			nmea("GPRMC,120000.00,A,2030.0000,S,04030.0000,W,NaN,90.0,291126,,,A"),
			nmea("GPRMC,120000.00,A,2030.0000,S,04030.0000,W,1e3,90.0,291126,,,A"),
			nmea("GPRMC,120000.00,A,2030.0000,S,04030.0000,W,-1.0,90.0,291126,,,A"),
			nmea("GPRMC,120000.00,A,2030.0000,S,04030.0000,W,1.0,90.0,311126,,,A"),
			nmea("GPRMC,250000.00,A,2030.0000,S,04030.0000,W,1.0,90.0,291126,,,A"),
			nmea("GPRMC,120000.00,X,2030.0000,S,04030.0000,W,1.0,90.0,291126,,,A"),
			nmea("GPGGA,120000.00,2030.0000,S,04030.0000,W,X,08,0.9,5.5,M,-5.0,M,,"),
			nmea("GPRMC,120000"),
		},
		stats: map[string]int64{"malformed": 10, "sentences": 10, "readings": 0},
	}, {
		name:  "unknown values are omitted, not zero",
		lines: []string{nmea(rmcA), nmea("GPGGA,120000.00,2030.0000,S,04030.0000,W,1,00,0.0,,M,,M,,")},
		want:  []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":90}`},
	}, {
		name:  "millisecond precision, truncated",
		lines: []string{nmea("GPRMC,120000.1239,A,2030.0000,S,04030.0000,W,10.0,90.0,291126,,,A")},
		want:  []string{`{"t":"2026-11-29T12:00:00.123Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":90}`},
	}, {
		name:  "repeated epoch time",
		lines: []string{nmea(rmcA), nmea(rmcNext), nmea(rmcNext), nmea("GPZDA,120001.50,29,11,2026,00,00"), nmea(rmcNext)},
		want:  []string{`{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":90}`, next},
		stats: map[string]int64{"duplicates": 1},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, stats := decodeLines(t, new(Decoder), tt.lines)
			if strings.Join(got, "\n") != strings.Join(tt.want, "\n") {
				t.Errorf("readings:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(tt.want, "\n"))
			}
			have := counters(stats)
			for k, v := range tt.stats {
				if _, ok := have[k]; !ok {
					t.Fatalf("no counter %q", k)
				}
				if have[k] != v {
					t.Errorf("%s = %d, want %d (%+v)", k, have[k], v, stats)
				}
			}
		})
	}
}

func TestAcceptNoChecksum(t *testing.T) {
	d := &Decoder{AcceptNoChecksum: true}
	got, stats := decodeLines(t, d, []string{"$GPRMC,120000.00,A,2030.0000,S,04030.0000,W,10.0,90.0,291126,,,A"})
	want := `{"t":"2026-11-29T12:00:00Z","lat":-20.5,"lon":-40.5,"speed_kmh":18.52,"course_deg":90}`
	if len(got) != 1 || got[0] != want {
		t.Errorf("got %q, want %s", got, want)
	}
	if stats.NoChecksum != 1 || stats.Sentences != 1 {
		t.Errorf("stats %+v", stats)
	}
}

// TestUnrounded checks that coordinates are degrees + minutes/60 and speeds knots × 1.852,
// with nothing rounded on the way.
func TestUnrounded(t *testing.T) {
	var d Decoder
	d.Line([]byte(nmea("GNRMC,132820.60,A,4134.49821229,N,09345.03351845,W,3.252,92.308,180320,11.5985,E,D")))
	gs := d.Flush()
	if len(gs) != 1 {
		t.Fatalf("got %d readings", len(gs))
	}
	g := gs[0]
	if want := 41 + 34.49821229/60; g.Lat != want {
		t.Errorf("lat %v, want %v", g.Lat, want)
	}
	if want := -(93 + 45.03351845/60); g.Lon != want {
		t.Errorf("lon %v, want %v", g.Lon, want)
	}
	if want := 3.252 * 1.852; g.SpeedKmh == nil || *g.SpeedKmh != want {
		t.Errorf("speed %v, want %v", g.SpeedKmh, want)
	}
	if g.Fix != "dgps" {
		t.Errorf("fix %q, want dgps", g.Fix)
	}
	if got := g.T.String(); got != "2020-03-18T13:28:20.6Z" {
		t.Errorf("time %s", got)
	}
	if math.Abs(g.Lat-41.574970205) > 1e-9 {
		t.Errorf("lat %v far from gpsd's", g.Lat)
	}
}

func TestDecodeFileLineEnds(t *testing.T) {
	sentences := []string{
		nmea("GPGGA,120000.00,2030.0000,S,04030.0000,W,1,09,0.9,5.5,M,-5.0,M,,"),
		nmea("GPRMC,120000.00,A,2030.0000,S,04030.0000,W,10.0,90.0,291126,,,A"),
		nmea("GPRMC,120001.00,A,2030.0000,S,04030.0000,W,0.0,,291126,,,A"),
	}
	for _, sep := range []string{"\n", "\r\n", "\r", "\r\r\n", "\n\n"} {
		input := strings.Join(sentences, sep) + sep + strings.Repeat("z", 3*MaxLineLength) + sep
		got, stats, err := DecodeFile(strings.NewReader(input))
		if err != nil {
			t.Fatal(err)
		}
		// How a too-long line is cut depends on how the reader delivers it.
		if len(got) != 2 || stats.Sentences != 3 || stats.TooLong < 1 {
			t.Errorf("separator %q: %d readings, %+v", sep, len(got), stats)
		}
		got, stats, err = DecodeFile(iotest.OneByteReader(strings.NewReader(input)))
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || stats.Sentences != 3 || stats.TooLong != 2 {
			t.Errorf("separator %q, one byte at a time: %d readings, %+v", sep, len(got), stats)
		}
	}
}

func TestScanLinesNoTerminator(t *testing.T) {
	data := []byte(strings.Repeat("a", 2*MaxLineLength+10))
	adv, tok, err := ScanLines(data, false)
	if err != nil || adv != MaxLineLength+1 || len(tok) != MaxLineLength+1 {
		t.Errorf("ScanLines = %d, %d bytes, %v", adv, len(tok), err)
	}
	adv, tok, err = ScanLines([]byte("\r\n$GP"), false)
	if err != nil || adv != 2 || tok != nil {
		t.Errorf("partial line: %d, %q, %v", adv, tok, err)
	}
	adv, tok, err = ScanLines([]byte("\r\n$GP"), true)
	if err != nil || adv != 5 || string(tok) != "$GP" {
		t.Errorf("last line: %d, %q, %v", adv, tok, err)
	}
}
