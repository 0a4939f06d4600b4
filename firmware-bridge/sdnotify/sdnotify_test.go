package sdnotify

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// listen opens a datagram socket like systemd's notification socket and points
// $NOTIFY_SOCKET at it.
func listen(t *testing.T, name string) *net.UnixConn {
	t.Helper()
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: name, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	t.Setenv("NOTIFY_SOCKET", name)
	return conn
}

// receive reads one datagram or fails after timeout.
func receive(t *testing.T, conn *net.UnixConn, timeout time.Duration) string {
	t.Helper()
	if err := conn.SetReadDeadline(time.Now().Add(timeout)); err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 4096)
	n, err := conn.Read(buf)
	if err != nil {
		t.Fatalf("no notification: %v", err)
	}
	return string(buf[:n])
}

func TestNotifyPathSocket(t *testing.T) {
	conn := listen(t, filepath.Join(t.TempDir(), "notify"))
	for _, state := range []string{Ready, Watchdog, Status("a ler\nportas") + "\n" + Stopping} {
		sent, err := Notify(state)
		if err != nil || !sent {
			t.Fatalf("Notify(%q) = %v, %v", state, sent, err)
		}
		want := state
		if got := receive(t, conn, 5*time.Second); got != want {
			t.Errorf("received %q, want %q", got, want)
		}
	}
}

func TestNotifyAbstractSocket(t *testing.T) {
	conn := listen(t, fmt.Sprintf("@trenzinho-sdnotify-test-%d-%d", os.Getpid(), time.Now().UnixNano()))
	if sent, err := Notify(Ready); err != nil || !sent {
		t.Fatalf("Notify = %v, %v", sent, err)
	}
	if got := receive(t, conn, 5*time.Second); got != Ready {
		t.Errorf("received %q, want %q", got, Ready)
	}
}

func TestNotifyOutsideSystemd(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if sent, err := Notify(Ready); sent || err != nil {
		t.Errorf("Notify without NOTIFY_SOCKET = %v, %v; want false, nil", sent, err)
	}
	t.Setenv("NOTIFY_SOCKET", "vsock:2:1234")
	if _, err := Notify(Ready); !errors.Is(err, ErrUnsupportedSocket) {
		t.Errorf("Notify(vsock) error = %v, want ErrUnsupportedSocket", err)
	}
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "nobody-listens"))
	if sent, err := Notify(Ready); sent || err == nil {
		t.Errorf("Notify to a missing socket = %v, %v; want an error", sent, err)
	}
}

func TestWatchdogInterval(t *testing.T) {
	for _, c := range []struct {
		usec, pid string
		want      time.Duration
	}{
		{"", "", 0},
		{"0", "", 0},
		{"junk", "", 0},
		{"30000000", "", 30 * time.Second},
		{"30000000", strconv.Itoa(os.Getpid()), 30 * time.Second},
		{"30000000", strconv.Itoa(os.Getpid() + 1), 0},
	} {
		t.Setenv("WATCHDOG_USEC", c.usec)
		t.Setenv("WATCHDOG_PID", c.pid)
		if got := WatchdogInterval(); got != c.want {
			t.Errorf("WATCHDOG_USEC=%q WATCHDOG_PID=%q: %v, want %v", c.usec, c.pid, got, c.want)
		}
	}
}

func TestRunWatchdog(t *testing.T) {
	conn := listen(t, filepath.Join(t.TempDir(), "notify"))
	t.Setenv("WATCHDOG_USEC", "200000") // 200 ms: a ping every 100 ms
	var healthy atomic.Bool
	healthy.Store(true)
	// Each question to healthy is a round of the watchdog's loop; the unhealthy answers are
	// counted, so that the test knows how many rounds have passed without a ping.
	unhealthy := make(chan struct{}, 64)
	check := func() bool {
		if healthy.Load() {
			return true
		}
		select {
		case unhealthy <- struct{}{}:
		default:
		}
		return false
	}
	rounds := func(n int) {
		t.Helper()
		for range n {
			select {
			case <-unhealthy:
			case <-time.After(5 * time.Second):
				t.Fatal("the watchdog stopped asking whether the service is healthy")
			}
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunWatchdog(ctx, check)
	}()
	for range 3 {
		if got := receive(t, conn, 5*time.Second); got != Watchdog {
			t.Fatalf("received %q, want %q", got, Watchdog)
		}
	}
	// Unhealthy: no more pings. Once the loop has asked and heard "no", the pings of the
	// healthy rounds before are in the socket: drained. Three unhealthy rounds later, a ping of
	// any but the last of them (a datagram is in the socket when its send returns) would be
	// there too.
	healthy.Store(false)
	rounds(1)
	drain(conn)
	rounds(3)
	if err := conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if n, err := conn.Read(make([]byte, 64)); err == nil {
		t.Fatalf("pinged while unhealthy (%d bytes)", n)
	}
	// Recovered: pings resume.
	healthy.Store(true)
	if got := receive(t, conn, 5*time.Second); got != Watchdog {
		t.Fatalf("received %q after recovery, want %q", got, Watchdog)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunWatchdog did not return after cancel")
	}
}

func TestRunWatchdogDisabled(t *testing.T) {
	t.Setenv("WATCHDOG_USEC", "")
	done := make(chan struct{})
	go func() {
		defer close(done)
		RunWatchdog(context.Background(), nil)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("RunWatchdog without a watchdog did not return")
	}
}

// drain discards the datagrams already queued on conn.
func drain(conn *net.UnixConn) {
	buf := make([]byte, 64)
	for {
		if err := conn.SetReadDeadline(time.Now().Add(10 * time.Millisecond)); err != nil {
			return
		}
		if _, err := conn.Read(buf); err != nil {
			return
		}
	}
}
