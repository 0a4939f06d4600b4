//go:build !linux

package gpio

import "errors"

// Chip is a GPIO character-device line: Linux only.
type Chip struct{}

// OpenChip fails: the GPIO character device is Linux's.
func OpenChip(chip string, offset uint32, activeLow bool, consumer string) (*Chip, error) {
	return nil, errors.New("gpio: the GPIO character device needs Linux; use a value file")
}

// Set fails.
func (*Chip) Set(bool) error { return errors.New("gpio: not supported") }

// Get fails.
func (*Chip) Get() (bool, error) { return false, errors.New("gpio: not supported") }

// Close does nothing.
func (*Chip) Close() error { return nil }
