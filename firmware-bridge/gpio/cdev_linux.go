package gpio

import (
	"fmt"
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Flags of the GPIO uAPI v2 (linux/gpio.h).
const (
	lineFlagActiveLow = 1 << 1
	lineFlagOutput    = 1 << 3
)

// Chip is a line requested from a GPIO character device.
type Chip struct {
	fd   int // the line request's file descriptor
	name string
}

// OpenChip requests line offset of the character device chip as an output, inactive.
func OpenChip(chip string, offset uint32, activeLow bool, consumer string) (*Chip, error) {
	f, err := os.OpenFile(chip, os.O_RDWR, 0)
	if err != nil {
		return nil, fmt.Errorf("gpio: %w", err)
	}
	defer f.Close()
	var req unix.GPIOV2LineRequest
	req.Offsets[0] = offset
	req.Num_lines = 1
	copy(req.Consumer[:len(req.Consumer)-1], consumer)
	req.Config.Flags = lineFlagOutput
	if activeLow {
		req.Config.Flags |= lineFlagActiveLow
	}
	// The initial value: inactive (bit 0 clear for the one line).
	req.Config.Num_attrs = 1
	req.Config.Attrs[0].Attr.Id = unix.GPIO_V2_LINE_ATTR_ID_OUTPUT_VALUES
	req.Config.Attrs[0].Mask = 1
	if err := ioctl(int(f.Fd()), unix.GPIO_V2_GET_LINE_IOCTL, unsafe.Pointer(&req)); err != nil {
		return nil, fmt.Errorf("gpio: request %s line %d: %w", chip, offset, err)
	}
	return &Chip{fd: int(req.Fd), name: fmt.Sprintf("%s:%d", chip, offset)}, nil
}

// Set drives the line (the kernel applies active-low).
func (c *Chip) Set(on bool) error {
	v := unix.GPIOV2LineValues{Mask: 1}
	if on {
		v.Bits = 1
	}
	if err := ioctl(c.fd, unix.GPIO_V2_LINE_SET_VALUES_IOCTL, unsafe.Pointer(&v)); err != nil {
		return fmt.Errorf("gpio: set %s: %w", c.name, err)
	}
	return nil
}

// Get reads the line's value back (active = true).
func (c *Chip) Get() (bool, error) {
	v := unix.GPIOV2LineValues{Mask: 1}
	if err := ioctl(c.fd, unix.GPIO_V2_LINE_GET_VALUES_IOCTL, unsafe.Pointer(&v)); err != nil {
		return false, fmt.Errorf("gpio: get %s: %w", c.name, err)
	}
	return v.Bits&1 != 0, nil
}

// Close drives the line inactive and releases it.
func (c *Chip) Close() error {
	err := c.Set(false)
	if cerr := unix.Close(c.fd); err == nil {
		err = cerr
	}
	return err
}

func ioctl(fd int, req uint, arg unsafe.Pointer) error {
	_, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), uintptr(req), uintptr(arg))
	if errno != 0 {
		return errno
	}
	return nil
}
