package slm

import (
	"bytes"
	"context"
	"errors"
	"io"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/creack/pty"
	"github.com/simonvetter/modbus"
)

func TestModbusCRC(t *testing.T) {
	// The classic request: read one holding register at 0 of address 1.
	if got, want := EncodeModbusRequest(1, 0, 1), mustHex(t, "010300000001840a"); !bytes.Equal(got, want) {
		t.Errorf("request = % x, want % x", got, want)
	}
	r := EncodeModbusResponse(ModbusResponse{Address: 1, Registers: []uint16{682}})
	if want := mustHex(t, "01030202aa"); !bytes.Equal(r[:5], want) || len(r) != 7 || !crcOK(r) {
		t.Errorf("response = % x", r)
	}
	if crcOK([]byte{1, 2, 3}) {
		t.Error("crcOK of 3 bytes")
	}
	e := EncodeModbusResponse(ModbusResponse{Address: 7, Exception: 2})
	if len(e) != 5 || e[0] != 7 || e[1] != 0x83 || e[2] != 2 || !crcOK(e) {
		t.Errorf("exception = % x", e)
	}
	long := EncodeModbusResponse(ModbusResponse{Address: 1, Registers: make([]uint16, 200)})
	if long[2] != 250 || len(long) != 255 {
		t.Errorf("200 registers: byte count %d, %d bytes", long[2], len(long))
	}
}

func decodeModbusAll(t testing.TB, count int, chunks ...[]byte) ([]ModbusResponse, Stats) {
	t.Helper()
	d := NewModbusDecoder(1, count)
	var out []ModbusResponse
	for _, c := range chunks {
		out = append(out, d.Feed(c)...)
	}
	out = append(out, d.End()...)
	if len(d.buf) != 0 || d.fed != d.consumed+d.dropped+d.stats.GarbageBytes {
		t.Fatalf("accounting: fed %d, consumed %d + dropped %d + garbage %d, %d held",
			d.fed, d.consumed, d.dropped, d.stats.GarbageBytes, len(d.buf))
	}
	return out, d.Stats()
}

func resp(v uint16) []byte {
	return EncodeModbusResponse(ModbusResponse{Address: 1, Registers: []uint16{v}})
}

// values returns the first register of each response (or 1000+exception code) and its Seq.
func values(rs []ModbusResponse) [][2]int64 {
	var out [][2]int64
	for _, r := range rs {
		v := int64(1000 + int(r.Exception))
		if r.Exception == 0 {
			v = int64(r.Registers[0])
		}
		out = append(out, [2]int64{v, r.Seq})
	}
	return out
}

func TestModbusDecoder(t *testing.T) {
	r1, r2, r3 := resp(600), resp(700), resp(682)
	badCRC := bytes.Clone(r2)
	badCRC[4] ^= 1
	other := EncodeModbusResponse(ModbusResponse{Address: 2, Registers: []uint16{1}})
	two := EncodeModbusResponse(ModbusResponse{Address: 1, Registers: []uint16{1, 2}})
	exc := EncodeModbusResponse(ModbusResponse{Address: 1, Exception: 2})
	tests := []struct {
		name   string
		count  int
		stream []byte
		want   [][2]int64
		stats  Stats
	}{
		{"clean", 1, cat(r1, r2, r3), [][2]int64{{600, 0}, {700, 1}, {682, 2}}, Stats{FramesOK: 3}},
		{"garbage", 1, cat([]byte{0, 1, 1, 3}, r1, []byte{0x03, 0x02}, r2, other, r3),
			[][2]int64{{600, 0}, {700, 1}, {682, 2}}, Stats{FramesOK: 3, GarbageBytes: 4 + 2 + 7}},
		{"false header", 1, cat([]byte{1, 3, 2}, r1), [][2]int64{{600, 1}}, Stats{FramesOK: 1, Truncated: 1}},
		{"bad CRC", 1, cat(r1, badCRC, r3), [][2]int64{{600, 0}, {682, 2}}, Stats{FramesOK: 2, BadChecksum: 1}},
		{"cut short", 1, cat(r1[:4], r2, r3), [][2]int64{{700, 1}, {682, 2}}, Stats{FramesOK: 2, Truncated: 1}},
		{"cut short at the end", 1, cat(r1, r2[:5]), [][2]int64{{600, 0}}, Stats{FramesOK: 1, Truncated: 1}},
		{"exception", 1, cat(r1, exc, r3), [][2]int64{{600, 0}, {1002, 1}, {682, 2}}, Stats{FramesOK: 2, Exceptions: 1}},
		{"two registers, one expected", 1, cat(two, r1), [][2]int64{{600, 0}}, Stats{FramesOK: 1, GarbageBytes: 9}},
		{"any count", 0, cat(two, r1), [][2]int64{{1, 0}, {600, 1}}, Stats{FramesOK: 2}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, st := decodeModbusAll(t, tt.count, tt.stream)
			if !reflect.DeepEqual(values(got), tt.want) || st != tt.stats {
				t.Errorf("got %v, %+v; want %v, %+v", values(got), st, tt.want, tt.stats)
			}
		})
	}
}

func TestModbusDecoderSplits(t *testing.T) {
	bad := resp(700)
	bad[3] ^= 0x80
	stream := cat([]byte{1, 3}, resp(600), []byte{1}, bad, resp(601)[:4], resp(602),
		EncodeModbusResponse(ModbusResponse{Address: 1, Exception: 4}), resp(603), []byte{1, 3, 2, 0})
	whole, wholeStats := decodeModbusAll(t, 1, stream)
	if len(whole) != 4 || wholeStats.BadChecksum != 1 || wholeStats.Truncated != 2 {
		t.Fatalf("%v, %+v", values(whole), wholeStats)
	}
	for k := 0; k <= len(stream); k++ {
		got, st := decodeModbusAll(t, 1, stream[:k], stream[k:])
		if !reflect.DeepEqual(got, whole) || st != wholeStats {
			t.Fatalf("split at %d: %v, %+v; want %v, %+v", k, values(got), st, values(whole), wholeStats)
		}
	}
	var chunks [][]byte
	for i := range stream {
		chunks = append(chunks, stream[i:i+1])
	}
	if got, st := decodeModbusAll(t, 1, chunks...); !reflect.DeepEqual(got, whole) || st != wholeStats {
		t.Fatalf("byte by byte: %v, %+v", values(got), st)
	}
}

// pipeRW is one end of a byte pipe pair, for the responder without a serial line.
type pipeRW struct {
	in  io.Reader
	out bytes.Buffer
}

func (p *pipeRW) Read(b []byte) (int, error)  { return p.in.Read(b) }
func (p *pipeRW) Write(b []byte) (int, error) { return p.out.Write(b) }

func TestRTUResponder(t *testing.T) {
	s := &RTUResponder{Address: 5, Read: func(start, count uint16) ([]uint16, error) {
		if start != 0 {
			return nil, errors.New("no such register")
		}
		return []uint16{682, 1, 2}[:count], nil
	}}
	req := func(reg, count uint16) []byte { return EncodeModbusRequest(5, reg, count) }
	other := EncodeModbusRequest(6, 0, 1)
	fn4 := []byte{5, 4, 0, 0, 0, 1}
	fn4 = appendCRC(fn4)
	badCRC := req(0, 1)
	badCRC[7] ^= 1
	in := cat([]byte{0xff, 5}, req(0, 1), other, badCRC, req(1, 1), req(0, 2), req(0, 0), fn4, req(0, 1)[:5])
	rw := &pipeRW{in: bytes.NewReader(in)}
	if err := s.Serve(rw); err != nil {
		t.Fatal(err)
	}
	want := cat(
		EncodeModbusResponse(ModbusResponse{Address: 5, Registers: []uint16{682}}),
		EncodeModbusResponse(ModbusResponse{Address: 5, Exception: 2}),
		EncodeModbusResponse(ModbusResponse{Address: 5, Registers: []uint16{682, 1}}),
		EncodeModbusResponse(ModbusResponse{Address: 5, Exception: 3}),
		appendCRC([]byte{5, 0x84, 1}),
	)
	if !bytes.Equal(rw.out.Bytes(), want) {
		t.Errorf("answers\n% x\nwant\n% x", rw.out.Bytes(), want)
	}
	// Read errors other than EOF are returned.
	if err := s.Serve(&pipeRW{in: io.MultiReader(bytes.NewReader(req(0, 1)), errReader{})}); !errors.Is(err, errFail) {
		t.Errorf("Serve = %v, want errFail", err)
	}
	if err := (&RTUResponder{Address: 5}).Serve(&pipeRW{in: bytes.NewReader(req(0, 1))}); err != nil {
		t.Error(err)
	}
}

type errReader struct{}

func (errReader) Read([]byte) (int, error) { return 0, errFail }

// TestPollerSerial runs the Modbus client on a real serial path: a pseudo-terminal whose
// other side is an RTU responder.
func TestPollerSerial(t *testing.T) {
	ptmx, tty, err := pty.Open()
	if err != nil {
		t.Skipf("no pseudo-terminal: %v", err)
	}

	var mu sync.Mutex
	level := uint16(682)
	s := &RTUResponder{Address: 3, Read: func(start, count uint16) ([]uint16, error) {
		if start != 7 {
			return nil, errors.New("no such register")
		}
		mu.Lock()
		defer mu.Unlock()
		level++
		return []uint16{level - 1}, nil
	}}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ptmx) }()
	defer func() {
		// Once every descriptor of the terminal side is closed, reading the master side
		// fails (EIO) and the responder returns.
		tty.Close()
		<-served
		ptmx.Close()
	}()

	p, err := OpenPoller(ModbusConfig{Device: tty.Name(), Address: 3, Register: 7, Rate: 50, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close() // closing twice is harmless
	for _, want := range []float64{68.2, 68.3} {
		got, err := p.Read()
		if err != nil || got != want {
			t.Fatalf("Read = %v, %v; want %v", got, err, want)
		}
	}

	ctx, cancel := context.WithCancel(context.Background())
	var samples []Sample
	clock := time.Date(2026, 11, 29, 12, 0, 0, 0, time.UTC)
	now := func() time.Time {
		clock = clock.Add(20 * time.Millisecond)
		return clock
	}
	err = p.Run(ctx, now, func(s Sample) {
		samples = append(samples, s)
		if len(samples) == 3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || len(samples) != 3 {
		t.Fatalf("Run = %v with %d samples", err, len(samples))
	}
	for i, s := range samples {
		if want := float64(684+i) / 10; s.DB != want || !s.T.Equal(clock.Add(time.Duration(i-2)*20*time.Millisecond)) {
			t.Errorf("sample %d = %+v, want %v dB", i, s, want)
		}
	}
	if st := p.Stats(); st != (PollStats{Polls: 5}) {
		t.Errorf("stats %+v", st)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	// A meter that answers with an exception.
	q, err := OpenPoller(ModbusConfig{Device: tty.Name(), Address: 3, Register: 8, Timeout: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	if _, err := q.Read(); err == nil {
		t.Error("Read of a missing register: no error")
	}
	if st := q.Stats(); st != (PollStats{Errors: 1}) {
		t.Errorf("stats %+v", st)
	}
	// Run gives up after MaxFailures failed polls in a row.
	q.cfg.MaxFailures, q.cfg.Rate = 3, 100
	err = q.Run(context.Background(), nil, func(Sample) { t.Error("a sample from a failing meter") })
	if err == nil || !errors.Is(err, modbus.ErrIllegalDataAddress) {
		t.Errorf("Run = %v, want illegal data address after 3 failures", err)
	}
	if st := q.Stats(); st != (PollStats{Errors: 4}) {
		t.Errorf("stats %+v", st)
	}
}

func TestModbusConfig(t *testing.T) {
	c, err := ModbusConfig{Device: "/dev/ttyUSB0"}.withDefaults()
	if err != nil {
		t.Fatal(err)
	}
	want := ModbusConfig{Device: "/dev/ttyUSB0", Baud: 4800, Parity: "N", StopBits: 1, Address: 1,
		Divisor: 10, Rate: 10, Timeout: 300 * time.Millisecond, MaxFailures: 50}
	if c != want {
		t.Errorf("defaults %+v", c)
	}
	for _, c := range []ModbusConfig{
		{},
		{Device: "x", Baud: -1},
		{Device: "x", Parity: "M"},
		{Device: "x", StopBits: 3},
		{Device: "x", Address: 248},
		{Device: "x", Divisor: -10},
		{Device: "x", Rate: -1},
		{Device: "x", Timeout: -1},
	} {
		if _, err := c.withDefaults(); err == nil {
			t.Errorf("%+v: no error", c)
		}
		if _, err := OpenPoller(c); err == nil {
			t.Errorf("OpenPoller(%+v): no error", c)
		}
	}
	if _, err := OpenPoller(ModbusConfig{Device: "/nonexistent/tty"}); err == nil {
		t.Error("OpenPoller of a missing device: no error")
	}
}
