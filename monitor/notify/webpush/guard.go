package webpush

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// A subscription's endpoint comes from a browser: network input. Posting to it blindly would let
// whoever can register a subscription make the monitor send requests into its own network
// (server-side request forgery): to the InfluxDB on localhost, a router's admin page, a cloud
// metadata service. The guard below bounds what an endpoint may be, and where the monitor may
// connect for it.

// MaxEndpoint bounds an endpoint URL's length. The push services' URLs are some 200 to 500
// characters (FCM's are the longest seen).
const MaxEndpoint = 1024

// DefaultHosts are the push services of the browsers that install the dashboard: Chrome and
// Edge on Android and desktop (FCM), Firefox (Mozilla autopush), Edge's legacy WNS and Safari
// (Apple). An endpoint's host must be one of them or end with "." and one of them.
var DefaultHosts = []string{
	"fcm.googleapis.com",
	"updates.push.services.mozilla.com",
	"notify.windows.com",
	"push.apple.com",
}

// ErrBadSubscription marks a subscription refused for its content (a malformed endpoint or
// key) by those who check it before storing it (the dashboard's subscriptions).
var ErrBadSubscription = errors.New("bad push subscription")

// ErrRefusedEndpoint marks an endpoint the guard refuses; a refused endpoint is a permanent
// failure.
var ErrRefusedEndpoint = errors.New("push endpoint refused")

// Policy is where Web Push requests may go. The zero Policy is the strict production one:
// DefaultHosts, public addresses only.
type Policy struct {
	// Hosts are the allowed host suffixes (see DefaultHosts, the default when nil); "*" allows
	// any host (for a self-hosted push service; the address checks still apply).
	Hosts []string
	// Allow are addresses allowed although in a refused range; tests put 127.0.0.0/8 here for
	// their local push service. Never set it in production.
	Allow []netip.Prefix

	// lookup resolves a host name; net.DefaultResolver when nil. Tests replace it to play a
	// DNS answer that points a public-looking name at a private address.
	lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// CheckEndpoint checks an endpoint URL before any connection: https, a host, no user
// information, at most MaxEndpoint characters, an allowed host, and when the host is an
// address literal, an allowed address. The address a name resolves to is checked when the
// connection is made (Dialer).
func (p Policy) CheckEndpoint(endpoint string) error {
	if len(endpoint) > MaxEndpoint {
		return fmt.Errorf("%w: longer than %d characters", ErrRefusedEndpoint, MaxEndpoint)
	}
	u, err := url.Parse(endpoint)
	if err != nil {
		return fmt.Errorf("%w: %v", ErrRefusedEndpoint, err)
	}
	switch {
	case u.Scheme != "https":
		return fmt.Errorf("%w: %q is not https", ErrRefusedEndpoint, u.Scheme)
	case u.User != nil:
		return fmt.Errorf("%w: user information in the URL", ErrRefusedEndpoint)
	case u.Hostname() == "":
		return fmt.Errorf("%w: no host", ErrRefusedEndpoint)
	}
	host := strings.ToLower(strings.TrimSuffix(u.Hostname(), "."))
	if !p.hostAllowed(host) {
		return fmt.Errorf("%w: host %s is not a known push service", ErrRefusedEndpoint, host)
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if err := p.checkAddr(a); err != nil {
			return err
		}
	}
	return nil
}

func (p Policy) hostAllowed(host string) bool {
	hosts := p.Hosts
	if hosts == nil {
		hosts = DefaultHosts
	}
	for _, h := range hosts {
		h = strings.ToLower(strings.TrimPrefix(strings.TrimSpace(h), "*."))
		if h == "*" || host == h || strings.HasSuffix(host, "."+h) {
			return true
		}
	}
	return false
}

// checkAddr refuses the addresses that are not the public Internet: loopback, private (RFC 1918,
// RFC 4193), link-local (cloud metadata services live there), CGNAT (RFC 6598), multicast,
// unspecified, reserved; an IPv4 address inside IPv6 (mapped, NAT64 64:ff9b::/96, 6to4
// 2002::/16) is judged as the IPv4 address it reaches.
func (p Policy) checkAddr(a netip.Addr) error {
	a = a.Unmap()
	if a.Is6() {
		b := a.As16()
		switch {
		case nat64.Contains(a):
			a = netip.AddrFrom4([4]byte(b[12:16]))
		case sixToFour.Contains(a):
			a = netip.AddrFrom4([4]byte(b[2:6]))
		}
	}
	for _, pre := range p.Allow {
		if pre.Contains(a) {
			return nil
		}
	}
	var why string
	switch {
	case !a.IsValid():
		why = "invalid"
	case a.IsUnspecified():
		why = "unspecified"
	case a.IsLoopback():
		why = "loopback"
	case a.IsPrivate():
		why = "private"
	case a.IsMulticast():
		why = "multicast"
	case a.IsLinkLocalUnicast():
		why = "link-local"
	case cgnat.Contains(a):
		why = "shared (CGNAT)"
	case a.Is4() && a.As4()[0] == 0, a.Is4() && a.As4()[0] >= 240:
		why = "reserved"
	default:
		return nil
	}
	return fmt.Errorf("%w: address %s is %s", ErrRefusedEndpoint, a, why)
}

var (
	cgnat     = netip.MustParsePrefix("100.64.0.0/10")
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// control is the dialer's Control hook: it runs with the address the socket is about to connect
// to — after name resolution, so that a name that resolves (or re-resolves, DNS rebinding) to a
// refused address is refused all the same.
func (p Policy) control(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: dial address %q: %v", ErrRefusedEndpoint, address, err)
	}
	return p.checkAddr(ap.Addr())
}

// dialContext resolves the host (through lookup when set) and dials its addresses in turn,
// each checked by control.
func (p Policy) dialContext(d *net.Dialer) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		if p.lookup == nil {
			return d.DialContext(ctx, network, addr)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, err
		}
		addrs, err := p.lookup(ctx, host)
		if err != nil {
			return nil, err
		}
		var errs []error
		for _, a := range addrs {
			c, err := d.DialContext(ctx, network, net.JoinHostPort(a.String(), port))
			if err == nil {
				return c, nil
			}
			errs = append(errs, err)
		}
		if len(errs) == 0 {
			return nil, fmt.Errorf("lookup %s: no address", host)
		}
		return nil, errors.Join(errs...)
	}
}

// Client is an HTTP client that connects only where p allows: every connection's address is
// checked after resolution, no proxy (a proxy would connect for us, unchecked), redirects not
// followed (a push service answers 201, not 3xx; a redirect would lead elsewhere unchecked), a
// 30 s timeout. tlsConf is the TLS configuration (nil: the system's roots).
func (p Policy) Client(tlsConf *tls.Config) *http.Client {
	d := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second, Control: p.control}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           p.dialContext(d),
		TLSClientConfig:       tlsConf,
		ForceAttemptHTTP2:     true,
		MaxIdleConns:          10,
		IdleConnTimeout:       90 * time.Second,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: 20 * time.Second,
	}
	return &http.Client{
		Transport: tr,
		Timeout:   30 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
