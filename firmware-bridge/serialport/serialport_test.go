package serialport

import (
	"bytes"
	"io"
	"os"
	"testing"

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
