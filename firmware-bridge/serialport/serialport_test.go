package serialport

import (
	"bytes"
	"io"
	"os"
	"testing"
	"time"

	"github.com/creack/pty"
)

// Both paths are exercised through a real pseudo-terminal: the test writes on the master side
// what a device would send, and reads it through the port opened on the slave side.
func TestOpenOverPTY(t *testing.T) {
	for _, baud := range []int{4800, 9600, 115200, 10400} {
		master, slave, err := pty.Open()
		if err != nil {
			t.Skipf("no pseudo-terminals here: %v", err)
		}
		defer master.Close()
		path := slave.Name()
		p, err := Open(Config{Path: path, Baud: baud})
		slave.Close()
		if err != nil {
			t.Fatalf("%d baud: %v", baud, err)
		}
		if f, ok := p.(*os.File); ok {
			got, err := Speed(f)
			if err != nil || got != baud {
				t.Errorf("%d baud: kernel holds %d (%v)", baud, got, err)
			}
		} else if Standard(baud) == false {
			t.Errorf("%d baud was not opened with termios2", baud)
		}
		want := []byte("UDTCO\x00\x01\x02\xff frame bytes\r\n")
		if _, err := master.Write(want); err != nil {
			t.Fatal(err)
		}
		got := make([]byte, len(want))
		if _, err := io.ReadFull(p, got); err != nil {
			t.Fatalf("%d baud: read: %v", baud, err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%d baud: read %q, want %q (raw mode must not translate bytes)", baud, got, want)
		}
		p.Close()
	}
}

func TestBadConfig(t *testing.T) {
	for _, c := range []Config{{Path: "/dev/null", Baud: 0}, {Path: "/dev/null", Baud: 9600, Parity: "X"}, {Path: "/dev/null", Baud: 9600, StopBits: 3}} {
		if p, err := Open(c); err == nil {
			p.Close()
			t.Errorf("%+v opened", c)
		}
	}
}

// TestReadTimeout: with a ReadTimeout, a read without data returns (0, nil) — not io.EOF, which
// the kernel and os.File report for a timeout and for a vanished device alike — and a device
// that goes away (the pseudo-terminal's master closed, as a USB adapter unplugged) ends reads
// with an error.
func TestReadTimeout(t *testing.T) {
	for _, baud := range []int{9600, 10400} {
		master, slave, err := pty.Open()
		if err != nil {
			t.Skipf("no pseudo-terminals here: %v", err)
		}
		p, err := Open(Config{Path: slave.Name(), Baud: baud, ReadTimeout: 200 * time.Millisecond})
		slave.Close()
		if err != nil {
			t.Fatalf("%d baud: %v", baud, err)
		}
		buf := make([]byte, 16)
		if n, err := p.Read(buf); n != 0 || err != nil {
			t.Errorf("%d baud: read without data = %d, %v; want 0, nil", baud, n, err)
		}
		master.Write([]byte("ok"))
		if n, err := p.Read(buf); string(buf[:n]) != "ok" || err != nil {
			t.Errorf("%d baud: read = %q, %v; want \"ok\", nil", baud, buf[:n], err)
		}
		master.Close()
		// A hung-up terminal answers at once; allow a few reads in case one was slow to return.
		var rerr error
		for i := 0; i < 5 && rerr == nil; i++ {
			_, rerr = p.Read(buf)
		}
		if rerr == nil {
			t.Errorf("%d baud: reads after the device went away keep returning (0, nil)", baud)
		}
		p.Close()
	}
}
