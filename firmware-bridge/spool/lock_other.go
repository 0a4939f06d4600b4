//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package spool

import "os"

// lockDir does nothing where flock(2) is not available: there, nothing stops two processes
// from opening one spool.
func lockDir(*os.File) error { return nil }
