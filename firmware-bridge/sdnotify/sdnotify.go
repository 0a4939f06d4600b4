// Package sdnotify tells systemd how a service is doing, as sd_notify(3) does, without
// libsystemd: it sends newline-separated VAR=value assignments in one datagram to the unix
// socket named by $NOTIFY_SOCKET. With Type=notify in the unit, systemd waits for READY=1
// before it considers the service started; with WatchdogSec= it expects WATCHDOG=1 at least
// once per that interval and restarts the service when the pings stop.
//
// Outside systemd (no $NOTIFY_SOCKET) every function is a no-op, so a program can call them
// unconditionally.
package sdnotify

import (
	"context"
	"errors"
	"net"
	"os"
	"strconv"
	"strings"
	"time"
)

// States a service reports (see sd_notify(3)).
const (
	// Ready: start-up is finished; systemd ends the "activating" state.
	Ready = "READY=1"
	// Stopping: the service is shutting down.
	Stopping = "STOPPING=1"
	// Watchdog: the service is alive; resets the WatchdogSec= timer.
	Watchdog = "WATCHDOG=1"
)

// Status returns the assignment that sets the free-form status shown by systemctl status.
func Status(text string) string {
	return "STATUS=" + strings.ReplaceAll(text, "\n", " ")
}

// ErrUnsupportedSocket is returned for a $NOTIFY_SOCKET this package cannot reach (systemd
// 254 and later may name an AF_VSOCK address, used for virtual machines).
var ErrUnsupportedSocket = errors.New("sdnotify: unsupported NOTIFY_SOCKET address")

// Notify sends state, one or more newline-separated assignments such as Ready, to systemd.
// It reports whether a notification socket was configured: false with a nil error outside
// systemd. A socket path starting with "@" names a socket in the abstract namespace.
func Notify(state string) (sent bool, err error) {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return false, nil
	}
	if addr[0] != '/' && addr[0] != '@' {
		return false, ErrUnsupportedSocket
	}
	// The net package turns a leading "@" into the abstract namespace's leading NUL byte.
	conn, err := net.DialUnix("unixgram", nil, &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		return false, err
	}
	defer conn.Close()
	if _, err := conn.Write([]byte(state)); err != nil {
		return false, err
	}
	return true, nil
}

// WatchdogInterval returns the watchdog timeout systemd enforces on this process (the unit's
// WatchdogSec=, passed as $WATCHDOG_USEC), or 0 when there is none or $WATCHDOG_PID names
// another process.
func WatchdogInterval() time.Duration {
	usec, err := strconv.ParseUint(os.Getenv("WATCHDOG_USEC"), 10, 63)
	if err != nil || usec == 0 {
		return 0
	}
	if pid := os.Getenv("WATCHDOG_PID"); pid != "" && pid != strconv.Itoa(os.Getpid()) {
		return 0
	}
	return time.Duration(usec) * time.Microsecond
}

// RunWatchdog sends Watchdog every half of WatchdogInterval for as long as healthy returns
// true (a nil healthy counts as always true), until ctx is done. When healthy returns false
// it skips the ping, and systemd restarts the service once a whole interval passes without
// one; pings resume if it recovers before then. It returns at once when no watchdog applies.
// Call it after Ready: systemd arms the watchdog only when the service is started.
func RunWatchdog(ctx context.Context, healthy func() bool) {
	interval := WatchdogInterval()
	if interval <= 0 {
		return
	}
	tick := time.NewTicker(interval / 2)
	defer tick.Stop()
	for {
		if healthy == nil || healthy() {
			// A failed send is retried on the next tick; systemd decides when it is too late.
			_, _ = Notify(Watchdog)
		}
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
	}
}
