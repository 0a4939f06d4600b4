package slm

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// Protocol names a meter's byte stream.
type Protocol string

// Protocols.
const (
	ProtocolPCE322A   Protocol = "pce322a"
	ProtocolModbusRTU Protocol = "modbus-rtu"
)

// ParseProtocol returns the protocol named s ("pce322a" or "modbus-rtu", any case).
func ParseProtocol(s string) (Protocol, error) {
	switch p := Protocol(strings.ToLower(s)); p {
	case ProtocolPCE322A, ProtocolModbusRTU:
		return p, nil
	}
	return "", fmt.Errorf("slm: unknown protocol %q (want pce322a or modbus-rtu)", s)
}

// Stats counts what a decoder saw.
type Stats struct {
	// FramesOK counts good frames (Modbus: responses with a level).
	FramesOK int64 `json:"frames_ok"`
	// Exceptions counts Modbus exception responses.
	Exceptions int64 `json:"exceptions"`
	// BadChecksum counts Modbus responses dropped for a CRC mismatch.
	BadChecksum int64 `json:"bad_checksum"`
	// Truncated counts frames dropped because they were cut short.
	Truncated int64 `json:"truncated"`
	// GarbageBytes counts bytes skipped outside any frame, good or dropped.
	GarbageBytes int64 `json:"garbage_bytes"`
	// Untimed counts samples dropped by Decode for want of a time: no meter clock and no
	// start time.
	Untimed int64 `json:"untimed"`
}

// match is the result of looking for a frame at the start of a byte slice.
type match int

const (
	matchNone   match = iota // not a frame
	matchPrefix              // a proper prefix of a frame: more bytes will tell
	matchFull                // a frame
)

// DecodeConfig configures Decode. Zero fields take the defaults.
type DecodeConfig struct {
	Protocol Protocol
	// Start is the time of the first sample, for frames without a meter clock. Required for
	// modbus-rtu.
	Start time.Time
	// Rate is the number of samples a second; default 10.
	Rate float64
	// OffsetDB is added to every sample (meter calibration).
	OffsetDB float64
	// MeterLocation is the time zone of the meter's clock; default Start's location.
	MeterLocation *time.Location
	// Address is the Modbus address of the meter; default 1.
	Address uint8
	// Divisor turns a Modbus register into dB: level = value / Divisor; default 10.
	Divisor float64
}

// Decode decodes a whole meter byte stream and returns its one-second readings. Samples are
// timed by the meter's clock where its frames carry one, else sample i (counting every
// frame recognised, dropped ones included, so that a lost frame does not shift the next) at
// Start + i/Rate. A modbus-rtu stream is the meter's responses to one-register reads, level
// in the first register. The error reports a bad configuration or a read error; the
// readings before a read error are returned.
func Decode(r io.Reader, cfg DecodeConfig) ([]wire.Sound, Stats, error) {
	if cfg.Rate == 0 {
		cfg.Rate = DefaultRate
	}
	if cfg.Divisor == 0 {
		cfg.Divisor = DefaultDivisor
	}
	if cfg.Address == 0 {
		cfg.Address = DefaultModbusAddress
	}
	if cfg.MeterLocation == nil {
		cfg.MeterLocation = cfg.Start.Location()
	}
	if !(cfg.Divisor > 0) || math.IsInf(cfg.Divisor, 0) {
		return nil, Stats{}, fmt.Errorf("slm: divisor %v: want a positive number", cfg.Divisor)
	}
	agg, err := NewAggregator(cfg.Rate, cfg.OffsetDB)
	if err != nil {
		return nil, Stats{}, err
	}
	var out []wire.Sound
	var untimed int64
	add := func(s Sample) {
		if s.T.IsZero() {
			untimed++
			return
		}
		if rd, ok := agg.Add(s); ok {
			out = append(out, rd)
		}
	}
	slot := func(i int64) time.Time {
		if cfg.Start.IsZero() {
			return time.Time{}
		}
		return cfg.Start.Add(time.Duration(math.Round(float64(i) * float64(time.Second) / cfg.Rate)))
	}

	var feed func([]byte)
	var end func()
	var stats func() Stats
	switch cfg.Protocol {
	case ProtocolPCE322A:
		d := NewPCEDecoder(cfg.MeterLocation)
		var i int64
		take := func(fs []PCEFrame) {
			for _, f := range fs {
				add(f.Sample(slot(i)))
				i++
			}
		}
		feed = func(p []byte) { take(d.Feed(p)) }
		end = func() { take(d.End()) }
		stats = d.Stats
	case ProtocolModbusRTU:
		if cfg.Start.IsZero() {
			return nil, Stats{}, errors.New("slm: modbus-rtu: the responses carry no clock: a start time is needed")
		}
		d := NewModbusDecoder(cfg.Address, 1)
		take := func(rs []ModbusResponse) {
			for _, r := range rs {
				if r.Exception == 0 {
					add(Sample{T: slot(r.Seq), DB: float64(r.Registers[0]) / cfg.Divisor})
				}
			}
		}
		feed = func(p []byte) { take(d.Feed(p)) }
		end = func() { take(d.End()) }
		stats = d.Stats
	default:
		return nil, Stats{}, fmt.Errorf("slm: unknown protocol %q", cfg.Protocol)
	}

	finish := func() Stats {
		end()
		if rd, ok := agg.Flush(); ok {
			out = append(out, rd)
		}
		st := stats()
		st.Untimed = untimed
		return st
	}
	buf := make([]byte, 4096)
	for {
		n, err := r.Read(buf)
		feed(buf[:n])
		if err == io.EOF {
			break
		}
		if err != nil {
			return out, finish(), fmt.Errorf("slm: read: %w", err)
		}
	}
	return out, finish(), nil
}

// DecodeStream decodes a whole meter byte stream of the named protocol ("pce322a" or
// "modbus-rtu") with the default configuration (address 1, level = value/10, no offset,
// the meter clock read in start's location) and returns its one-second readings; see
// Decode. A rate of 0 means the default, ten samples a second.
func DecodeStream(r io.Reader, protocol string, start time.Time, rate float64) ([]wire.Sound, Stats, error) {
	p, err := ParseProtocol(protocol)
	if err != nil {
		return nil, Stats{}, err
	}
	return Decode(r, DecodeConfig{Protocol: p, Start: start, Rate: rate})
}
