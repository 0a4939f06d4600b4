// Package connlimit caps the connections a listener holds open at once from one client address,
// so that one client cannot take every connection (and file descriptor) of a server.
//
// A connection over the cap is closed as soon as it is accepted, without a word: the client
// sees its connection reset or closed. IPv4 clients are counted per address, IPv6 clients per
// /64 prefix (what one subscriber line is usually given: counting single IPv6 addresses would
// let one line open millions). Addresses that are exempt (a trusted reverse proxy, which carries
// every client's requests) are never counted.
package connlimit

import (
	"net"
	"net/netip"
	"sync"
	"sync/atomic"

	"github.com/trenzinho/trenzinho/internal/clientip"
)

// Listener is a net.Listener that refuses connections over the cap.
type Listener struct {
	net.Listener
	max    int
	exempt func(netip.Addr) bool

	mu   sync.Mutex
	open map[netip.Prefix]int

	refused atomic.Uint64
}

// New wraps l: at most perClient connections at once from one client (less than 1 means 1);
// exempt, when not nil, names addresses never counted.
func New(l net.Listener, perClient int, exempt func(netip.Addr) bool) *Listener {
	return &Listener{Listener: l, max: max(perClient, 1), exempt: exempt, open: map[netip.Prefix]int{}}
}

// key is the unit a client is counted in.
func key(a netip.Addr) netip.Prefix {
	if a.Is4() {
		return netip.PrefixFrom(a, 32)
	}
	p, _ := a.Prefix(64)
	return p
}

// Accept waits for the next connection within the cap and returns it; connections over the
// cap are closed and counted in Refused.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := l.Listener.Accept()
		if err != nil {
			return nil, err
		}
		a := clientip.PeerAddr(c.RemoteAddr().String())
		if !a.IsValid() || (l.exempt != nil && l.exempt(a)) {
			return c, nil
		}
		k := key(a)
		l.mu.Lock()
		if l.open[k] >= l.max {
			l.mu.Unlock()
			l.refused.Add(1)
			c.Close()
			continue
		}
		l.open[k]++
		l.mu.Unlock()
		return &conn{Conn: c, l: l, key: k}, nil
	}
}

// Refused is how many connections were closed for being over the cap.
func (l *Listener) Refused() uint64 { return l.refused.Load() }

// Open is how many counted connections are open from a's address (or /64).
func (l *Listener) Open(a netip.Addr) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.open[key(a.Unmap())]
}

func (l *Listener) release(k netip.Prefix) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open[k]--; l.open[k] <= 0 {
		delete(l.open, k)
	}
}

// conn gives its place back once closed.
type conn struct {
	net.Conn
	l    *Listener
	key  netip.Prefix
	once sync.Once
}

func (c *conn) Close() error {
	err := c.Conn.Close()
	c.once.Do(func() { c.l.release(c.key) })
	return err
}
