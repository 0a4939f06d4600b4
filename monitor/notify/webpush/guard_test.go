package webpush

import (
	"context"
	"crypto/ecdh"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/trenzinho/trenzinho/monitor/notify"
)

// subscriptionTo is a well-formed subscription (fresh keys) to endpoint.
func subscriptionTo(t *testing.T, endpoint string) string {
	t.Helper()
	ua, err := ecdh.P256().GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	auth := make([]byte, 16)
	rand.Read(auth)
	b, _ := json.Marshal(map[string]any{"endpoint": endpoint, "keys": map[string]string{
		"p256dh": base64.RawURLEncoding.EncodeToString(ua.PublicKey().Bytes()),
		"auth":   base64.RawURLEncoding.EncodeToString(auth)}})
	return string(b)
}

// countingListener is a TCP listener on loopback that counts the connections it accepts (and
// closes them): the proof that a refused endpoint made no connection.
type countingListener struct {
	net.Listener
	n atomic.Int64
}

func listenCounting(t *testing.T) *countingListener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	c := &countingListener{Listener: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.n.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return c
}

func (c *countingListener) port() string {
	return strconv.Itoa(c.Addr().(*net.TCPAddr).Port)
}

// refused checks that err is a permanent refusal by the guard whose message says why.
func refused(t *testing.T, what string, err error, why string) {
	t.Helper()
	if err == nil {
		t.Errorf("%s: sent", what)
		return
	}
	if tr, _ := notify.Classify(err); tr {
		t.Errorf("%s: refusal is transient: %v", what, err)
	}
	if !strings.Contains(err.Error(), why) {
		t.Errorf("%s: error %q does not say %q", what, err, why)
	}
}

// TestGuardRefusesInternalAddresses: endpoints at addresses that are not the public Internet
// are refused, with a permanent error that says why, and the local listener behind the
// loopback ones gets no connection.
func TestGuardRefusesInternalAddresses(t *testing.T) {
	ln := listenCounting(t)
	keys, _ := GenerateKeys()
	// Any host name allowed: only the address checks are under test here.
	s := &Sender{Keys: keys, Subject: "mailto:f@piuma.example", Policy: Policy{Hosts: []string{"*"}}}
	ctx := context.Background()
	m := notify.Message{Subject: "x", Text: "y"}
	for _, c := range []struct{ host, why string }{
		{"127.0.0.1:" + ln.port(), "loopback"},
		{"127.9.9.9:" + ln.port(), "loopback"},
		{"[::1]:" + ln.port(), "loopback"},
		{"[::ffff:127.0.0.1]:" + ln.port(), "loopback"},
		{"0.0.0.0:" + ln.port(), "unspecified"},
		{"[::]:" + ln.port(), "unspecified"},
		{"10.1.2.3", "private"},
		{"172.16.0.1", "private"},
		{"192.168.0.1", "private"},
		{"[fd12:3456::1]", "private"},
		{"169.254.169.254", "link-local"},
		{"[fe80::1]", "link-local"},
		{"100.64.0.1", "CGNAT"},
		{"224.0.0.251", "multicast"},
		{"[ff02::1]", "multicast"},
		{"239.1.1.1", "multicast"},
		{"240.0.0.1", "reserved"},
		{"[64:ff9b::a00:1]", "private"},       // NAT64 of 10.0.0.1
		{"[2002:a9fe:a9fe::1]", "link-local"}, // 6to4 of 169.254.169.254
	} {
		err := s.Send(ctx, subscriptionTo(t, "https://"+c.host+"/push/x"), m)
		refused(t, c.host, err, c.why)
		if !errors.Is(err, ErrRefusedEndpoint) {
			t.Errorf("%s: %v is not ErrRefusedEndpoint", c.host, err)
		}
	}
	if n := ln.n.Load(); n != 0 {
		t.Errorf("the loopback listener got %d connections", n)
	}
}

// TestGuardRefusesAfterResolution: a name that is a push service's resolves (a DNS answer the
// test plays, as a poisoned or rebinding resolver would) to 127.0.0.1; the dialer's check
// refuses the address and the listener gets no connection. The same dial with loopback allowed
// does reach the listener: the refusal is the guard's, not a failure of the test's plumbing.
func TestGuardRefusesAfterResolution(t *testing.T) {
	ln := listenCounting(t)
	keys, _ := GenerateKeys()
	var lookups atomic.Int64
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		lookups.Add(1)
		if host != "fcm.googleapis.com" {
			return nil, errors.New("unexpected lookup of " + host)
		}
		return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
	}
	endpoint := "https://fcm.googleapis.com:" + ln.port() + "/fcm/send/abc"
	m := notify.Message{Subject: "x", Text: "y"}
	ctx := context.Background()

	strict := &Sender{Keys: keys, Subject: "mailto:f@piuma.example", Policy: Policy{lookup: lookup}}
	err := strict.Send(ctx, subscriptionTo(t, endpoint), m)
	refused(t, "fcm.googleapis.com → 127.0.0.1", err, "address 127.0.0.1 is loopback")
	if lookups.Load() == 0 {
		t.Fatal("the test's resolver was not used")
	}
	if n := ln.n.Load(); n != 0 {
		t.Fatalf("the loopback listener got %d connections", n)
	}

	open := &Sender{Keys: keys, Subject: "mailto:f@piuma.example",
		Policy: Policy{lookup: lookup, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	if err := open.Send(ctx, subscriptionTo(t, endpoint), m); err == nil {
		t.Fatal("a TLS handshake with a listener that closes succeeded")
	}
	if n := ln.n.Load(); n != 1 {
		t.Fatalf("with loopback allowed the listener got %d connections, want 1", n)
	}
}

// TestGuardRefusesURLs: what CheckEndpoint refuses before any connection.
func TestGuardRefusesURLs(t *testing.T) {
	ln := listenCounting(t)
	keys, _ := GenerateKeys()
	s := &Sender{Keys: keys, Subject: "mailto:f@piuma.example", Policy: Policy{
		Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}, // only the host rules are under test
		lookup: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}}}
	ctx := context.Background()
	m := notify.Message{Subject: "x", Text: "y"}
	long := "https://fcm.googleapis.com/fcm/send/" + strings.Repeat("a", MaxEndpoint)
	for _, c := range []struct{ endpoint, why string }{
		{"http://fcm.googleapis.com:" + ln.port() + "/x", "https"},
		{"https://user:pw@fcm.googleapis.com:" + ln.port() + "/x", "user information"},
		{long, "longer than"},
		{"https://evil.example:" + ln.port() + "/x", "not a known push service"},
		{"https://fcm.googleapis.com.evil.example:" + ln.port() + "/x", "not a known push service"},
		{"https://xpush.apple.com:" + ln.port() + "/x", "not a known push service"},
		{"https://127.0.0.1:" + ln.port() + "/x", "not a known push service"},
	} {
		refused(t, c.endpoint, s.Send(ctx, subscriptionTo(t, c.endpoint), m), c.why)
	}
	if n := ln.n.Load(); n != 0 {
		t.Errorf("the listener got %d connections", n)
	}

	// The default hosts and their subdomains pass the host check.
	var p Policy
	for _, ok := range []string{"https://fcm.googleapis.com/fcm/send/a", "https://updates.push.services.mozilla.com/wpush/v2/a",
		"https://db5p.notify.windows.com/w/?token=a", "https://web.push.apple.com/a", "https://FCM.googleapis.com./a"} {
		if err := p.CheckEndpoint(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	// A configured list replaces the defaults.
	own := Policy{Hosts: []string{"*.push.piuma.example"}}
	if own.CheckEndpoint("https://a.push.piuma.example/x") != nil || own.CheckEndpoint("https://fcm.googleapis.com/x") == nil {
		t.Error("configured hosts not applied")
	}
}

// FuzzCheckEndpoint: whatever an accepted endpoint is, it is https, without user information,
// within MaxEndpoint, and its host is a default push service or one of its subdomains.
func FuzzCheckEndpoint(f *testing.F) {
	for _, s := range []string{"https://fcm.googleapis.com/fcm/send/abc", "https://web.push.apple.com:443/x",
		"https://u@fcm.googleapis.com/", "https://[::1]/", "https://fcm.googleapis.com.evil/", "https://FCM.GOOGLEAPIS.COM./a",
		"https://%66cm.googleapis.com/", "https://fcm.googleapis.com\\@evil/"} {
		f.Add(s)
	}
	var p Policy
	f.Fuzz(func(t *testing.T, s string) {
		if p.CheckEndpoint(s) != nil {
			return
		}
		u, err := url.Parse(s)
		if err != nil || u.Scheme != "https" || u.User != nil || len(s) > MaxEndpoint {
			t.Fatalf("accepted %q", s)
		}
		host := strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
		if !slices.ContainsFunc(DefaultHosts, func(h string) bool { return host == h || strings.HasSuffix(host, "."+h) }) {
			t.Fatalf("accepted %q: host %q", s, host)
		}
	})
}

// TestGuardDoesNotFollowRedirects: a push service that answers with a redirect to an internal
// address does not lead the monitor there; the answer is a permanent failure.
func TestGuardDoesNotFollowRedirects(t *testing.T) {
	var inner atomic.Int64
	target := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.Add(1)
		w.WriteHeader(http.StatusCreated)
	}))
	defer target.Close()
	redirector := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/admin", http.StatusTemporaryRedirect)
	}))
	defer redirector.Close()
	keys, _ := GenerateKeys()
	s := &Sender{Keys: keys, Subject: "mailto:f@piuma.example", TLS: redirector.Client().Transport.(*http.Transport).TLSClientConfig,
		Policy: Policy{Hosts: []string{"127.0.0.1"}, Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	err := s.Send(context.Background(), subscriptionTo(t, redirector.URL+"/push/x"), notify.Message{Subject: "x"})
	refused(t, "redirect", err, "307")
	if n := inner.Load(); n != 0 {
		t.Errorf("the redirect was followed: %d requests", n)
	}
}
