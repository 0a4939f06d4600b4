package tacho

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// Stoneridge layout: byte offsets of a Stoneridge frame (see the package documentation).
// Not verified against hardware: a field found elsewhere is a one-line fix here.
const (
	srSync        = "\xff\xff\xff"
	srLenOff      = 3  // L: bytes from here through the checksum
	srIDOff       = 4  // message id
	srTimeOff     = 5  // uint32 BE, seconds since 1970 UTC; 0 or FFFFFFFF = none
	srWorkingOff  = 9  // working states
	srDriver1Off  = 10 // driver 1 states
	srDriver2Off  = 11 // driver 2 states
	srEventsOff   = 12 // system events
	srSpeedOff    = 13 // uint16 BE, 1/256 km/h
	srTotalOff    = 15 // uint32 BE, 5 m/bit
	srTripOff     = 19 // uint32 BE, 5 m/bit
	srKFactorOff  = 23 // uint16 BE
	srReservedOff = 25 // 5 bytes, not decoded
	srPayloadOff  = 30 // VIN, DIN or VRN: L − 28 bytes

	srMinLen = 45 // smallest L
	srMaxLen = 48 // largest L

	srDINNation = 3 // bytes of the issuing nation at the start of a DIN payload

	srHeaderLen  = srIDOff + 1
	srMinPayload = srMinLen + srLenOff - 1 - srPayloadOff // 17
	srMaxPayload = srMaxLen + srLenOff - 1 - srPayloadOff // 20
	srMaxFrame   = srLenOff + srMaxLen
)

// MessageID names the payload of a Stoneridge frame.
type MessageID byte

// Stoneridge message ids.
const (
	MessageVIN  MessageID = 0x01
	MessageDIN1 MessageID = 0x02
	MessageDIN2 MessageID = 0x04
	MessageVRN  MessageID = 0x08
)

func (id MessageID) valid() bool {
	return id == MessageVIN || id == MessageDIN1 || id == MessageDIN2 || id == MessageVRN
}

// String returns the name of the message id.
func (id MessageID) String() string {
	switch id {
	case MessageVIN:
		return "VIN"
	case MessageDIN1:
		return "DIN1"
	case MessageDIN2:
		return "DIN2"
	case MessageVRN:
		return "VRN"
	}
	return fmt.Sprintf("MessageID(%#02x)", byte(id))
}

// StoneridgeFrame is one frame of the Stoneridge layout.
type StoneridgeFrame struct {
	ID MessageID
	// Time is the UTC time of the frame, to the second; zero when the frame carries none.
	Time time.Time

	WorkingStates, Driver1States, Driver2States, SystemEvents byte

	Speed         uint16 // 1/256 km/h
	TotalDistance uint32 // 5 m per unit
	TripDistance  uint32 // 5 m per unit
	KFactor       uint16
	Reserved      [5]byte

	// Payload is the VIN, DIN or VRN, 17–20 bytes: EncodeStoneridge pads a shorter one with
	// FF and cuts a longer one. DINPayload builds a DIN payload.
	Payload []byte
}

// DINPayload returns the payload of a DIN1 or DIN2 message: the issuing nation (3 bytes,
// padded with spaces) and the card number. An empty number means no card.
func DINPayload(nation, number string) []byte {
	if number == "" {
		return bytes.Repeat([]byte{0xff}, srMinPayload)
	}
	p := make([]byte, 0, srMaxPayload)
	p = append(p, fmt.Sprintf("%-*.*s", srDINNation, srDINNation, nation)...)
	return append(p, number...)
}

// Card returns the issuing nation and card number of a DIN1 or DIN2 frame, and false when
// the frame is of another message or says that no card is inserted.
func (f *StoneridgeFrame) Card() (nation, number string, ok bool) {
	if f.ID != MessageDIN1 && f.ID != MessageDIN2 || len(f.Payload) <= srDINNation || f.Payload[0] == 0xff {
		return "", "", false
	}
	num := bytes.TrimRight(f.Payload[srDINNation:], "\xff")
	return string(f.Payload[:srDINNation]), string(num), true
}

// srHeader reports whether b starts with a Stoneridge header: match, no match, or b is too
// short to tell.
func srHeader(b []byte) match {
	for i := 0; i < srHeaderLen; i++ {
		if i == len(b) {
			return matchPrefix
		}
		c := b[i]
		switch {
		case i < srLenOff && c != 0xff,
			i == srLenOff && (c < srMinLen || c > srMaxLen),
			i == srIDOff && !MessageID(c).valid():
			return matchNone
		}
	}
	return matchFull
}

// srChecksum is the byte that makes the sum of b and itself 0 (mod 256).
func srChecksum(b []byte) byte {
	var s byte
	for _, c := range b {
		s += c
	}
	return -s
}

// EncodeStoneridge returns frame in the Stoneridge layout, checksum included. A time before
// 1970 or after 2106 is written as no time.
func EncodeStoneridge(frame StoneridgeFrame) []byte {
	payload := frame.Payload
	if len(payload) > srMaxPayload {
		payload = payload[:srMaxPayload]
	}
	b := make([]byte, srPayloadOff, srMaxFrame)
	copy(b, srSync)
	b[srIDOff] = byte(frame.ID)
	if !frame.Time.IsZero() {
		if s := frame.Time.Unix(); s > 0 && s < 0xffffffff {
			binary.BigEndian.PutUint32(b[srTimeOff:], uint32(s))
		}
	}
	b[srWorkingOff] = frame.WorkingStates
	b[srDriver1Off] = frame.Driver1States
	b[srDriver2Off] = frame.Driver2States
	b[srEventsOff] = frame.SystemEvents
	binary.BigEndian.PutUint16(b[srSpeedOff:], frame.Speed)
	binary.BigEndian.PutUint32(b[srTotalOff:], frame.TotalDistance)
	binary.BigEndian.PutUint32(b[srTripOff:], frame.TripDistance)
	binary.BigEndian.PutUint16(b[srKFactorOff:], frame.KFactor)
	copy(b[srReservedOff:], frame.Reserved[:])
	b = append(b, payload...)
	for len(b) < srPayloadOff+srMinPayload {
		b = append(b, 0xff)
	}
	b[srLenOff] = byte(len(b) + 1 - srLenOff)
	return append(b, srChecksum(b[srLenOff:]))
}

// srFrameLen returns the length of the Stoneridge frame whose header starts b.
func srFrameLen(b []byte) int { return srLenOff + int(b[srLenOff]) }

// DecodeStoneridge decodes one whole Stoneridge frame, checksum included.
func DecodeStoneridge(frame []byte) (StoneridgeFrame, error) {
	if srHeader(frame) != matchFull {
		return StoneridgeFrame{}, errors.New("tacho: stoneridge: no valid header")
	}
	n := srFrameLen(frame)
	if n > len(frame) {
		return StoneridgeFrame{}, fmt.Errorf("tacho: stoneridge: frame cut short at %d of %d bytes", len(frame), n)
	}
	if n < len(frame) {
		return StoneridgeFrame{}, fmt.Errorf("tacho: stoneridge: %d bytes after the %d-byte frame", len(frame)-n, n)
	}
	if got, want := frame[n-1], srChecksum(frame[srLenOff:n-1]); got != want {
		return StoneridgeFrame{}, fmt.Errorf("tacho: stoneridge: checksum %#02x, want %#02x", got, want)
	}
	return decodeStoneridge(frame), nil
}

// decodeStoneridge decodes a Stoneridge frame whose extent and checksum were checked.
func decodeStoneridge(b []byte) StoneridgeFrame {
	f := StoneridgeFrame{
		ID:            MessageID(b[srIDOff]),
		WorkingStates: b[srWorkingOff],
		Driver1States: b[srDriver1Off],
		Driver2States: b[srDriver2Off],
		SystemEvents:  b[srEventsOff],
		Speed:         binary.BigEndian.Uint16(b[srSpeedOff:]),
		TotalDistance: binary.BigEndian.Uint32(b[srTotalOff:]),
		TripDistance:  binary.BigEndian.Uint32(b[srTripOff:]),
		KFactor:       binary.BigEndian.Uint16(b[srKFactorOff:]),
		Payload:       bytes.Clone(b[srPayloadOff : len(b)-1]),
	}
	if s := binary.BigEndian.Uint32(b[srTimeOff:]); s != 0 && s != 0xffffffff {
		f.Time = time.Unix(int64(s), 0).UTC()
	}
	copy(f.Reserved[:], b[srReservedOff:])
	return f
}

// Reading returns the wire reading of f: its time, speed, odometer and, for a DIN1 message,
// driver 1's card number.
func (f *StoneridgeFrame) Reading() Reading {
	r := Reading{Stoneridge: f}
	card := ""
	if f.ID == MessageDIN1 {
		_, card, _ = f.Card()
	}
	r.Tacho, r.TimeValid = tachoOf(f.Time, f.Speed, f.TotalDistance, card)
	return r
}
