package sim

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/creack/pty"
	"golang.org/x/sys/unix"
)

// PTY is a pseudo-terminal pair: the simulator writes on Master, the bridge opens Path (the
// slave side) as it would open /dev/ttyUSB0.
type PTY struct {
	Master *os.File
	slave  *os.File
	Path   string // the slave device, or the symlink to it
}

// OpenPTY opens a pseudo-terminal in raw mode. When link is not empty, a symlink with that name
// points to the slave device (stable names for configuration, like udev's).
func OpenPTY(link string) (*PTY, error) {
	m, s, err := pty.Open()
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrNoPTY, err)
	}
	// Raw mode on the slave: no echo, no CR/LF translation, bytes pass as they are.
	if err := makeRaw(s); err != nil {
		m.Close()
		s.Close()
		return nil, err
	}
	p := &PTY{Master: m, slave: s, Path: s.Name()}
	if link != "" {
		_ = os.Remove(link)
		if err := os.MkdirAll(filepath.Dir(link), 0o755); err != nil {
			p.Close()
			return nil, err
		}
		if err := os.Symlink(s.Name(), link); err != nil {
			p.Close()
			return nil, fmt.Errorf("sim: link %s: %w", link, err)
		}
		p.Path = link
	}
	return p, nil
}

// WaitReader gives up the simulator's own hold on the slave side and waits until another
// process (the bridge) has opened it, or until ctx ends. Bytes written before a reader opens a
// real serial port are lost or read late in one burst; a test that counts what the bridge
// timed by its own clock starts playing only once the bridge listens.
//
// Linux reports POLLHUP on a pseudo-terminal's master while no process holds its slave open.
func (p *PTY) WaitReader(ctx context.Context) error {
	if p.slave != nil {
		p.slave.Close()
		p.slave = nil
	}
	for {
		fds := []unix.PollFd{{Fd: int32(p.Master.Fd()), Events: unix.POLLOUT}}
		if _, err := unix.Poll(fds, 0); err != nil && err != unix.EINTR {
			return fmt.Errorf("sim: poll %s: %w", p.Path, err)
		}
		if fds[0].Revents&unix.POLLHUP == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Close closes both sides.
func (p *PTY) Close() error {
	if p.slave != nil {
		p.slave.Close()
	}
	return p.Master.Close()
}
