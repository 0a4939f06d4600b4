package connlimit

import (
	"net/netip"
	"testing"
)

// IPv4 clients are counted per address, IPv6 clients per /64.
func TestKey(t *testing.T) {
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"192.0.2.1", "192.0.2.1", true},
		{"192.0.2.1", "192.0.2.2", false},
		{"2001:db8:1:2::1", "2001:db8:1:2:ffff::9", true},
		{"2001:db8:1:2::1", "2001:db8:1:3::1", false},
	} {
		if got := key(netip.MustParseAddr(c.a)) == key(netip.MustParseAddr(c.b)); got != c.same {
			t.Errorf("%s and %s counted together: %v, want %v", c.a, c.b, got, c.same)
		}
	}
}
