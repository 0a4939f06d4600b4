package slm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"time"
)

// PCE-322A layout: byte offsets of a frame (see the package documentation). Not verified
// against hardware: a field found elsewhere is a one-line fix here.
const (
	pceStart      = 0x7f
	pceLevelOff   = 1  // uint16 BE, dB × 10
	pceStatusOff  = 3  // 3 bytes, not decoded
	pceClockOff   = 6  // 6 BCD bytes: yy mm dd hh mm ss
	pceTrailerOff = 12 // not checked
	pceFrameLen   = 13

	pceHourByte = 3    // index of the hour among the clock bytes
	pceHourFlag = 0x80 // masked from the hour byte
	pceYearBase = 2000
	pceMaxLevel = 1600 // 160.0 dB
)

// pceClockMax is the largest value of each clock field (year, month, day, hour, minute,
// second); zero is allowed in each for the all-zero "no clock".
var pceClockMax = [6]int{99, 12, 31, 23, 59, 59}

// PCEBaud is the serial rate of PCE-322A meters (8N1).
const PCEBaud = 115200

// StartPCE sends the command that starts a PCE-322A meter streaming (AC FF). A meter that
// stays silent may need it again.
func StartPCE(w io.Writer) error {
	if _, err := w.Write([]byte{0xac, 0xff}); err != nil {
		return fmt.Errorf("slm: pce322a: start: %w", err)
	}
	return nil
}

// PCEFrame is one frame of a PCE-322A meter.
type PCEFrame struct {
	DeciDB uint16  // level × 10, dB
	Status [3]byte // not decoded
	// Time is the meter's clock, to the second, in the location the decoder was given;
	// zero when the frame carries no clock. EncodePCE writes its wall clock as it is.
	Time     time.Time
	HourFlag bool // bit 7 of the hour byte
	Trailer  byte
}

// DB returns the level in dB.
func (f PCEFrame) DB() float64 { return float64(f.DeciDB) / 10 }

// Sample returns the frame's sample, timed by the meter's clock, or by received when the
// frame carries none.
func (f PCEFrame) Sample(received time.Time) Sample {
	t := f.Time
	if t.IsZero() {
		t = received
	}
	return Sample{T: t, DB: f.DB()}
}

// EncodePCE returns the frame's 13 bytes. A time outside 2000–2099 is written as no clock.
func EncodePCE(f PCEFrame) []byte {
	b := make([]byte, pceFrameLen)
	b[0] = pceStart
	binary.BigEndian.PutUint16(b[pceLevelOff:], f.DeciDB)
	copy(b[pceStatusOff:], f.Status[:])
	if t := f.Time; !t.IsZero() && t.Year() >= pceYearBase && t.Year() <= pceYearBase+99 {
		for i, v := range []int{t.Year() - pceYearBase, int(t.Month()), t.Day(), t.Hour(), t.Minute(), t.Second()} {
			b[pceClockOff+i] = byte(v/10<<4 | v%10)
		}
	}
	if f.HourFlag {
		b[pceClockOff+pceHourByte] |= pceHourFlag
	}
	b[pceTrailerOff] = f.Trailer
	return b
}

// pceCheck reports whether b starts with a PCE frame, or with a prefix of one that more
// bytes may complete.
func pceCheck(b []byte) match {
	if len(b) == 0 || b[0] != pceStart {
		return matchNone
	}
	if len(b) > pceLevelOff+1 {
		if v := binary.BigEndian.Uint16(b[pceLevelOff:]); v == 0 || v > pceMaxLevel {
			return matchNone
		}
	}
	for i, limit := range pceClockMax {
		if len(b) <= pceClockOff+i {
			return matchPrefix
		}
		c := b[pceClockOff+i]
		if i == pceHourByte {
			c &^= pceHourFlag
		}
		if v, ok := bcd(c); !ok || v > limit {
			return matchNone
		}
	}
	if len(b) < pceFrameLen {
		return matchPrefix
	}
	if _, ok := pceTime(b, time.UTC); !ok {
		return matchNone
	}
	return matchFull
}

// bcd decodes a two-digit BCD byte.
func bcd(c byte) (int, bool) {
	hi, lo := c>>4, c&0x0f
	return int(hi)*10 + int(lo), hi <= 9 && lo <= 9
}

// pceTime decodes the clock of a frame whose clock bytes are valid BCD: the zero time and
// true for an all-zero clock, false for a date that does not exist.
func pceTime(b []byte, loc *time.Location) (time.Time, bool) {
	var v [6]int
	zero := true
	for i := range v {
		c := b[pceClockOff+i]
		if i == pceHourByte {
			c &^= pceHourFlag
		}
		v[i], _ = bcd(c)
		zero = zero && v[i] == 0
	}
	if zero {
		return time.Time{}, true
	}
	if v[1] < 1 || v[2] < 1 {
		return time.Time{}, false
	}
	t := time.Date(pceYearBase+v[0], time.Month(v[1]), v[2], v[3], v[4], v[5], 0, loc)
	if t.Day() != v[2] || t.Month() != time.Month(v[1]) {
		return time.Time{}, false
	}
	return t, true
}

// decodePCE decodes a frame that pceCheck accepted.
func decodePCE(b []byte, loc *time.Location) PCEFrame {
	f := PCEFrame{
		DeciDB:   binary.BigEndian.Uint16(b[pceLevelOff:]),
		HourFlag: b[pceClockOff+pceHourByte]&pceHourFlag != 0,
		Trailer:  b[pceTrailerOff],
	}
	copy(f.Status[:], b[pceStatusOff:])
	f.Time, _ = pceTime(b, loc)
	return f
}

// DecodePCE decodes one 13-byte frame, reading its clock in loc (UTC when nil).
func DecodePCE(frame []byte, loc *time.Location) (PCEFrame, error) {
	if len(frame) != pceFrameLen {
		return PCEFrame{}, fmt.Errorf("slm: pce322a: frame of %d bytes, want %d", len(frame), pceFrameLen)
	}
	if pceCheck(frame) != matchFull {
		return PCEFrame{}, errors.New("slm: pce322a: not a valid frame")
	}
	if loc == nil {
		loc = time.UTC
	}
	return decodePCE(frame, loc), nil
}

// A PCEDecoder decodes a PCE-322A byte stream fed to it in chunks of any size. It is not
// safe for concurrent use.
type PCEDecoder struct {
	loc   *time.Location
	buf   []byte
	stats Stats

	fed, consumed, dropped int64 // for tests: fed = consumed + dropped + garbage + len(buf)
}

// NewPCEDecoder returns a decoder that reads the meter's clock in loc (UTC when nil).
func NewPCEDecoder(loc *time.Location) *PCEDecoder {
	if loc == nil {
		loc = time.UTC
	}
	return &PCEDecoder{loc: loc}
}

// Feed adds the bytes p and returns the frames they complete. The decoder does not keep p.
func (d *PCEDecoder) Feed(p []byte) []PCEFrame {
	d.fed += int64(len(p))
	d.buf = append(d.buf, p...)
	return d.scan(false)
}

// End tells the decoder that the stream ended: a frame still incomplete is counted as
// truncated.
func (d *PCEDecoder) End() []PCEFrame { return d.scan(true) }

// Stats returns the counters so far.
func (d *PCEDecoder) Stats() Stats { return d.stats }

func (d *PCEDecoder) scan(end bool) []PCEFrame {
	var out []PCEFrame
	b := d.buf
	for len(b) > 0 {
		i, m := len(b), matchNone
		for j := range b {
			if m = pceCheck(b[j:]); m != matchNone {
				i = j
				break
			}
		}
		d.stats.GarbageBytes += int64(i)
		b = b[i:]
		if m == matchNone {
			break
		}
		if m == matchPrefix {
			if end {
				d.stats.Truncated++
				d.dropped += int64(len(b))
				b = b[len(b):]
			}
			break
		}
		out = append(out, decodePCE(b[:pceFrameLen], d.loc))
		d.stats.FramesOK++
		d.consumed += pceFrameLen
		b = b[pceFrameLen:]
	}
	d.buf = append(d.buf[:0], b...)
	return out
}
