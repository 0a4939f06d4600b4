//go:build !linux

package main

import "syscall"

// childAttr is the process attributes of every child: its own process group, so that a Ctrl-C
// on the terminal reaches localrun alone, which stops its children in order. Only Linux has a
// parent-death signal (deathsig_linux.go).
func childAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setpgid: true} }

// dieWithParent does nothing where there is no parent-death signal.
func dieWithParent() {}
