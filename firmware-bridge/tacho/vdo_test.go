package tacho

import (
	"bytes"
	"encoding/hex"
	"reflect"
	"strings"
	"testing"
	"time"
)

// referenceVDO is the 88-byte example frame of the tachograph_d8 project's README: one card,
// checksum 0xCC.
func referenceVDO(t testing.TB) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.Join([]string{
		"5544544" + "34f", "00", // UDTCO, reserved
		"ac1e0d0847207d80", // time
		"0a00c0c0",         // states
		"0000",             // speed
		"9bb2e105",         // total distance
		"036f5300",         // trip distance
		"401f", "ffff5004", // K-factor, not decoded
	}, ""))
	if err != nil {
		t.Fatal(err)
	}
	b = append(b, 17)
	b = append(b, "WDB9634031L717729"...)
	b = append(b, 14, 0x01)
	b = append(b, "123TEST      "...)
	b = append(b, 18, 0x04, 0x29)
	b = append(b, "000000000086H101"...)
	b = append(b, 0, 0xcc)
	return b
}

func TestVDOReferenceFrame(t *testing.T) {
	b := referenceVDO(t)
	if len(b) != 88 {
		t.Fatalf("reference frame is %d bytes, want 88", len(b))
	}
	f, err := DecodeVDO(b)
	if err != nil {
		t.Fatal(err)
	}
	want := VDOFrame{
		Time:              time.Date(2017, 8, 18, 13, 30, 43, 0, time.UTC),
		LocalMinuteOffset: 0,
		LocalHourOffset:   3,
		WorkingStates:     0x0a,
		Driver1States:     0x00,
		Driver2States:     0xc0,
		SystemEvents:      0xc0,
		Speed:             0,
		TotalDistance:     0x05e1b29b,
		TripDistance:      0x00536f03,
		KFactor:           0x1f40,
		Undecoded:         [4]byte{0xff, 0xff, 0x50, 0x04},
		VIN:               "WDB9634031L717729",
		Custom:            "\x01123TEST      ",
		Card1:             &Card{Type: 4, Nation: 0x29, Number: "000000000086H101"},
	}
	if !reflect.DeepEqual(f, want) {
		t.Errorf("DecodeVDO =\n%+v\nwant\n%+v", f, want)
	}
	if got := EncodeVDO(f); !bytes.Equal(got, b) {
		t.Errorf("EncodeVDO(DecodeVDO(ref)) =\n% x\nwant\n% x", got, b)
	}
	r := f.Reading()
	if !r.TimeValid || r.Tacho.T.String() != "2017-08-18T13:30:43Z" {
		t.Errorf("T = %v (valid %v)", r.Tacho.T, r.TimeValid)
	}
	if r.Tacho.SpeedKmh == nil || *r.Tacho.SpeedKmh != 0 {
		t.Errorf("speed = %v, want 0", r.Tacho.SpeedKmh)
	}
	if r.Tacho.OdometerKm == nil || *r.Tacho.OdometerKm != 493387.015 {
		t.Errorf("odometer = %v, want 493387.015", r.Tacho.OdometerKm)
	}
	if r.Tacho.Card != "000000000086H101" {
		t.Errorf("card = %q", r.Tacho.Card)
	}
}

// sampleVDO returns a frame with cards driver cards and the usual 17-byte VIN and 14-byte
// custom string.
func sampleVDO(cards int, at time.Time) VDOFrame {
	f := VDOFrame{
		Time:            at,
		LocalHourOffset: -3,
		WorkingStates:   0x1b,
		Speed:           3098,    // 12.1015625 km/h
		TotalDistance:   2046911, // 10234.555 km
		TripDistance:    1234,
		KFactor:         8000,
		VIN:             "9BWZZZ377VT004251",
		Custom:          "PIU-001       ",
	}
	if cards >= 1 {
		f.Card1 = &Card{Type: 1, Nation: 0x1b, Number: "0000000086H10100"}
	}
	if cards >= 2 {
		f.Card2 = &Card{Type: 1, Nation: 0x1b, Number: "0000000099X20200"}
	}
	return f
}

func TestVDORoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 29, 15, 0, 0, 750e6, time.UTC)
	for cards, wantLen := range []int{70, 88, 106} {
		f := sampleVDO(cards, at)
		b := EncodeVDO(f)
		if len(b) != wantLen {
			t.Errorf("%d cards: frame is %d bytes, want %d", cards, len(b), wantLen)
		}
		if x := vdoChecksum(b); x != 0 {
			t.Errorf("%d cards: XOR of the whole frame is %#x, want 0", cards, x)
		}
		got, err := DecodeVDO(b)
		if err != nil {
			t.Fatalf("%d cards: %v", cards, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Errorf("%d cards: round trip\n%+v\nwant\n%+v", cards, got, f)
		}
	}
}

func TestVDOReadingValues(t *testing.T) {
	f := sampleVDO(2, time.Date(2026, 11, 29, 15, 0, 0, 250e6, time.UTC))
	r := f.Reading()
	if got := r.Tacho.T.String(); got != "2026-11-29T15:00:00.25Z" {
		t.Errorf("T = %s", got)
	}
	if *r.Tacho.SpeedKmh != 12.1015625 {
		t.Errorf("speed = %v, want 12.1015625 (3098/256)", *r.Tacho.SpeedKmh)
	}
	if *r.Tacho.OdometerKm != 10234.555 {
		t.Errorf("odometer = %v, want 10234.555", *r.Tacho.OdometerKm)
	}
	if r.Tacho.Card != "0000000086H10100" {
		t.Errorf("card = %q, want driver 1's", r.Tacho.Card)
	}

	f = sampleVDO(0, time.Time{})
	f.Speed, f.TotalDistance = 0xfb00, 0xfb000000
	r = f.Reading()
	if r.TimeValid || !r.Tacho.T.IsZero() || r.Tacho.SpeedKmh != nil || r.Tacho.OdometerKm != nil || r.Tacho.Card != "" {
		t.Errorf("reading of a frame without time, speed, distance or card = %+v", r)
	}

	f.Speed, f.TotalDistance = 0xfaff, 0xfaffffff
	r = f.Reading()
	if *r.Tacho.SpeedKmh != 250.99609375 || *r.Tacho.OdometerKm != 21055406.075 {
		t.Errorf("largest valid values: speed %v, odometer %v", *r.Tacho.SpeedKmh, *r.Tacho.OdometerKm)
	}
}

func TestVDOTime(t *testing.T) {
	// sec, min, hour, month, day, year raw bytes.
	tests := []struct {
		raw  [6]byte
		want string // "" for no time
	}{
		{[6]byte{172, 30, 13, 8, 71, 32}, "2017-08-18T13:30:43Z"},
		{[6]byte{1, 0, 0, 1, 1, 41}, "2026-01-01T00:00:00.25Z"},
		{[6]byte{239, 59, 23, 12, 124, 41}, "2026-12-31T23:59:59.75Z"},
		{[6]byte{0, 0, 0, 1, 4, 41}, "2026-01-01T00:00:00Z"}, // any quarter of day 1
		{[6]byte{0, 0, 0, 1, 5, 41}, "2026-01-02T00:00:00Z"},
		{[6]byte{0, 0, 12, 2, 4*28 + 1, 39}, "2024-02-29T12:00:00Z"},
		{[6]byte{0, 0, 12, 2, 4*28 + 1, 41}, ""}, // 29 February 2026
		{[6]byte{0, 0, 0, 4, 4*30 + 1, 41}, ""},  // 31 April
		{[6]byte{0, 0, 0, 1, 0, 41}, ""},         // day 0: none
		{[6]byte{0, 0, 0, 0, 1, 41}, ""},         // month 0
		{[6]byte{0, 0, 0, 13, 1, 41}, ""},
		{[6]byte{240, 0, 0, 1, 1, 41}, ""},
		{[6]byte{0, 60, 0, 1, 1, 41}, ""},
		{[6]byte{0, 0, 24, 1, 1, 41}, ""},
		{[6]byte{0, 0, 0, 1, 125, 41}, ""},
		{[6]byte{0, 0, 0, 1, 1, 251}, ""},
		{[6]byte{}, ""},
		{[6]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, ""},
	}
	for _, tt := range tests {
		b := make([]byte, vdoVariableOff)
		copy(b[vdoSecondOff:], tt.raw[:])
		got, ok := vdoTime(b)
		if ok != (tt.want != "") || ok && got.Format("2006-01-02T15:04:05.999Z") != tt.want {
			t.Errorf("vdoTime(%v) = %v, %v; want %q", tt.raw, got, ok, tt.want)
		}
		if ok {
			// Encoding gives the canonical quarter of the day, which decodes the same.
			e := make([]byte, vdoVariableOff)
			putVDOTime(e, got)
			if again, _ := vdoTime(e); !again.Equal(got) {
				t.Errorf("time %v encodes to %v, which decodes to %v", got, e[vdoSecondOff:vdoYearOff+1], again)
			}
		}
	}
}

func TestVDODayQuarter(t *testing.T) {
	// The day byte carries the quarter of the day, as in the reference frame (13:30 on the
	// 18th is raw 71).
	b := make([]byte, vdoVariableOff)
	putVDOTime(b, time.Date(2017, 8, 18, 13, 30, 43, 0, time.UTC))
	if b[vdoDayOff] != 71 {
		t.Errorf("day byte = %d, want 71", b[vdoDayOff])
	}
	putVDOTime(b, time.Date(2017, 8, 18, 23, 0, 0, 0, time.UTC))
	if b[vdoDayOff] != 72 {
		t.Errorf("day byte = %d, want 72", b[vdoDayOff])
	}
}

func TestVDOEncodeLimits(t *testing.T) {
	f := VDOFrame{
		Time:              time.Date(1980, 1, 1, 0, 0, 0, 0, time.UTC), // before 1985: none
		LocalMinuteOffset: -500,
		LocalHourOffset:   500,
		VIN:               strings.Repeat("V", 40),
		Custom:            strings.Repeat("C", 80),
		Card1:             &Card{Number: strings.Repeat("N", 40)},
		Card2:             &Card{},
	}
	b := EncodeVDO(f)
	got, err := DecodeVDO(b)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Time.IsZero() || got.LocalMinuteOffset != -125 || got.LocalHourOffset != 130 ||
		len(got.VIN) != vdoMaxVIN || len(got.Custom) != vdoMaxCustom ||
		len(got.Card1.Number) != vdoMaxCard-2 || got.Card2 == nil || got.Card2.Number != "" {
		t.Errorf("limits: %+v", got)
	}
}

func TestDecodeVDOErrors(t *testing.T) {
	good := EncodeVDO(sampleVDO(1, time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)))
	badSum := bytes.Clone(good)
	badSum[len(badSum)-1] ^= 1
	longVIN := bytes.Clone(good)
	longVIN[vdoVariableOff] = vdoMaxVIN + 1
	card1 := EncodeVDO(VDOFrame{})
	card1[len(card1)-3] = 1 // card 1 length 1
	for name, b := range map[string][]byte{
		"empty":        nil,
		"no header":    good[1:],
		"cut short":    good[:len(good)-1],
		"trailing":     append(bytes.Clone(good), 0),
		"checksum":     badSum,
		"long VIN":     longVIN,
		"1-byte card":  card1,
		"header only":  []byte(vdoMagic),
		"fixed part":   good[:vdoVariableOff],
		"partial head": []byte("UDT"),
	} {
		if _, err := DecodeVDO(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}
