package sim

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestWaitReader: a pseudo-terminal nobody has opened keeps WaitReader waiting until its
// context ends; once a reader opens the slave (through the symlink, as the bridge does), it
// returns, and what is written then reaches the reader whole.
func TestWaitReader(t *testing.T) {
	p, err := OpenPTY(filepath.Join(t.TempDir(), "dev-gps"))
	if errors.Is(err, ErrNoPTY) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	err = p.WaitReader(ctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("WaitReader with no reader: %v; want the context's deadline", err)
	}

	r, err := os.OpenFile(p.Path, os.O_RDWR|unix.O_NOCTTY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	ctx, cancel = context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := p.WaitReader(ctx); err != nil {
		t.Fatalf("WaitReader with a reader: %v", err)
	}
	if err := makeRaw(r); err != nil {
		t.Fatal(err)
	}
	const msg = "$GPRMC,hello*00\r\n"
	if _, err := p.Master.Write([]byte(msg)); err != nil {
		t.Fatal(err)
	}
	got := make([]byte, 0, len(msg))
	buf := make([]byte, 64)
	r.SetReadDeadline(time.Now().Add(30 * time.Second))
	for len(got) < len(msg) {
		n, err := r.Read(buf)
		if err != nil {
			t.Fatalf("read after %q: %v", got, err)
		}
		got = append(got, buf[:n]...)
	}
	if string(got) != msg {
		t.Fatalf("read %q, wrote %q", got, msg)
	}
}
