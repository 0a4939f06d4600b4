// Package serialport opens the bridge's serial devices. Standard rates go through
// github.com/tarm/serial; on Linux tarm/serial accepts only the standard rates, so a port at a
// non-standard rate — the VDO tachograph's D8 output at 10400 baud — is opened with termios2 and
// BOTHER (golang.org/x/sys/unix) behind the same interface. Modbus meters are the other
// exception: simonvetter/modbus opens its own port.
package serialport

import (
	"fmt"
	"io"
	"time"

	"github.com/tarm/serial"
)

// Config names a port and its line settings.
type Config struct {
	Path     string
	Baud     int
	Parity   string // "N" (default), "E" or "O"
	StopBits int    // 1 (default) or 2
	// ReadTimeout makes Read return (0, nil) after this long without data; 0 blocks. A port
	// opened with a ReadTimeout is not an *os.File (see timeoutPort).
	ReadTimeout time.Duration
}

// Port is an open serial port.
type Port = io.ReadWriteCloser

// standard are the rates tarm/serial accepts on Linux.
var standard = map[int]bool{
	50: true, 75: true, 110: true, 134: true, 150: true, 200: true, 300: true, 600: true,
	1200: true, 1800: true, 2400: true, 4800: true, 9600: true, 19200: true, 38400: true,
	57600: true, 115200: true, 230400: true, 460800: true, 500000: true, 576000: true,
	921600: true, 1000000: true, 1152000: true, 1500000: true, 2000000: true, 2500000: true,
	3000000: true, 3500000: true, 4000000: true,
}

// Standard reports whether rate is opened through tarm/serial.
func Standard(rate int) bool { return standard[rate] }

// Open opens a port.
func Open(c Config) (Port, error) {
	if c.Baud <= 0 {
		return nil, fmt.Errorf("serialport %s: baud %d", c.Path, c.Baud)
	}
	parity, err := parity(c.Parity)
	if err != nil {
		return nil, fmt.Errorf("serialport %s: %w", c.Path, err)
	}
	stop := serial.Stop1
	switch c.StopBits {
	case 0, 1:
	case 2:
		stop = serial.Stop2
	default:
		return nil, fmt.Errorf("serialport %s: stop bits %d", c.Path, c.StopBits)
	}
	var p Port
	if !Standard(c.Baud) {
		p, err = openCustom(c)
	} else {
		p, err = serial.OpenPort(&serial.Config{Name: c.Path, Baud: c.Baud, Parity: parity, StopBits: stop, Size: 8, ReadTimeout: c.ReadTimeout})
		if err != nil {
			err = fmt.Errorf("serialport %s: %w", c.Path, err)
		}
	}
	if err != nil {
		return nil, err
	}
	if c.ReadTimeout > 0 {
		p = &timeoutPort{Port: p, timeout: c.ReadTimeout}
	}
	return p, nil
}

// timeoutPort keeps the promise of Config.ReadTimeout. With VMIN 0 and VTIME set, read(2)
// returns 0 both when VTIME passes without data and when the device is gone (a hung-up tty: the
// USB adapter unplugged, the pseudo-terminal's master closed), and os.File reports both as
// io.EOF. A timeout cannot come before VTIME, which starts with the read; a hung-up tty answers
// at once. So an empty read that waited at least half the timeout is a timeout, (0, nil), and
// one that came back sooner is the device gone, io.EOF.
type timeoutPort struct {
	Port
	timeout time.Duration
}

func (p *timeoutPort) Read(b []byte) (int, error) {
	start := time.Now()
	n, err := p.Port.Read(b)
	if n == 0 && err == io.EOF && len(b) > 0 && time.Since(start) >= p.timeout/2 {
		return 0, nil
	}
	return n, err
}

func parity(s string) (serial.Parity, error) {
	switch s {
	case "", "N", "n":
		return serial.ParityNone, nil
	case "E", "e":
		return serial.ParityEven, nil
	case "O", "o":
		return serial.ParityOdd, nil
	}
	return 0, fmt.Errorf("parity %q: want N, E or O", s)
}
