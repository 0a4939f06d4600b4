package tacho

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// VDO layout: byte offsets of a VDO frame (see the package documentation). Not verified
// against hardware: a field found elsewhere is a one-line fix here.
const (
	vdoMagic          = "UDTCO"
	vdoReservedOff    = 5  // reserved, 0
	vdoSecondOff      = 6  // UTC seconds, 0.25 s/bit
	vdoMinuteOff      = 7  // UTC minutes
	vdoHourOff        = 8  // UTC hours
	vdoMonthOff       = 9  // month
	vdoDayOff         = 10 // day, 0.25 day/bit, 0 = none
	vdoYearOff        = 11 // year − 1985
	vdoLocalMinuteOff = 12 // local minute offset + 125
	vdoLocalHourOff   = 13 // local hour offset + 125
	vdoWorkingOff     = 14 // working states
	vdoDriver1Off     = 15 // driver 1 states
	vdoDriver2Off     = 16 // driver 2 states
	vdoEventsOff      = 17 // system events
	vdoSpeedOff       = 18 // uint16 LE, 1/256 km/h
	vdoTotalOff       = 20 // uint32 LE, 5 m/bit
	vdoTripOff        = 24 // uint32 LE, 5 m/bit
	vdoKFactorOff     = 28 // uint16 LE
	vdoUndecodedOff   = 30 // 4 bytes, not decoded
	vdoVariableOff    = 34 // VIN, custom string, card 1, card 2: a length byte and its bytes each

	vdoMaxVIN    = 32 // longest VIN field accepted
	vdoMaxCustom = 64 // longest custom string accepted
	vdoMaxCard   = 32 // longest card field accepted (type, state, number)

	vdoLocalBias = 125 // bias of the local offsets
	vdoYearBase  = 1985

	// vdoMaxFrame is the longest VDO frame this package accepts.
	vdoMaxFrame = vdoVariableOff + 4 + vdoMaxVIN + vdoMaxCustom + 2*vdoMaxCard + 1
)

// vdoVariableMax lists the limits of the variable fields in frame order.
var vdoVariableMax = [4]int{vdoMaxVIN, vdoMaxCustom, vdoMaxCard, vdoMaxCard}

// VDOFrame is one frame of the VDO layout.
type VDOFrame struct {
	// Time is the UTC time of the frame, to a quarter second; zero when the frame carries
	// no valid time. EncodeVDO writes the time bytes as zeros for a zero Time.
	Time time.Time
	// LocalMinuteOffset and LocalHourOffset are the local time offsets (raw − 125).
	LocalMinuteOffset, LocalHourOffset int

	WorkingStates, Driver1States, Driver2States, SystemEvents byte

	Speed         uint16 // 1/256 km/h
	TotalDistance uint32 // 5 m per unit
	TripDistance  uint32 // 5 m per unit
	KFactor       uint16

	Reserved  byte    // byte 5
	Undecoded [4]byte // bytes 30–33

	VIN    string
	Custom string
	// Card1 and Card2 are the driver cards; nil when no card is inserted.
	Card1, Card2 *Card
}

// Card is a driver card as the tachograph reports it.
type Card struct {
	Type   byte
	Nation byte   // issuing member state
	Number string // card number, as reported
}

// errMalformed reports a header whose fields are out of range; at is the offset of the
// offending byte.
type errMalformed struct {
	at  int
	msg string
}

func (e *errMalformed) Error() string {
	return fmt.Sprintf("malformed header at byte %d: %s", e.at, e.msg)
}

// vdoFrameLen returns the length of the VDO frame at the start of b (which starts with the
// magic), 0 when b is too short to tell, or an *errMalformed.
func vdoFrameLen(b []byte) (int, error) {
	pos := vdoVariableOff
	for i, limit := range vdoVariableMax {
		if len(b) <= pos {
			return 0, nil
		}
		n := int(b[pos])
		if n > limit {
			return 0, &errMalformed{pos, fmt.Sprintf("field %d is %d bytes long, more than %d", i, n, limit)}
		}
		if i >= 2 && n == 1 {
			return 0, &errMalformed{pos, fmt.Sprintf("card field %d is 1 byte long", i-1)}
		}
		pos += 1 + n
	}
	return pos + 1, nil
}

// vdoChecksum is the XOR of b.
func vdoChecksum(b []byte) byte {
	var x byte
	for _, c := range b {
		x ^= c
	}
	return x
}

// EncodeVDO returns frame in the VDO layout, checksum included. The time is truncated to
// the quarter second; a time outside 1985–2235 is written as no time, and local offsets
// outside −125…130 are clamped. A field longer than the layout accepts (VIN 32 bytes,
// custom string 64, card number 30) is cut to fit.
func EncodeVDO(frame VDOFrame) []byte {
	b := make([]byte, vdoVariableOff, vdoMaxFrame)
	copy(b, vdoMagic)
	b[vdoReservedOff] = frame.Reserved
	putVDOTime(b, frame.Time)
	b[vdoLocalMinuteOff] = clampByte(frame.LocalMinuteOffset + vdoLocalBias)
	b[vdoLocalHourOff] = clampByte(frame.LocalHourOffset + vdoLocalBias)
	b[vdoWorkingOff] = frame.WorkingStates
	b[vdoDriver1Off] = frame.Driver1States
	b[vdoDriver2Off] = frame.Driver2States
	b[vdoEventsOff] = frame.SystemEvents
	binary.LittleEndian.PutUint16(b[vdoSpeedOff:], frame.Speed)
	binary.LittleEndian.PutUint32(b[vdoTotalOff:], frame.TotalDistance)
	binary.LittleEndian.PutUint32(b[vdoTripOff:], frame.TripDistance)
	binary.LittleEndian.PutUint16(b[vdoKFactorOff:], frame.KFactor)
	copy(b[vdoUndecodedOff:], frame.Undecoded[:])
	b = appendField(b, frame.VIN, vdoMaxVIN)
	b = appendField(b, frame.Custom, vdoMaxCustom)
	for _, c := range []*Card{frame.Card1, frame.Card2} {
		if c == nil {
			b = append(b, 0)
			continue
		}
		num := c.Number
		if len(num) > vdoMaxCard-2 {
			num = num[:vdoMaxCard-2]
		}
		b = append(b, byte(2+len(num)), c.Type, c.Nation)
		b = append(b, num...)
	}
	return append(b, vdoChecksum(b))
}

func appendField(b []byte, s string, limit int) []byte {
	if len(s) > limit {
		s = s[:limit]
	}
	b = append(b, byte(len(s)))
	return append(b, s...)
}

func clampByte(v int) byte {
	return byte(min(max(v, 0), 255))
}

// putVDOTime writes t into the six time bytes of b.
func putVDOTime(b []byte, t time.Time) {
	if t.IsZero() {
		return
	}
	t = t.UTC()
	if y := t.Year() - vdoYearBase; y < 0 || y > 250 {
		return
	}
	b[vdoSecondOff] = byte(t.Second()*4 + t.Nanosecond()/250e6)
	b[vdoMinuteOff] = byte(t.Minute())
	b[vdoHourOff] = byte(t.Hour())
	b[vdoMonthOff] = byte(t.Month())
	b[vdoDayOff] = byte(4*(t.Day()-1) + 1 + t.Hour()/6)
	b[vdoYearOff] = byte(t.Year() - vdoYearBase)
}

// vdoTime decodes the time bytes of the VDO frame b.
func vdoTime(b []byte) (time.Time, bool) {
	sec, mnt, hour := b[vdoSecondOff], b[vdoMinuteOff], b[vdoHourOff]
	month, day, year := b[vdoMonthOff], b[vdoDayOff], b[vdoYearOff]
	if sec > 239 || mnt > 59 || hour > 23 || month < 1 || month > 12 || day < 1 || day > 31*4 || year > 250 {
		return time.Time{}, false
	}
	d := (int(day)-1)/4 + 1
	t := time.Date(vdoYearBase+int(year), time.Month(month), d, int(hour), int(mnt),
		int(sec)/4, int(sec)%4*250e6, time.UTC)
	if t.Day() != d { // 31 April and the like
		return time.Time{}, false
	}
	return t, true
}

// DecodeVDO decodes one whole VDO frame, checksum included.
func DecodeVDO(frame []byte) (VDOFrame, error) {
	if len(frame) < len(vdoMagic) || string(frame[:len(vdoMagic)]) != vdoMagic {
		return VDOFrame{}, errors.New("tacho: vdo: no UDTCO header")
	}
	n, err := vdoFrameLen(frame)
	if err != nil {
		return VDOFrame{}, fmt.Errorf("tacho: vdo: %w", err)
	}
	if n == 0 || n > len(frame) {
		return VDOFrame{}, fmt.Errorf("tacho: vdo: frame cut short at %d bytes", len(frame))
	}
	if n < len(frame) {
		return VDOFrame{}, fmt.Errorf("tacho: vdo: %d bytes after the %d-byte frame", len(frame)-n, n)
	}
	if got, want := frame[n-1], vdoChecksum(frame[:n-1]); got != want {
		return VDOFrame{}, fmt.Errorf("tacho: vdo: checksum %#02x, want %#02x", got, want)
	}
	return decodeVDO(frame), nil
}

// decodeVDO decodes a VDO frame whose extent and checksum were checked.
func decodeVDO(b []byte) VDOFrame {
	f := VDOFrame{
		LocalMinuteOffset: int(b[vdoLocalMinuteOff]) - vdoLocalBias,
		LocalHourOffset:   int(b[vdoLocalHourOff]) - vdoLocalBias,
		WorkingStates:     b[vdoWorkingOff],
		Driver1States:     b[vdoDriver1Off],
		Driver2States:     b[vdoDriver2Off],
		SystemEvents:      b[vdoEventsOff],
		Speed:             binary.LittleEndian.Uint16(b[vdoSpeedOff:]),
		TotalDistance:     binary.LittleEndian.Uint32(b[vdoTotalOff:]),
		TripDistance:      binary.LittleEndian.Uint32(b[vdoTripOff:]),
		KFactor:           binary.LittleEndian.Uint16(b[vdoKFactorOff:]),
		Reserved:          b[vdoReservedOff],
	}
	f.Time, _ = vdoTime(b)
	copy(f.Undecoded[:], b[vdoUndecodedOff:])
	pos := vdoVariableOff
	field := func() []byte {
		n := int(b[pos])
		s := b[pos+1 : pos+1+n]
		pos += 1 + n
		return s
	}
	f.VIN = string(field())
	f.Custom = string(field())
	for _, c := range []**Card{&f.Card1, &f.Card2} {
		if s := field(); len(s) >= 2 {
			*c = &Card{Type: s[0], Nation: s[1], Number: string(s[2:])}
		}
	}
	return f
}

// Reading returns the wire reading of f: its time, speed, odometer and driver 1's card
// number.
func (f *VDOFrame) Reading() Reading {
	r := Reading{VDO: f}
	card := ""
	if f.Card1 != nil {
		card = f.Card1.Number
	}
	r.Tacho, r.TimeValid = tachoOf(f.Time, f.Speed, f.TotalDistance, card)
	return r
}
