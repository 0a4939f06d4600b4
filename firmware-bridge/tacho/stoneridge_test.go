package tacho

import (
	"bytes"
	"reflect"
	"testing"
	"time"
)

func sampleSR(id MessageID, at time.Time) StoneridgeFrame {
	f := StoneridgeFrame{
		ID:            id,
		Time:          at,
		WorkingStates: 0x1b,
		Speed:         3098,
		TotalDistance: 2046911,
		TripDistance:  1234,
		KFactor:       8000,
	}
	switch id {
	case MessageVIN:
		f.Payload = []byte("9BWZZZ377VT004251")
	case MessageDIN1:
		f.Payload = DINPayload("BR", "0000000086H10100")
	case MessageDIN2:
		f.Payload = DINPayload("", "")
	case MessageVRN:
		f.Payload = []byte("BR PIU0A01          ")
	}
	return f
}

func TestStoneridgeRoundTrip(t *testing.T) {
	at := time.Date(2026, 11, 29, 15, 0, 1, 0, time.UTC)
	for _, id := range []MessageID{MessageVIN, MessageDIN1, MessageDIN2, MessageVRN} {
		f := sampleSR(id, at)
		b := EncodeStoneridge(f)
		if l := int(b[srLenOff]); l < srMinLen || l > srMaxLen || len(b) != 3+l {
			t.Errorf("%v: length byte %d, frame %d bytes", id, l, len(b))
		}
		var sum byte
		for _, c := range b[srLenOff:] {
			sum += c
		}
		if sum != 0 {
			t.Errorf("%v: bytes from the length through the checksum sum to %#x, want 0", id, sum)
		}
		got, err := DecodeStoneridge(b)
		if err != nil {
			t.Fatalf("%v: %v", id, err)
		}
		if !reflect.DeepEqual(got, f) {
			t.Errorf("%v: round trip\n%+v\nwant\n%+v", id, got, f)
		}
	}
}

func TestStoneridgeLayout(t *testing.T) {
	// Speed MSB first at 13, as the public summary has it.
	f := sampleSR(MessageDIN1, time.Unix(0x01020304, 0))
	f.Speed = 0x1234
	b := EncodeStoneridge(f)
	if b[13] != 0x12 || b[14] != 0x34 {
		t.Errorf("speed bytes = % x, want 12 34", b[13:15])
	}
	if !bytes.Equal(b[5:9], []byte{1, 2, 3, 4}) {
		t.Errorf("time bytes = % x", b[5:9])
	}
	if b[4] != 0x02 || !bytes.Equal(b[30:33], []byte("BR ")) || string(b[33:49]) != "0000000086H10100" {
		t.Errorf("DIN1 frame = % x", b)
	}
	if l := b[3]; l != 47 {
		t.Errorf("DIN length byte = %d, want 47", l)
	}
}

func TestStoneridgeReading(t *testing.T) {
	at := time.Date(2026, 11, 29, 15, 0, 1, 0, time.UTC)
	tests := []struct {
		id   MessageID
		card string
	}{
		{MessageVIN, ""},
		{MessageDIN1, "0000000086H10100"},
		{MessageDIN2, ""},
		{MessageVRN, ""},
	}
	for _, tt := range tests {
		f := sampleSR(tt.id, at)
		r := f.Reading()
		if !r.TimeValid || !r.Tacho.T.Equal(at) || *r.Tacho.SpeedKmh != 12.1015625 ||
			*r.Tacho.OdometerKm != 10234.555 || r.Tacho.Card != tt.card {
			t.Errorf("%v: reading %+v", tt.id, r.Tacho)
		}
	}
	// DIN1 without a card.
	f := sampleSR(MessageDIN1, time.Time{})
	f.Payload = DINPayload("", "")
	b := EncodeStoneridge(f)
	g, err := DecodeStoneridge(b)
	if err != nil {
		t.Fatal(err)
	}
	if r := g.Reading(); r.TimeValid || r.Tacho.Card != "" {
		t.Errorf("no card, no time: %+v", r)
	}
	if _, _, ok := g.Card(); ok {
		t.Error("Card() reports a card")
	}
	// Time 0xFFFFFFFF is no time.
	b[5], b[6], b[7], b[8] = 0xff, 0xff, 0xff, 0xff
	b[len(b)-1] = srChecksum(b[srLenOff : len(b)-1])
	if g, err := DecodeStoneridge(b); err != nil || !g.Time.IsZero() {
		t.Errorf("time FFFFFFFF: %v, %v", g.Time, err)
	}
}

func TestStoneridgePayloadLimits(t *testing.T) {
	f := StoneridgeFrame{ID: MessageVRN, Payload: []byte("AB")}
	g, err := DecodeStoneridge(EncodeStoneridge(f))
	if err != nil {
		t.Fatal(err)
	}
	if want := append([]byte("AB"), bytes.Repeat([]byte{0xff}, 15)...); !bytes.Equal(g.Payload, want) {
		t.Errorf("short payload = % x", g.Payload)
	}
	f.Payload = bytes.Repeat([]byte("x"), 30)
	if g, err = DecodeStoneridge(EncodeStoneridge(f)); err != nil || len(g.Payload) != srMaxPayload {
		t.Errorf("long payload: %d bytes, %v", len(g.Payload), err)
	}
	if _, num, ok := (&StoneridgeFrame{ID: MessageDIN2, Payload: DINPayload("RO", "X\xff\xff")}).Card(); !ok || num != "X" {
		t.Errorf("card with fill = %q, %v", num, ok)
	}
}

func TestDecodeStoneridgeErrors(t *testing.T) {
	good := EncodeStoneridge(sampleSR(MessageVIN, time.Time{}))
	badSum := bytes.Clone(good)
	badSum[20] ^= 0x40
	badLen := bytes.Clone(good)
	badLen[srLenOff] = 44
	badID := bytes.Clone(good)
	badID[srIDOff] = 3
	for name, b := range map[string][]byte{
		"empty":     nil,
		"cut short": good[:len(good)-1],
		"trailing":  append(bytes.Clone(good), 0),
		"checksum":  badSum,
		"length":    badLen,
		"id":        badID,
	} {
		if _, err := DecodeStoneridge(b); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if s := MessageID(3).String(); s != "MessageID(0x03)" {
		t.Errorf("String = %q", s)
	}
}
