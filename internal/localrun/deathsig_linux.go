package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// childAttr is the process attributes of every child: its own process group (so that a Ctrl-C
// on the terminal reaches localrun alone, which stops its children in order), and SIGKILL when
// localrun dies without stopping it (SIGKILL from outside, a crash). Then there is no orderly
// stop to be had: the embedded broker died with localrun, and what the children keep is safe
// against a kill anyway (the bridges' spools, the monitor's SQLite, InfluxDB's WAL); what
// matters is that none is left holding its ports for the next run.
//
// Linux sends the parent-death signal when the thread that forked the child exits, not the
// process: every child is started from the forker's goroutine, locked to its thread for as long
// as localrun lives (supervisor.start).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// dieWithParent asks for SIGTERM when localrun's parent dies: `make run` execs localrun from
// make, and a `make` killed (by an IDE, a CI timeout, kill -9) then stops localrun through its
// normal shutdown, which stops every child in order. The caller must run on a thread that lives
// as long as the process (the parent-death signal is a thread's), and must already handle
// SIGTERM. A parent that died between the start and the request has left localrun to init (or
// a subreaper): then it stops at once. (A parent that is init itself, a service manager starting
// localrun, is no parent that died.)
func dieWithParent() {
	parent := os.Getppid()
	if err := unix.Prctl(unix.PR_SET_PDEATHSIG, uintptr(unix.SIGTERM), 0, 0, 0); err != nil {
		return
	}
	if os.Getppid() != parent {
		_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
	}
}
