package sim

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/creack/pty"
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

// Close closes both sides.
func (p *PTY) Close() error {
	p.slave.Close()
	return p.Master.Close()
}
