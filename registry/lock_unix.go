//go:build unix

package registry

import (
	"os"
	"syscall"
)

// lockDir takes an exclusive advisory lock on the directory dir, waiting for another holder;
// unlock releases it. The directory, not the file: the file is replaced by a rename on every
// edit, so a lock on it would be a lock on a file that is no longer there, and a lock file
// beside it would be one more file in the operator's directory.
func lockDir(dir string) (unlock func(), err error) {
	f, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	for {
		err = syscall.Flock(int(f.Fd()), syscall.LOCK_EX)
		if err != syscall.EINTR {
			break
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil // closing releases the lock
}
