package slm

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// Modbus RTU constants.
const (
	fcReadHolding   = 0x03 // read holding registers
	fcException     = 0x80 // set in the function code of an exception response
	rtuRequestLen   = 8    // address, function, register (2), count (2), CRC (2)
	rtuMaxRegisters = 125  // most registers one request may read

	// Exception codes.
	excIllegalFunction = 0x01
	excIllegalAddress  = 0x02
	excIllegalValue    = 0x03
)

// crc16 returns the CRC-16/MODBUS of b (reflected polynomial 0xA001, initial value 0xFFFF).
// On the wire it is sent low byte first.
func crc16(b []byte) uint16 {
	crc := uint16(0xffff)
	for _, c := range b {
		crc ^= uint16(c)
		for range 8 {
			if crc&1 != 0 {
				crc = crc>>1 ^ 0xa001
			} else {
				crc >>= 1
			}
		}
	}
	return crc
}

func appendCRC(b []byte) []byte {
	c := crc16(b)
	return append(b, byte(c), byte(c>>8))
}

// crcOK reports whether the last two bytes of frame are the CRC of the others.
func crcOK(frame []byte) bool {
	n := len(frame)
	return n >= 4 && crc16(frame[:n-2]) == binary.LittleEndian.Uint16(frame[n-2:])
}

// EncodeModbusRequest returns the RTU request (function 03) that reads count holding
// registers from register at address.
func EncodeModbusRequest(address uint8, register, count uint16) []byte {
	b := []byte{address, fcReadHolding, 0, 0, 0, 0}
	binary.BigEndian.PutUint16(b[2:], register)
	binary.BigEndian.PutUint16(b[4:], count)
	return appendCRC(b)
}

// ModbusResponse is one RTU response to a read-holding-registers request.
type ModbusResponse struct {
	Address uint8
	// Exception is the code of an exception response (function 83); 0 for a normal one.
	Exception uint8
	// Registers are the values read (none in an exception response).
	Registers []uint16
	// Seq is the position of the response among those a ModbusDecoder recognised, dropped
	// ones included, from 0. EncodeModbusResponse ignores it.
	Seq int64
}

// EncodeModbusResponse returns the RTU bytes of r: an exception response when r.Exception
// is not 0, else a function 03 response with at most 125 registers.
func EncodeModbusResponse(r ModbusResponse) []byte {
	if r.Exception != 0 {
		return appendCRC([]byte{r.Address, fcReadHolding | fcException, r.Exception})
	}
	regs := r.Registers[:min(len(r.Registers), rtuMaxRegisters)]
	b := make([]byte, 3, 5+2*len(regs))
	b[0], b[1], b[2] = r.Address, fcReadHolding, byte(2*len(regs))
	for _, v := range regs {
		b = binary.BigEndian.AppendUint16(b, v)
	}
	return appendCRC(b)
}

// A ModbusDecoder finds the responses of one Modbus address in an RTU byte stream (the
// meter's side of the line), fed to it in chunks of any size. It is not safe for concurrent
// use.
type ModbusDecoder struct {
	address uint8
	count   int // registers expected in a response; 0 = any
	buf     []byte
	seq     int64
	stats   Stats

	fed, consumed, dropped int64 // for tests: fed = consumed + dropped + garbage + len(buf)
}

// NewModbusDecoder returns a decoder for the responses of address that carry count
// registers (any number when count is 0).
func NewModbusDecoder(address uint8, count int) *ModbusDecoder {
	return &ModbusDecoder{address: address, count: count}
}

// Feed adds the bytes p and returns the responses they complete, exception responses
// included. The decoder does not keep p.
func (d *ModbusDecoder) Feed(p []byte) []ModbusResponse {
	d.fed += int64(len(p))
	d.buf = append(d.buf, p...)
	return d.scan(false)
}

// End tells the decoder that the stream ended: a response still incomplete is counted as
// truncated.
func (d *ModbusDecoder) End() []ModbusResponse { return d.scan(true) }

// Stats returns the counters so far.
func (d *ModbusDecoder) Stats() Stats { return d.stats }

// frameLen returns the length of the response whose header starts b, 0 when b is too
// short to tell, and -1 when b does not start a response header.
func (d *ModbusDecoder) frameLen(b []byte) int {
	if len(b) == 0 || b[0] != d.address {
		return -1
	}
	if len(b) < 2 {
		return 0
	}
	switch b[1] {
	case fcReadHolding | fcException:
		return 5
	case fcReadHolding:
		if len(b) < 3 {
			return 0
		}
		bc := int(b[2])
		if bc == 0 || bc%2 != 0 || bc > 2*rtuMaxRegisters || d.count > 0 && bc != 2*d.count {
			return -1
		}
		return 5 + bc
	}
	return -1
}

// goodInside returns the offset of the first whole response with a good CRC that starts in
// b[1:to], 0 when there is none, and false when more bytes are needed to tell.
func (d *ModbusDecoder) goodInside(b []byte, to int, end bool) (int, bool) {
	for q := 1; q < to; q++ {
		n := d.frameLen(b[q:])
		if n < 0 {
			continue
		}
		if n == 0 || q+n > len(b) {
			if end {
				continue
			}
			return 0, false
		}
		if crcOK(b[q : q+n]) {
			return q, true
		}
	}
	return 0, true
}

func (d *ModbusDecoder) scan(end bool) []ModbusResponse {
	var out []ModbusResponse
	b := d.buf
	for len(b) > 0 {
		i := len(b)
		for j := range b {
			if d.frameLen(b[j:]) >= 0 {
				i = j
				break
			}
		}
		d.stats.GarbageBytes += int64(i)
		b = b[i:]
		if len(b) == 0 {
			break
		}
		n := d.frameLen(b)
		if n == 0 || n > len(b) {
			if !end {
				break
			}
			d.stats.Truncated++
			d.seq++
			q, _ := d.goodInside(b, len(b), true)
			if q == 0 {
				q = len(b)
			}
			b = d.drop(b, q)
			continue
		}
		frame := b[:n]
		if !crcOK(frame) {
			// A good response starting inside means this one was cut short.
			q, decided := d.goodInside(b, n, end)
			if !decided {
				break
			}
			d.seq++
			if q > 0 {
				d.stats.Truncated++
				b = d.drop(b, q)
			} else {
				d.stats.BadChecksum++
				b = d.drop(b, n)
			}
			continue
		}
		r := ModbusResponse{Address: frame[0], Seq: d.seq}
		d.seq++
		if frame[1]&fcException != 0 {
			r.Exception = frame[2]
			d.stats.Exceptions++
		} else {
			r.Registers = make([]uint16, frame[2]/2)
			for k := range r.Registers {
				r.Registers[k] = binary.BigEndian.Uint16(frame[3+2*k:])
			}
			d.stats.FramesOK++
		}
		out = append(out, r)
		d.consumed += int64(n)
		b = b[n:]
	}
	d.buf = append(d.buf[:0], b...)
	return out
}

func (d *ModbusDecoder) drop(b []byte, n int) []byte {
	d.dropped += int64(n)
	return b[n:]
}

// An RTUResponder answers Modbus RTU read-holding-registers requests (function 03) for one
// address, as a noise transmitter does: for tests and the simulator.
type RTUResponder struct {
	Address uint8
	// Read returns count registers from register start. An error, or fewer values, makes
	// the responder answer with exception 02 (illegal data address).
	Read func(start, count uint16) ([]uint16, error)
}

// Serve reads requests from rw and writes the answers until reading fails; it returns nil
// when the reading ends with io.EOF. Bytes that do not make a request to its address with a
// good CRC are skipped; a request for another function is answered with exception 01.
func (s *RTUResponder) Serve(rw io.ReadWriter) error {
	var buf []byte
	chunk := make([]byte, 256)
	for {
		n, rerr := rw.Read(chunk)
		buf = append(buf, chunk[:n]...)
		for len(buf) > 0 {
			if buf[0] != s.Address {
				buf = buf[1:]
				continue
			}
			if len(buf) < rtuRequestLen {
				break
			}
			if !crcOK(buf[:rtuRequestLen]) {
				buf = buf[1:]
				continue
			}
			answer := s.answer(buf[:rtuRequestLen])
			buf = buf[rtuRequestLen:]
			if _, err := rw.Write(answer); err != nil {
				return fmt.Errorf("slm: rtu responder: write: %w", err)
			}
		}
		if rerr != nil {
			if errors.Is(rerr, io.EOF) {
				return nil
			}
			return fmt.Errorf("slm: rtu responder: read: %w", rerr)
		}
	}
}

// answer returns the response to a request whose address and CRC were checked.
func (s *RTUResponder) answer(req []byte) []byte {
	exception := func(code uint8) []byte {
		return appendCRC([]byte{s.Address, req[1] | fcException, code})
	}
	if req[1] != fcReadHolding {
		return exception(excIllegalFunction)
	}
	start, count := binary.BigEndian.Uint16(req[2:]), binary.BigEndian.Uint16(req[4:])
	if count == 0 || count > rtuMaxRegisters {
		return exception(excIllegalValue)
	}
	if s.Read == nil {
		return exception(excIllegalAddress)
	}
	regs, err := s.Read(start, count)
	if err != nil || len(regs) < int(count) {
		return exception(excIllegalAddress)
	}
	return EncodeModbusResponse(ModbusResponse{Address: s.Address, Registers: regs[:count]})
}
