package tacho

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// Layout names a D8 frame layout.
type Layout string

// Layouts.
const (
	LayoutVDO        Layout = "vdo"
	LayoutStoneridge Layout = "stoneridge"
)

// ParseLayout returns the layout named s ("vdo" or "stoneridge", any case).
func ParseLayout(s string) (Layout, error) {
	switch l := Layout(strings.ToLower(s)); l {
	case LayoutVDO, LayoutStoneridge:
		return l, nil
	}
	return "", fmt.Errorf("tacho: unknown layout %q (want vdo or stoneridge)", s)
}

// Baud returns the serial rate of the layout (8N1): 10400 for VDO, which needs a custom
// rate on Linux, and 1200 for Stoneridge.
func (l Layout) Baud() int {
	switch l {
	case LayoutVDO:
		return 10400
	case LayoutStoneridge:
		return 1200
	}
	return 0
}

// Reading is one good frame.
type Reading struct {
	// Tacho is the reading for the wire. Its T is zero when TimeValid is false: the caller
	// times it by its receive clock.
	Tacho wire.Tacho
	// TimeValid reports whether the frame carried a valid UTC time.
	TimeValid bool
	// VDO or Stoneridge is the whole frame, by layout.
	VDO        *VDOFrame
	Stoneridge *StoneridgeFrame
}

// Stats counts what a Decoder saw.
type Stats struct {
	// FramesOK counts good frames, each decoded to one reading.
	FramesOK int64 `json:"frames_ok"`
	// NoTime counts the good frames without a valid time (their readings have a zero T).
	NoTime int64 `json:"no_time"`
	// BadChecksum counts frames dropped for a checksum mismatch.
	BadChecksum int64 `json:"bad_checksum"`
	// Truncated counts frames dropped because the next header or the end of the stream cut
	// them short.
	Truncated int64 `json:"truncated"`
	// Malformed counts headers dropped because a length field is out of range.
	Malformed int64 `json:"malformed"`
	// GarbageBytes counts bytes skipped outside any frame, good or dropped.
	GarbageBytes int64 `json:"garbage_bytes"`
}

// match is the result of looking for a header at the start of a byte slice.
type match int

const (
	matchNone   match = iota // not a header
	matchPrefix              // a proper prefix of a header: more bytes will tell
	matchFull                // a header
)

// codec is what the Decoder needs of a layout.
type codec interface {
	// header reports whether b starts with a header.
	header(b []byte) match
	// first is the first byte of every header.
	first() byte
	// headerLen is the length of a header.
	headerLen() int
	// frameLen returns the length of the frame whose header starts b, 0 when b is too short
	// to tell, or an *errMalformed.
	frameLen(b []byte) (int, error)
	// checksumOK reports whether the whole frame's checksum holds.
	checksumOK(frame []byte) bool
	// reading decodes a whole frame whose checksum holds.
	reading(frame []byte) Reading
}

type vdoCodec struct{}

func (vdoCodec) header(b []byte) match {
	n := min(len(b), len(vdoMagic))
	if string(b[:n]) != vdoMagic[:n] {
		return matchNone
	}
	if n < len(vdoMagic) {
		return matchPrefix
	}
	return matchFull
}

func (vdoCodec) first() byte                    { return vdoMagic[0] }
func (vdoCodec) headerLen() int                 { return len(vdoMagic) }
func (vdoCodec) frameLen(b []byte) (int, error) { return vdoFrameLen(b) }
func (vdoCodec) checksumOK(f []byte) bool       { return vdoChecksum(f[:len(f)-1]) == f[len(f)-1] }
func (vdoCodec) reading(f []byte) Reading {
	v := decodeVDO(f)
	return v.Reading()
}

type srCodec struct{}

func (srCodec) header(b []byte) match { return srHeader(b) }
func (srCodec) first() byte           { return srSync[0] }
func (srCodec) headerLen() int        { return srHeaderLen }
func (srCodec) frameLen(b []byte) (int, error) {
	return srFrameLen(b), nil
}
func (srCodec) checksumOK(f []byte) bool { return srChecksum(f[srLenOff:len(f)-1]) == f[len(f)-1] }
func (srCodec) reading(f []byte) Reading {
	s := decodeStoneridge(f)
	return s.Reading()
}

// A Decoder decodes a D8 byte stream fed to it in chunks of any size. It is not safe for
// concurrent use.
type Decoder struct {
	codec codec
	buf   []byte
	stats Stats

	// Byte accounting, for tests: fed = consumed + dropped + garbage + len(buf).
	fed, consumed, dropped int64
}

// NewDecoder returns a decoder for the layout.
func NewDecoder(layout Layout) (*Decoder, error) {
	switch layout {
	case LayoutVDO:
		return &Decoder{codec: vdoCodec{}}, nil
	case LayoutStoneridge:
		return &Decoder{codec: srCodec{}}, nil
	}
	return nil, fmt.Errorf("tacho: unknown layout %q", layout)
}

// Feed adds the bytes p and returns the readings of the frames they complete. The decoder
// keeps the bytes of a frame still incomplete; it does not keep p.
func (d *Decoder) Feed(p []byte) []Reading {
	d.fed += int64(len(p))
	d.buf = append(d.buf, p...)
	return d.scan(false)
}

// End tells the decoder that the stream ended (or paused for longer than a frame takes):
// a frame still incomplete is counted as truncated, and any frame found behind it is
// returned.
func (d *Decoder) End() []Reading { return d.scan(true) }

// Stats returns the counters so far.
func (d *Decoder) Stats() Stats { return d.stats }

// scan decodes what the buffer holds; at the end of the stream, it also gives up on an
// incomplete frame.
func (d *Decoder) scan(end bool) []Reading {
	var out []Reading
	b := d.buf
	for len(b) > 0 {
		i, m := d.find(b, 0, len(b))
		d.stats.GarbageBytes += int64(i)
		b = b[i:]
		if m == matchNone {
			break // b is empty
		}
		if m == matchPrefix {
			if end {
				d.stats.GarbageBytes += int64(len(b))
				b = b[len(b):]
			}
			break
		}
		n, err := d.codec.frameLen(b)
		var bad *errMalformed
		if errors.As(err, &bad) {
			// A header before the offending byte means this frame was cut short.
			q, m := d.find(b, 1, bad.at+1)
			if m == matchPrefix && !end {
				break
			}
			if m == matchFull {
				d.stats.Truncated++
				b = d.drop(b, q)
			} else {
				d.stats.Malformed++
				b = d.drop(b, d.codec.headerLen())
			}
			continue
		}
		if n == 0 || n > len(b) {
			if !end {
				break
			}
			d.stats.Truncated++
			q, m := d.find(b, 1, len(b))
			if m != matchFull {
				q = len(b)
			}
			b = d.drop(b, q)
			continue
		}
		frame := b[:n]
		if !d.codec.checksumOK(frame) {
			// A header inside the frame means it was cut short.
			q, m := d.find(b, 1, n)
			if m == matchPrefix && !end {
				break
			}
			if m == matchFull {
				d.stats.Truncated++
				b = d.drop(b, q)
			} else {
				d.stats.BadChecksum++
				b = d.drop(b, n)
			}
			continue
		}
		r := d.codec.reading(frame)
		d.stats.FramesOK++
		if !r.TimeValid {
			d.stats.NoTime++
		}
		out = append(out, r)
		d.consumed += int64(n)
		b = b[n:]
	}
	d.buf = append(d.buf[:0], b...)
	return out
}

// drop discards the first n bytes of b as part of a dropped frame.
func (d *Decoder) drop(b []byte, n int) []byte {
	d.dropped += int64(n)
	return b[n:]
}

// find returns the offset of the first header (or header prefix at the end of b) starting
// in b[from:to], and what it found there; (to, matchNone) when there is none. A match
// found before to that needs bytes after b's end is a prefix.
func (d *Decoder) find(b []byte, from, to int) (int, match) {
	c := d.codec.first()
	for i := from; i < to; i++ {
		j := bytes.IndexByte(b[i:to], c)
		if j < 0 {
			break
		}
		i += j
		if m := d.codec.header(b[i:]); m != matchNone {
			return i, m
		}
	}
	return to, matchNone
}

// tachoOf builds the wire reading of a frame.
func tachoOf(t time.Time, speed uint16, distance uint32, card string) (wire.Tacho, bool) {
	var r wire.Tacho
	valid := !t.IsZero()
	if valid {
		r.T = wire.NewTime(t)
	}
	if speed <= 0xfaff {
		v := float64(speed) / 256
		r.SpeedKmh = &v
	}
	if distance <= 0xfaffffff {
		v := float64(uint64(distance)*5) / 1000
		r.OdometerKm = &v
	}
	r.Card = card
	return r, valid
}

// DecodeStream decodes a whole D8 byte stream of the named layout ("vdo" or "stoneridge")
// and returns one reading per good frame, in stream order, with the counters. Readings of
// frames without a valid time have a zero T (see the package documentation). The error
// reports an unknown layout or a read error; the readings before a read error are returned.
func DecodeStream(r io.Reader, layout string) ([]wire.Tacho, Stats, error) {
	l, err := ParseLayout(layout)
	if err != nil {
		return nil, Stats{}, err
	}
	d, _ := NewDecoder(l)
	var out []wire.Tacho
	add := func(rs []Reading) {
		for _, r := range rs {
			out = append(out, r.Tacho)
		}
	}
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		add(d.Feed(buf[:n]))
		if err == io.EOF {
			break
		}
		if err != nil {
			add(d.End())
			return out, d.Stats(), fmt.Errorf("tacho: read: %w", err)
		}
	}
	add(d.End())
	return out, d.Stats(), nil
}
