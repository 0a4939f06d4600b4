package serialport

import (
	"fmt"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// openCustom opens a port at a non-standard rate with termios2 and BOTHER: raw mode, 8 data bits,
// the configured parity and stop bits, the receiver on, modem lines ignored.
func openCustom(c Config) (Port, error) {
	fd, err := unix.Open(c.Path, unix.O_RDWR|unix.O_NOCTTY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("serialport %s: %w", c.Path, err)
	}
	t, err := unix.IoctlGetTermios(fd, unix.TCGETS2)
	if err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("serialport %s: TCGETS2: %w", c.Path, err)
	}
	t.Iflag &^= unix.IGNBRK | unix.BRKINT | unix.PARMRK | unix.ISTRIP | unix.INLCR | unix.IGNCR | unix.ICRNL | unix.IXON | unix.IXOFF | unix.IXANY
	t.Oflag &^= unix.OPOST
	t.Lflag &^= unix.ECHO | unix.ECHONL | unix.ICANON | unix.ISIG | unix.IEXTEN
	t.Cflag &^= unix.CSIZE | unix.PARENB | unix.PARODD | unix.CSTOPB | unix.CBAUD | unix.CRTSCTS
	t.Cflag |= unix.CS8 | unix.CREAD | unix.CLOCAL | unix.BOTHER
	switch c.Parity {
	case "E", "e":
		t.Cflag |= unix.PARENB
	case "O", "o":
		t.Cflag |= unix.PARENB | unix.PARODD
	}
	if c.StopBits == 2 {
		t.Cflag |= unix.CSTOPB
	}
	t.Ispeed, t.Ospeed = uint32(c.Baud), uint32(c.Baud)
	vtime := uint8(0)
	vmin := uint8(1)
	if c.ReadTimeout > 0 {
		vmin = 0
		vtime = uint8(min(255, max(1, c.ReadTimeout/(100*time.Millisecond))))
	}
	t.Cc[unix.VMIN], t.Cc[unix.VTIME] = vmin, vtime
	if err := unix.IoctlSetTermios(fd, unix.TCSETS2, t); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("serialport %s: TCSETS2 at %d baud: %w", c.Path, c.Baud, err)
	}
	// Back to blocking reads now that the line is configured (as tarm/serial does).
	if err := unix.SetNonblock(fd, false); err != nil {
		unix.Close(fd)
		return nil, fmt.Errorf("serialport %s: %w", c.Path, err)
	}
	return os.NewFile(uintptr(fd), c.Path), nil
}

// Speed returns the input speed the kernel holds for an open port (for tests and probe).
func Speed(f *os.File) (int, error) {
	t, err := unix.IoctlGetTermios(int(f.Fd()), unix.TCGETS2)
	if err != nil {
		return 0, err
	}
	return int(t.Ispeed), nil
}
