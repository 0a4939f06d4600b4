package main

// The HTTP server's limits (docs/operations.md, "HTTP limits"), through the monitor's real
// server, listener and API on real sockets.

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/connlimit"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/store"
)

const testAdminPassword = "admin-senha-forte"

type httpFixture struct {
	addr string
	lim  *connlimit.Listener
	hub  *api.Hub
}

// startHTTP serves the API as serve does, with c's limits, on a loopback port.
func startHTTP(t *testing.T, c httpConfig) *httpFixture {
	t.Helper()
	if c.maxStreamsPerUser == 0 {
		c.maxStreamsPerUser = api.DefaultMaxStreamsPerUser
	}
	if c.maxConnsPerAddr == 0 {
		c.maxConnsPerAddr = defaultMaxConnsPerAddr
	}
	if c.readTimeout == 0 {
		c.readTimeout = defaultReadTimeout
	}
	if err := c.check(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := db.EnsureAdmin(ctx, "admin", testAdminPassword); err != nil {
		t.Fatal(err)
	}
	srv := api.New(api.Config{Users: db, Audit: db, Episodes: db, Health: db.Ping, TrustedProxies: c.trusted,
		Hub: api.NewHub(api.HubConfig{MaxStreamsPerUser: c.maxStreamsPerUser})})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	hs := newHTTPServer(srv.Handler(), c)
	lim := limitListener(ln, c, nil)
	done := make(chan struct{})
	go func() { defer close(done); hs.Serve(lim) }()
	t.Cleanup(func() {
		srv.Hub().Close()
		hs.Close()
		<-done
	})
	return &httpFixture{addr: ln.Addr().String(), lim: lim, hub: srv.Hub()}
}

// dialFrom opens a TCP connection to f from the local address from ("" for any).
func (f *httpFixture) dialFrom(t *testing.T, from string) net.Conn {
	t.Helper()
	d := net.Dialer{Timeout: 5 * time.Second}
	if from != "" {
		d.LocalAddr = &net.TCPAddr{IP: net.ParseIP(from)}
	}
	c, err := d.Dial("tcp", f.addr)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// healthz sends GET /healthz on c and returns the status line, or "" if the server closed the
// connection without an answer.
func healthz(t *testing.T, c net.Conn) string {
	t.Helper()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: monitor\r\n\r\n"); err != nil {
		return ""
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("no answer and no close within 10 s")
		}
		return ""
	}
	return strings.TrimSpace(line)
}

// TestTricklingBodiesAreCut: 50 clients that send a login body one byte every 100 ms are cut
// off within the read timeout (1 s here; at most 10 s allowed for this shared machine), their
// connections closed by the server — not held for as long as they keep trickling.
func TestTricklingBodiesAreCut(t *testing.T) {
	const readTimeout = time.Second
	f := startHTTP(t, httpConfig{readTimeout: readTimeout})
	const n = 50
	start := time.Now()
	cut := make(chan time.Duration, n)
	stop := make(chan struct{})
	defer close(stop)
	for range n {
		c := f.dialFrom(t, "")
		defer c.Close()
		head := "POST /api/v1/login HTTP/1.1\r\nHost: monitor\r\nContent-Type: application/json\r\nContent-Length: 60000\r\n\r\n{"
		if _, err := io.WriteString(c, head); err != nil {
			t.Fatal(err)
		}
		go func() { // trickle until the server or the test ends it
			tick := time.NewTicker(100 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stop:
					return
				case <-tick.C:
					if _, err := c.Write([]byte(" ")); err != nil {
						return
					}
				}
			}
		}()
		go func() { // the server's answer, if any, then its close
			c.SetReadDeadline(time.Now().Add(30 * time.Second))
			_, err := io.Copy(io.Discard, c)
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				cut <- -1
				return
			}
			cut <- time.Since(start)
		}()
	}
	var slowest time.Duration
	for i := range n {
		d := <-cut
		if d < 0 {
			t.Fatalf("connection %d: still open after 30 s of trickling", i)
		}
		slowest = max(slowest, d)
	}
	t.Logf("50 trickling bodies cut; the last after %v (read timeout %v)", slowest.Round(time.Millisecond), readTimeout)
	if slowest > 10*readTimeout {
		t.Errorf("the last trickling body was cut after %v, want within the read timeout (%v; 10× allowed)", slowest, readTimeout)
	}
	// The server still answers.
	c := f.dialFrom(t, "")
	defer c.Close()
	if got := healthz(t, c); got != "HTTP/1.1 200 OK" {
		t.Errorf("healthz after the trickle: %q", got)
	}
}

// TestStreamOutlivesReadTimeout: the live stream lifts the read timeout for itself: an event
// published three read timeouts after it opened still arrives.
func TestStreamOutlivesReadTimeout(t *testing.T) {
	const readTimeout = 500 * time.Millisecond
	f := startHTTP(t, httpConfig{readTimeout: readTimeout})
	resp, err := http.Post("http://"+f.addr+"/api/v1/login", "application/json", strings.NewReader(`{"user":"admin","password":"`+testAdminPassword+`"}`))
	if err != nil {
		t.Fatal(err)
	}
	var login struct{ Token string }
	json.NewDecoder(resp.Body).Decode(&login)
	resp.Body.Close()
	if login.Token == "" {
		t.Fatalf("login: %d", resp.StatusCode)
	}
	req, _ := http.NewRequest("GET", "http://"+f.addr+"/api/v1/stream", nil)
	req.Header.Set("Authorization", "Bearer "+login.Token)
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("stream: %d", resp.StatusCode)
	}
	rd := bufio.NewReader(resp.Body)
	time.Sleep(3 * readTimeout)
	f.hub.Publish(api.EventDraft, map[string]string{"id": "D-1"})
	got := make(chan string, 1)
	go func() {
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				got <- "error: " + err.Error()
				return
			}
			if strings.HasPrefix(line, "data: ") {
				got <- strings.TrimSpace(line)
				return
			}
		}
	}()
	select {
	case line := <-got:
		if line != `data: {"id":"D-1"}` {
			t.Errorf("after 3 read timeouts the stream gave %q, want the event", line)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event")
	}
}

// TestConnectionCapPerAddress: one address holds at most 256 connections: the 257th is closed
// unanswered, while another address is served; a closed connection gives its place back; a
// trusted proxy is never capped.
func TestConnectionCapPerAddress(t *testing.T) {
	f := startHTTP(t, httpConfig{})
	local := netip.MustParseAddr("127.0.0.1")
	var held []net.Conn
	defer func() {
		for _, c := range held {
			c.Close()
		}
	}()
	for range defaultMaxConnsPerAddr {
		held = append(held, f.dialFrom(t, "127.0.0.1"))
	}
	waitFor(t, "256 connections counted", func() bool { return f.lim.Open(local) == defaultMaxConnsPerAddr })

	extra := f.dialFrom(t, "127.0.0.1")
	defer extra.Close()
	if got := healthz(t, extra); got != "" {
		t.Errorf("the 257th connection from one address was answered: %q", got)
	}
	if f.lim.Refused() != 1 {
		t.Errorf("refused %d connections, want 1", f.lim.Refused())
	}
	other := f.dialFrom(t, "127.0.0.2")
	defer other.Close()
	if got := healthz(t, other); got != "HTTP/1.1 200 OK" {
		t.Errorf("another address while the first is at its cap: %q, want 200", got)
	}
	// The held connections are served too: they are open, not just counted.
	if got := healthz(t, held[0]); got != "HTTP/1.1 200 OK" {
		t.Errorf("a held connection: %q, want 200", got)
	}
	held[1].Close()
	waitFor(t, "a closed connection released", func() bool { return f.lim.Open(local) == defaultMaxConnsPerAddr-1 })
	again := f.dialFrom(t, "127.0.0.1")
	defer again.Close()
	if got := healthz(t, again); got != "HTTP/1.1 200 OK" {
		t.Errorf("after one connection closed: %q, want 200", got)
	}

	t.Run("trusted proxy", func(t *testing.T) {
		f := startHTTP(t, httpConfig{trustedProxies: "127.0.0.1", maxConnsPerAddr: 4})
		var conns []net.Conn
		defer func() {
			for _, c := range conns {
				c.Close()
			}
		}()
		for i := range 10 {
			c := f.dialFrom(t, "127.0.0.1")
			conns = append(conns, c)
			if got := healthz(t, c); got != "HTTP/1.1 200 OK" {
				t.Fatalf("connection %d from the trusted proxy: %q, want 200", i+1, got)
			}
		}
		for i := range 5 {
			c := f.dialFrom(t, "127.0.0.3")
			conns = append(conns, c)
			got := healthz(t, c)
			if want := i < 4; (got == "HTTP/1.1 200 OK") != want {
				t.Errorf("connection %d from an untrusted address with a cap of 4: %q", i+1, got)
			}
		}
	})
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestHTTPConfigBounds(t *testing.T) {
	for _, c := range []httpConfig{
		{readTimeout: 61 * time.Second, maxStreamsPerUser: 8, maxConnsPerAddr: 256},
		{readTimeout: 0, maxStreamsPerUser: 8, maxConnsPerAddr: 256},
		{readTimeout: time.Second, maxStreamsPerUser: 0, maxConnsPerAddr: 256},
		{readTimeout: time.Second, maxStreamsPerUser: 8, maxConnsPerAddr: 0},
		{readTimeout: time.Second, maxStreamsPerUser: 8, maxConnsPerAddr: 256, trustedProxies: "caddy"},
	} {
		if err := c.check(); err == nil {
			t.Errorf("%+v accepted", c)
		}
	}
	c := httpConfig{readTimeout: 60 * time.Second, maxStreamsPerUser: 1, maxConnsPerAddr: 1}
	if err := c.check(); err != nil {
		t.Error(err)
	}
	if hs := newHTTPServer(http.NotFoundHandler(), c); hs.ReadTimeout != 60*time.Second || hs.ReadHeaderTimeout != 10*time.Second || hs.MaxHeaderBytes != maxHeaderBytes {
		t.Errorf("server limits %v %v %v", hs.ReadTimeout, hs.ReadHeaderTimeout, hs.MaxHeaderBytes)
	}
}

// TestServeHTTPLimits: the limits as `monitor serve` reads and applies them, through the whole
// program (no broker reachable: the API serves anyway): the trusted proxy's X-Forwarded-For
// names the client for the login throttle, the per-address connection cap spares the trusted
// proxy, the read timeout cuts a trickling body, and the streams per user are bounded.
func TestServeHTTPLimits(t *testing.T) {
	addr := fmt.Sprintf("127.0.0.1:%d", testenv.FreePort(t))
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cmdServe(ctx, []string{
			"--mqtt-url", fmt.Sprintf("tcp://127.0.0.1:%d", testenv.FreePort(t)), // nobody listens
			"--db", filepath.Join(dir, "monitor.db"), "--listen", addr,
			"--admin-user", "admin", "--admin-password", testAdminPassword, "--log-level", "error",
			"--trusted-proxies", "127.0.0.1", "--http-read-timeout", "1s",
			"--http-max-conns-per-addr", "4", "--max-streams-per-user", "2",
		})
	}()
	defer func() {
		cancel()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("serve: %v", err)
			}
		case <-time.After(30 * time.Second):
			t.Error("serve did not stop")
		}
	}()
	if err := testenv.WaitTCP(addr, 30*time.Second); err != nil {
		t.Fatal(err)
	}
	f := &httpFixture{addr: addr}
	base := "http://" + addr

	login := func(xff, user, password string) (int, string) {
		req, _ := http.NewRequest("POST", base+"/api/v1/login", strings.NewReader(`{"user":"`+user+`","password":"`+password+`"}`))
		req.Header.Set("X-Forwarded-For", xff)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var out struct{ Token string }
		json.NewDecoder(resp.Body).Decode(&out)
		return resp.StatusCode, out.Token
	}
	// Ten failures of one forwarded client lock out that client, not the next one.
	for i := range 10 {
		if code, _ := login("203.0.113.1", fmt.Sprint("fantasma-", i), "errada"); code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i+1, code)
		}
	}
	if code, _ := login("203.0.113.1", "admin", testAdminPassword); code != http.StatusTooManyRequests {
		t.Errorf("the failing client after 10 failures: %d, want 429", code)
	}
	code, token := login("203.0.113.2", "admin", testAdminPassword)
	if code != http.StatusOK {
		t.Fatalf("another client behind the proxy: %d, want 200", code)
	}

	// Two streams per user, then 429.
	for i := range 3 {
		req, _ := http.NewRequest("GET", base+"/api/v1/stream", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if want := map[bool]int{true: http.StatusOK, false: http.StatusTooManyRequests}[i < 2]; resp.StatusCode != want {
			t.Errorf("stream %d of a user with max 2: %d, want %d", i+1, resp.StatusCode, want)
		}
	}

	// The cap spares the trusted proxy (127.0.0.1) and holds an untrusted address (127.0.0.2).
	var conns []net.Conn
	defer func() {
		for _, c := range conns {
			c.Close()
		}
	}()
	for i := range 6 {
		c := f.dialFrom(t, "127.0.0.1")
		conns = append(conns, c)
		if got := healthz(t, c); got != "HTTP/1.1 200 OK" {
			t.Errorf("connection %d from the trusted proxy: %q", i+1, got)
		}
	}
	for i := range 5 {
		c := f.dialFrom(t, "127.0.0.2")
		conns = append(conns, c)
		if got := healthz(t, c); (got == "HTTP/1.1 200 OK") != (i < 4) {
			t.Errorf("connection %d from 127.0.0.2 with a cap of 4: %q", i+1, got)
		}
	}

	// A trickling body is cut after the 1 s read timeout.
	c := f.dialFrom(t, "127.0.0.3")
	defer c.Close()
	io.WriteString(c, "POST /api/v1/login HTTP/1.1\r\nHost: m\r\nContent-Type: application/json\r\nContent-Length: 9999\r\n\r\n{")
	start := time.Now()
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				if _, err := c.Write([]byte(" ")); err != nil {
					return
				}
			}
		}
	}()
	c.SetReadDeadline(time.Now().Add(30 * time.Second))
	if _, err := io.Copy(io.Discard, c); err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatal("a trickling body held its connection for 30 s")
		}
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a trickling body cut after %v, want about 1 s", d)
	}
}

// TestHeaderLimit: request headers beyond 64 KiB are refused (431), not read on.
func TestHeaderLimit(t *testing.T) {
	f := startHTTP(t, httpConfig{})
	c := f.dialFrom(t, "")
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	go io.WriteString(c, "GET /healthz HTTP/1.1\r\nHost: m\r\nX-Big: "+strings.Repeat("a", 200<<10)+"\r\n\r\n")
	line, err := bufio.NewReader(c).ReadString('\n')
	if err != nil || !strings.HasPrefix(line, "HTTP/1.1 431") {
		t.Errorf("200 KiB of headers: %q %v, want 431", line, err)
	}
}
