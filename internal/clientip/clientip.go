// Package clientip finds the network address of an HTTP client, behind reverse proxies that the
// operator trusts (TRENZINHO_TRUSTED_PROXIES) and only behind those.
//
// X-Forwarded-For is written by whoever sends the request: a client can put any address in it.
// It is read only when the connection's peer is a trusted proxy, and then from the right: each
// trusted proxy appends the address it received the request from, so the rightmost address
// that is not itself a trusted proxy is the client as the outermost trusted proxy saw it.
// Addresses further left were written by the client and are ignored.
package clientip

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"strings"
)

// Trusted is a set of trusted proxy addresses. The zero value and nil trust nobody.
type Trusted struct {
	prefixes []netip.Prefix
}

// Parse reads a list of IP addresses and CIDR prefixes separated by commas or spaces
// ("172.30.0.1, 10.0.0.0/8"); an empty list trusts nobody.
func Parse(list string) (*Trusted, error) {
	t := &Trusted{}
	for f := range strings.FieldsFuncSeq(list, func(r rune) bool { return r == ',' || r == ' ' || r == '\t' || r == '\n' }) {
		if strings.Contains(f, "/") {
			p, err := netip.ParsePrefix(f)
			if err != nil {
				return nil, fmt.Errorf("trusted proxies: %q: %w", f, err)
			}
			if p.Addr().Is4In6() {
				p = netip.PrefixFrom(p.Addr().Unmap(), max(p.Bits()-96, 0))
			}
			t.prefixes = append(t.prefixes, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(f)
		if err != nil {
			return nil, fmt.Errorf("trusted proxies: %q: %w", f, err)
		}
		a = a.Unmap().WithZone("")
		t.prefixes = append(t.prefixes, netip.PrefixFrom(a, a.BitLen()))
	}
	return t, nil
}

// Len is the number of addresses and prefixes in t.
func (t *Trusted) Len() int {
	if t == nil {
		return 0
	}
	return len(t.prefixes)
}

// String lists t as Parse reads it.
func (t *Trusted) String() string {
	if t == nil {
		return ""
	}
	s := make([]string, len(t.prefixes))
	for i, p := range t.prefixes {
		if p.IsSingleIP() {
			s[i] = p.Addr().String()
		} else {
			s[i] = p.String()
		}
	}
	return strings.Join(s, ",")
}

// Contains reports whether a is a trusted proxy.
func (t *Trusted) Contains(a netip.Addr) bool {
	if t == nil || !a.IsValid() {
		return false
	}
	a = a.Unmap().WithZone("")
	for _, p := range t.prefixes {
		if p.Contains(a) {
			return true
		}
	}
	return false
}

// PeerAddr is the address of a connection's remote end given as "host:port" (as in
// http.Request.RemoteAddr and net.Conn.RemoteAddr().String()); the zero Addr if it is not an IP.
func PeerAddr(hostport string) netip.Addr {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return netip.Addr{}
	}
	return a.Unmap().WithZone("")
}

// Of is the client address of r: its peer's address, or, when the peer is a trusted proxy, the
// rightmost address of X-Forwarded-For that is not a trusted proxy. When every forwarded
// address is a trusted proxy the leftmost one is the client; when the entry that should name
// the client is not an address (no trusted proxy writes that), the last trusted hop is.
func (t *Trusted) Of(r *http.Request) string {
	peer := PeerAddr(r.RemoteAddr)
	if !peer.IsValid() {
		return r.RemoteAddr
	}
	if !t.Contains(peer) {
		return peer.String()
	}
	client := peer
	hops := r.Header.Values("X-Forwarded-For")
	for i := len(hops) - 1; i >= 0; i-- {
		fields := strings.Split(hops[i], ",")
		for j := len(fields) - 1; j >= 0; j-- {
			a, ok := parseHop(fields[j])
			if !ok {
				return client.String()
			}
			client = a
			if !t.Contains(a) {
				return a.String()
			}
		}
	}
	return client.String()
}

// parseHop reads one X-Forwarded-For entry: an address, possibly with a port.
func parseHop(s string) (netip.Addr, bool) {
	s = strings.TrimSpace(s)
	if a, err := netip.ParseAddr(s); err == nil {
		return a.Unmap().WithZone(""), true
	}
	if ap, err := netip.ParseAddrPort(s); err == nil {
		return ap.Addr().Unmap().WithZone(""), true
	}
	return netip.Addr{}, false
}
