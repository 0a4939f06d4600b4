//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package spool

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock(2) on the lock file f, failing with ErrLocked at once if
// another open file (in this process or another) holds it.
func lockDir(f *os.File) error {
	for {
		err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.EWOULDBLOCK):
			return ErrLocked
		default:
			return fmt.Errorf("spool: lock %s: %w", f.Name(), err)
		}
	}
}
