package tacho

import (
	"math"
	"reflect"
	"testing"
	"time"
)

// fuzzDecoder checks, for any input, that the decoder does not panic, that where the input
// is split does not change what it decodes, that every byte is accounted for once, and that
// every reading re-encodes to a frame that decodes the same.
func fuzzDecoder(t *testing.T, l Layout, data []byte, split uint) {
	whole, wholeStats := decodeAll(t, l, data)
	k := int(split % uint(len(data)+1))
	parts, partStats := decodeAll(t, l, data[:k], data[k:])
	if !reflect.DeepEqual(whole, parts) || wholeStats != partStats {
		t.Fatalf("split at %d changes the result: %+v / %+v", k, wholeStats, partStats)
	}
	if wholeStats.FramesOK != int64(len(whole)) {
		t.Fatalf("%d readings, FramesOK %d", len(whole), wholeStats.FramesOK)
	}
	for _, r := range whole {
		if r.TimeValid == r.Tacho.T.IsZero() {
			t.Fatalf("TimeValid %v with T %v", r.TimeValid, r.Tacho.T)
		}
		if r.TimeValid && r.Tacho.T.Truncate(time.Millisecond) != r.Tacho.T.Time {
			t.Fatalf("T %v finer than 1 ms", r.Tacho.T)
		}
		if p := r.Tacho.SpeedKmh; p != nil && (*p < 0 || *p > 251 || math.IsNaN(*p)) {
			t.Fatalf("speed %v", *p)
		}
		switch l {
		case LayoutVDO:
			again, err := DecodeVDO(EncodeVDO(*r.VDO))
			if err != nil || !reflect.DeepEqual(again, *r.VDO) {
				t.Fatalf("re-encoding %+v gives %+v, %v", *r.VDO, again, err)
			}
		case LayoutStoneridge:
			again, err := DecodeStoneridge(EncodeStoneridge(*r.Stoneridge))
			if err != nil || !reflect.DeepEqual(again, *r.Stoneridge) {
				t.Fatalf("re-encoding %+v gives %+v, %v", *r.Stoneridge, again, err)
			}
		}
	}
}

func FuzzVDO(f *testing.F) {
	f.Add(referenceVDO(f), uint(40))
	stream, _ := messyStream(LayoutVDO)
	f.Add(stream, uint(311))
	f.Add(EncodeVDO(sampleVDO(2, time.Time{})), uint(0))
	f.Add(EncodeVDO(VDOFrame{}), uint(7))
	f.Add([]byte("UDTCOUDTCOUDTCO"), uint(3))
	f.Fuzz(func(t *testing.T, data []byte, split uint) {
		fuzzDecoder(t, LayoutVDO, data, split)
	})
}

func FuzzStoneridge(f *testing.F) {
	stream, _ := messyStream(LayoutStoneridge)
	f.Add(stream, uint(100))
	f.Add(EncodeStoneridge(sampleSR(MessageDIN1, t0)), uint(20))
	f.Add(EncodeStoneridge(StoneridgeFrame{ID: MessageVRN}), uint(3))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 45, 1, 0xff, 0xff, 0xff, 48, 8}, uint(5))
	f.Fuzz(func(t *testing.T, data []byte, split uint) {
		fuzzDecoder(t, LayoutStoneridge, data, split)
	})
}
