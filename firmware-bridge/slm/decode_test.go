package slm

import (
	"bytes"
	"errors"
	"io"
	"testing"
	"testing/iotest"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

func checkReadings(t *testing.T, got []wire.Sound, want [][4]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d readings, want %d", len(got), len(want))
	}
	for i, w := range want {
		checkSound(t, got[i], w[0].(string), w[1].(float64), w[2].(float64), w[3].(float64))
	}
}

const leq6070 = 67.40362689494245 // 60 and 70 dB, equal times

func TestDecodeStreamPCEMeterClock(t *testing.T) {
	// The meter's clock reads 12:00:00 local (UTC−3); --start only gives the zone.
	s, _ := pceStream(time.Date(2026, 11, 29, 12, 0, 0, 0, brt), 25)
	start := time.Date(2000, 1, 1, 0, 0, 0, 0, brt)
	rs, st, err := DecodeStream(iotest.HalfReader(bytes.NewReader(cat([]byte("junk"), s))), "pce322a", start, 10)
	if err != nil {
		t.Fatal(err)
	}
	checkReadings(t, rs, [][4]any{
		{"2026-11-29T15:00:00Z", leq6070, 70.0, 1.0},
		{"2026-11-29T15:00:01Z", leq6070, 70.0, 1.0},
		{"2026-11-29T15:00:02Z", 66.62757831681574, 70.0, 0.5},
	})
	if st != (Stats{FramesOK: 25, GarbageBytes: 4}) {
		t.Errorf("stats %+v", st)
	}
}

func TestDecodePCEWithoutClock(t *testing.T) {
	var s []byte
	for i := range 15 {
		s = append(s, EncodePCE(PCEFrame{DeciDB: uint16(600 + 100*(i%2))})...)
	}
	start := time.Date(2026, 11, 29, 15, 0, 0, 500e6, time.UTC)
	rs, _, err := Decode(bytes.NewReader(s), DecodeConfig{Protocol: ProtocolPCE322A, Start: start, OffsetDB: -0.5})
	if err != nil {
		t.Fatal(err)
	}
	checkReadings(t, rs, [][4]any{
		{"2026-11-29T15:00:00.5Z", 66.12757831681574, 69.5, 0.5},
		{"2026-11-29T15:00:01Z", leq6070 - 0.5, 69.5, 1.0},
	})

	// Without a start time, such samples cannot be timed.
	rs, st, err := DecodeStream(bytes.NewReader(s), "pce322a", time.Time{}, 0)
	if err != nil || len(rs) != 0 || st.Untimed != 15 || st.FramesOK != 15 {
		t.Errorf("no start: %d readings, %+v, %v", len(rs), st, err)
	}
}

func TestDecodeStreamModbus(t *testing.T) {
	var s []byte
	for i := range 25 {
		r := resp(uint16(600 + 100*(i%2)))
		switch i {
		case 13:
			r[5] ^= 1 // bad CRC: dropped, but its time slot is kept
		case 17:
			r = EncodeModbusResponse(ModbusResponse{Address: 1, Exception: 4})
		}
		s = append(s, r...)
	}
	start := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	rs, st, err := DecodeStream(bytes.NewReader(s), "modbus-rtu", start, 10)
	if err != nil {
		t.Fatal(err)
	}
	checkReadings(t, rs, [][4]any{
		{"2026-11-29T15:00:00Z", leq6070, 70.0, 1.0},
		// 60 dB ×5, 70 dB ×3 (13 and 17 missing).
		{"2026-11-29T15:00:01Z", 66.40978057358332, 70.0, 0.8},
		{"2026-11-29T15:00:02Z", 66.62757831681574, 70.0, 0.5},
	})
	if st != (Stats{FramesOK: 23, BadChecksum: 1, Exceptions: 1}) {
		t.Errorf("stats %+v", st)
	}

	// A divisor and an address.
	s = cat(EncodeModbusResponse(ModbusResponse{Address: 9, Registers: []uint16{6820}}), resp(1))
	rs, st, err = Decode(bytes.NewReader(s), DecodeConfig{Protocol: ProtocolModbusRTU, Start: start, Address: 9, Divisor: 100})
	if err != nil {
		t.Fatal(err)
	}
	checkReadings(t, rs, [][4]any{{"2026-11-29T15:00:00Z", 68.2, 68.2, 0.1}})
	if st.GarbageBytes != 7 {
		t.Errorf("stats %+v", st)
	}
}

func TestDecodeErrors(t *testing.T) {
	start := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	for name, f := range map[string]func() error{
		"protocol": func() error { _, _, err := DecodeStream(bytes.NewReader(nil), "d8", start, 10); return err },
		"config protocol": func() error {
			_, _, err := Decode(bytes.NewReader(nil), DecodeConfig{Protocol: "x", Start: start})
			return err
		},
		"modbus without start": func() error {
			_, _, err := DecodeStream(bytes.NewReader(nil), "modbus-rtu", time.Time{}, 10)
			return err
		},
		"rate": func() error { _, _, err := DecodeStream(bytes.NewReader(nil), "pce322a", start, -1); return err },
		"divisor": func() error {
			_, _, err := Decode(bytes.NewReader(nil), DecodeConfig{Protocol: ProtocolModbusRTU, Start: start, Divisor: -1})
			return err
		},
	} {
		if f() == nil {
			t.Errorf("%s: no error", name)
		}
	}

	// A read error returns what was decoded before it.
	s := cat(resp(600), resp(700), resp(600))
	rs, st, err := DecodeStream(io.MultiReader(bytes.NewReader(s), errReader{}), "modbus-rtu", start, 10)
	if !errors.Is(err, errFail) || len(rs) != 1 || st.FramesOK != 3 {
		t.Errorf("read error: %v, %d readings, %+v", err, len(rs), st)
	}
}

func TestParseProtocol(t *testing.T) {
	for s, want := range map[string]Protocol{"pce322a": ProtocolPCE322A, "PCE322A": ProtocolPCE322A, "modbus-rtu": ProtocolModbusRTU} {
		if p, err := ParseProtocol(s); err != nil || p != want {
			t.Errorf("ParseProtocol(%q) = %q, %v", s, p, err)
		}
	}
}
