package clientip

import (
	"net/http"
	"net/netip"
	"testing"
)

func TestOf(t *testing.T) {
	trusted, err := Parse("172.30.0.1, 10.1.0.0/16 ::ffff:192.0.2.9")
	if err != nil {
		t.Fatal(err)
	}
	if got := trusted.String(); got != "172.30.0.1,10.1.0.0/16,192.0.2.9" {
		t.Errorf("String() = %q", got)
	}
	for _, c := range []struct {
		name   string
		remote string
		xff    []string
		want   string
	}{
		{"no proxy", "198.51.100.7:4000", nil, "198.51.100.7"},
		{"untrusted peer's XFF is ignored", "198.51.100.7:4000", []string{"203.0.113.1"}, "198.51.100.7"},
		{"trusted proxy", "172.30.0.1:4000", []string{"203.0.113.1"}, "203.0.113.1"},
		{"trusted proxy without XFF", "172.30.0.1:4000", nil, "172.30.0.1"},
		{"client-written entries left of the proxy's are ignored", "172.30.0.1:4000", []string{"1.2.3.4, 203.0.113.1"}, "203.0.113.1"},
		{"chain of trusted proxies", "172.30.0.1:4000", []string{"203.0.113.1, 10.1.2.3"}, "203.0.113.1"},
		{"several header lines", "172.30.0.1:4000", []string{"1.2.3.4", "203.0.113.1"}, "203.0.113.1"},
		{"all trusted", "172.30.0.1:4000", []string{"10.1.0.5, 10.1.2.3"}, "10.1.0.5"},
		{"garbage where the client should be", "172.30.0.1:4000", []string{"evil, 10.1.2.3"}, "10.1.2.3"},
		{"garbage right after the peer", "172.30.0.1:4000", []string{"not-an-ip"}, "172.30.0.1"},
		{"entry with a port", "172.30.0.1:4000", []string{"[2001:db8::1]:443"}, "2001:db8::1"},
		{"v4-mapped peer", "[::ffff:192.0.2.9]:80", []string{"203.0.113.1"}, "203.0.113.1"},
		{"IPv6 client", "[2001:db8::5]:80", nil, "2001:db8::5"},
	} {
		r := &http.Request{RemoteAddr: c.remote, Header: http.Header{}}
		for _, v := range c.xff {
			r.Header.Add("X-Forwarded-For", v)
		}
		if got := trusted.Of(r); got != c.want {
			t.Errorf("%s: Of = %q, want %q", c.name, got, c.want)
		}
	}
	var none *Trusted
	r := &http.Request{RemoteAddr: "172.30.0.1:1", Header: http.Header{"X-Forwarded-For": {"203.0.113.1"}}}
	if got := none.Of(r); got != "172.30.0.1" {
		t.Errorf("nil Trusted: %q", got)
	}
	if none.Contains(netip.MustParseAddr("172.30.0.1")) {
		t.Error("nil Trusted trusts")
	}
}

func TestParseRejects(t *testing.T) {
	for _, s := range []string{"caddy", "10.0.0.0/33", "1.2.3"} {
		if _, err := Parse(s); err == nil {
			t.Errorf("Parse(%q) accepted", s)
		}
	}
	if tr, err := Parse(""); err != nil || tr.Len() != 0 {
		t.Errorf("Parse(\"\") = %v, %v", tr, err)
	}
}

// FuzzOf: any X-Forwarded-For from a trusted proxy gives an IP address or the peer, never a
// string the client chose that is not an address.
func FuzzOf(f *testing.F) {
	for _, s := range []string{"203.0.113.1", "1.2.3.4, 10.1.2.3", "", "evil", "[::1]:80, ,", "::ffff:1.2.3.4%eth0"} {
		f.Add(s)
	}
	trusted, _ := Parse("172.30.0.1,10.1.0.0/16")
	f.Fuzz(func(t *testing.T, xff string) {
		r := &http.Request{RemoteAddr: "172.30.0.1:4000", Header: http.Header{"X-Forwarded-For": {xff}}}
		got := trusted.Of(r)
		if _, err := netip.ParseAddr(got); err != nil {
			t.Fatalf("Of = %q: not an address", got)
		}
	})
}
