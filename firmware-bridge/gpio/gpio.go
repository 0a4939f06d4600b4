// Package gpio drives the Pi's output lines: the coach's buzzer, LED and volume limiter relay.
//
// A line is opened through the Linux GPIO character device (/dev/gpiochipN, uAPI v2, with the
// ioctls of golang.org/x/sys/unix: no GPIO library is served by the module proxy this project
// builds with), or, as the service switch is read, through a value file (the sysfs
// /sys/class/gpio/gpioN/value, or any file the bridge may write "0" or "1" to). Open takes
// either: "/dev/gpiochip0:18" is line 18 of chip 0, anything else a value file.
package gpio

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Line is one output line.
type Line interface {
	// Set drives the line: on is active (high, or low when active-low).
	Set(on bool) error
	// Close releases the line. A character-device line returns to its default (the kernel
	// keeps the last value; Close drives it inactive first); a value file is left inactive.
	Close() error
}

// Open opens an output line from its spec: "/dev/gpiochipN:LINE" for the character device,
// else the path of a value file. The line starts inactive.
func Open(spec string, activeLow bool, consumer string) (Line, error) {
	if chip, off, ok := strings.Cut(spec, ":"); ok && strings.HasPrefix(chip, "/dev/gpiochip") {
		n, err := strconv.ParseUint(off, 10, 32)
		if err != nil {
			return nil, fmt.Errorf("gpio %q: line offset: %w", spec, err)
		}
		c, err := OpenChip(chip, uint32(n), activeLow, consumer)
		if err != nil {
			return nil, err
		}
		return c, nil
	}
	v, err := OpenValueFile(spec, activeLow)
	if err != nil {
		return nil, err
	}
	return v, nil
}

// ValueFile is a line driven by writing "0" or "1" to a file.
type ValueFile struct {
	path      string
	activeLow bool
}

// OpenValueFile opens a value-file line and drives it inactive.
func OpenValueFile(path string, activeLow bool) (*ValueFile, error) {
	if path == "" {
		return nil, errors.New("gpio: empty value file path")
	}
	v := &ValueFile{path: path, activeLow: activeLow}
	if err := v.Set(false); err != nil {
		return nil, err
	}
	return v, nil
}

// Set writes the line's value.
func (v *ValueFile) Set(on bool) error {
	val := "0\n"
	if on != v.activeLow {
		val = "1\n"
	}
	// The sysfs value file takes a write at offset 0, not a create-and-rename.
	f, err := os.OpenFile(v.path, os.O_WRONLY|os.O_TRUNC, 0)
	if err != nil {
		return fmt.Errorf("gpio: %w", err)
	}
	_, err = f.WriteString(val)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("gpio: write %s: %w", v.path, err)
	}
	return nil
}

// Close drives the line inactive.
func (v *ValueFile) Close() error { return v.Set(false) }
