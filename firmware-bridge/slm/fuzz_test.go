package slm

import (
	"bytes"
	"math"
	"reflect"
	"testing"
	"time"
)

func FuzzPCE(f *testing.F) {
	s, _ := pceStream(time.Date(2026, 11, 29, 12, 0, 0, 0, brt), 12)
	f.Add(s, uint(20))
	f.Add(cat([]byte("\x7f\x00"), s[:20], []byte{0xff}, s[13:40], []byte{0x7f, 0x01}), uint(7))
	f.Add(EncodePCE(PCEFrame{DeciDB: 1600, HourFlag: true}), uint(1))
	f.Add(cat(make([]byte, 13), []byte{0x7f}, make([]byte, 12)), uint(13))
	start := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, data []byte, split uint) {
		whole, wholeStats := decodePCEAll(t, data)
		k := int(split % uint(len(data)+1))
		parts, partStats := decodePCEAll(t, data[:k], data[k:])
		if !reflect.DeepEqual(whole, parts) || wholeStats != partStats {
			t.Fatalf("split at %d changes the result: %+v / %+v", k, wholeStats, partStats)
		}
		for _, fr := range whole {
			again, err := DecodePCE(EncodePCE(fr), brt)
			if err != nil || !reflect.DeepEqual(again, fr) {
				t.Fatalf("re-encoding %+v gives %+v, %v", fr, again, err)
			}
			if db := fr.DB(); db < 0.1 || db > 160 {
				t.Fatalf("level %v dB", db)
			}
		}
		rs, st, err := Decode(bytes.NewReader(data), DecodeConfig{Protocol: ProtocolPCE322A, Start: start, MeterLocation: brt})
		if err != nil || st.FramesOK != int64(len(whole)) {
			t.Fatalf("Decode: %v, %+v", err, st)
		}
		for _, r := range rs {
			leq, lmax, dur := *r.LAeqDB, *r.LAmaxDB, *r.DurS
			if math.IsNaN(leq) || leq > lmax+1e-9 || leq < 0.1-1e-9 || lmax > 160 || !(dur > 0 && dur <= 1) {
				t.Fatalf("reading %+v: L_Aeq %v, L_AFmax %v, %v s", r.T, leq, lmax, dur)
			}
		}
	})
}

func FuzzModbusResponse(f *testing.F) {
	bad := resp(700)
	bad[3] ^= 0x80
	f.Add(cat([]byte{1, 3}, resp(600), []byte{1}, bad, resp(601)[:4], resp(602),
		EncodeModbusResponse(ModbusResponse{Address: 1, Exception: 4}), resp(603), []byte{1, 3, 2, 0}), uint(9), uint8(1))
	f.Add(EncodeModbusResponse(ModbusResponse{Address: 1, Registers: []uint16{1, 2, 3}}), uint(4), uint8(0))
	f.Add(cat([]byte{1, 3, 2}, resp(682)), uint(2), uint8(1))
	f.Add(cat([]byte{1, 3, 250}, resp(682)), uint(0), uint8(0))
	f.Fuzz(func(t *testing.T, data []byte, split uint, count uint8) {
		n := int(count % 4)
		whole, wholeStats := decodeModbusAll(t, n, data)
		k := int(split % uint(len(data)+1))
		parts, partStats := decodeModbusAll(t, n, data[:k], data[k:])
		if !reflect.DeepEqual(whole, parts) || wholeStats != partStats {
			t.Fatalf("split at %d changes the result: %+v / %+v", k, wholeStats, partStats)
		}
		var seq int64 = -1
		for _, r := range whole {
			if r.Seq <= seq {
				t.Fatalf("Seq %d after %d", r.Seq, seq)
			}
			seq = r.Seq
			if r.Exception == 0 && (len(r.Registers) == 0 || n > 0 && len(r.Registers) != n) {
				t.Fatalf("%d registers, %d expected", len(r.Registers), n)
			}
			again, _ := decodeModbusAll(t, n, EncodeModbusResponse(r))
			r.Seq = 0
			if len(again) != 1 || !reflect.DeepEqual(again[0], r) {
				t.Fatalf("re-encoding %+v gives %+v", r, again)
			}
		}
	})
}

func FuzzRTURequest(f *testing.F) {
	f.Add(cat([]byte{0xff, 5}, EncodeModbusRequest(5, 0, 1), EncodeModbusRequest(5, 1, 1), EncodeModbusRequest(5, 0, 200)))
	f.Add(appendCRC([]byte{5, 4, 0, 0, 0, 1}))
	f.Add(EncodeModbusRequest(6, 0, 1))
	s := &RTUResponder{Address: 5, Read: func(start, count uint16) ([]uint16, error) {
		v := make([]uint16, count)
		for i := range v {
			v[i] = start + uint16(i)
		}
		return v, nil
	}}
	f.Fuzz(func(t *testing.T, data []byte) {
		rw := &pipeRW{in: bytes.NewReader(data)}
		if err := s.Serve(rw); err != nil {
			t.Fatal(err)
		}
		// Every answer is a whole response of address 5 with a good CRC.
		out := rw.out.Bytes()
		for len(out) > 0 {
			n := 5
			if len(out) >= 3 && out[1] == fcReadHolding {
				n += int(out[2])
			}
			if len(out) < n || out[0] != 5 || out[1] != fcReadHolding && out[1]&fcException == 0 || !crcOK(out[:n]) {
				t.Fatalf("bad answer % x", out)
			}
			out = out[n:]
		}
	})
}
