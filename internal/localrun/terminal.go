package main

import (
	"os"
	"os/signal"
	"syscall"
	"unsafe"
)

// takeTerminal makes localrun's own process group the terminal's foreground group, so that a
// Ctrl-C reaches localrun alone: it then stops its children in dependency order and exits 0.
// Without it the terminal's SIGINT also reaches `make`, which waits for its child and then
// kills itself with the same signal ("make: *** [run] Interrupt"), whatever the child did. This
// is what a job-control shell does for each job. It returns the function that gives the
// terminal back to the group that had it. When standard input is not the terminal of the
// foreground group (a pipe, a background job, a service), it changes nothing.
func takeTerminal() (restore func()) {
	nothing := func() {}
	fd := int(os.Stdin.Fd())
	fg, err := tcgetpgrp(fd)
	if err != nil || fg != syscall.Getpgrp() {
		return nothing
	}
	if syscall.Getpgrp() == syscall.Getpid() {
		return nothing // already a group leader of its own, as a shell starts it
	}
	if err := syscall.Setpgid(0, 0); err != nil {
		return nothing
	}
	if err := tcsetpgrp(fd, syscall.Getpid()); err != nil {
		_ = syscall.Setpgid(0, fg) // back where it was, to receive the terminal's signals
		return nothing
	}
	return func() { _ = tcsetpgrp(fd, fg) }
}

func tcgetpgrp(fd int) (int, error) {
	var pgrp int32
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCGPGRP, uintptr(unsafe.Pointer(&pgrp))); e != 0 {
		return 0, e
	}
	return int(pgrp), nil
}

// tcsetpgrp makes pgrp the terminal's foreground process group. A process outside the
// foreground group that calls it gets SIGTTOU, which is ignored meanwhile.
func tcsetpgrp(fd, pgrp int) error {
	signal.Ignore(syscall.SIGTTOU)
	defer signal.Reset(syscall.SIGTTOU)
	p := int32(pgrp)
	if _, _, e := syscall.Syscall(syscall.SYS_IOCTL, uintptr(fd), syscall.TIOCSPGRP, uintptr(unsafe.Pointer(&p))); e != 0 {
		return e
	}
	return nil
}
