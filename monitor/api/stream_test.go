package api_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/api"
)

// openStream opens GET /api/v1/stream; the test ends it by closing the body.
func (f *fixture) openStream(auth session) *http.Response {
	f.t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	f.t.Cleanup(cancel)
	req, _ := http.NewRequestWithContext(ctx, "GET", f.srv.URL+"/api/v1/stream", nil)
	if auth.cookie != nil {
		req.AddCookie(auth.cookie)
	}
	if auth.bearer != "" {
		req.Header.Set("Authorization", "Bearer "+auth.bearer)
	}
	resp, err := f.srv.Client().Do(req)
	if err != nil {
		f.t.Fatal(err)
	}
	return resp
}

type sseEvent struct{ name, data string }

// sseReader parses a Server-Sent Events stream.
type sseReader struct{ r *bufio.Reader }

// next returns the next event, or the comment block (name ":") that precedes any event.
func (s *sseReader) next() (sseEvent, error) {
	var ev sseEvent
	for {
		line, err := s.r.ReadString('\n')
		if err != nil {
			return ev, err
		}
		line = strings.TrimSuffix(line, "\n")
		switch {
		case line == "":
			if ev.name != "" || ev.data != "" {
				return ev, nil
			}
		case strings.HasPrefix(line, ":"):
			if ev.name == "" {
				ev.name = ":"
				ev.data = strings.TrimSpace(line[1:])
			}
		case strings.HasPrefix(line, "event: "):
			ev.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			ev.data += strings.TrimPrefix(line, "data: ")
		}
	}
}

// waitConnected reads up to the comment the server sends once the client is subscribed.
func (s *sseReader) waitConnected(t *testing.T) {
	t.Helper()
	for {
		ev, err := s.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev.name == ":" && ev.data == "connected" {
			return
		}
	}
}

func TestStream(t *testing.T) {
	f := newFixture(t, nil)
	cookie, _ := f.login("maria", viewerPassword)
	resp := f.openStream(session{cookie: cookie})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("stream: %d %v", resp.StatusCode, resp.Header)
	}
	rd := &sseReader{bufio.NewReader(resp.Body)}
	rd.waitConnected(t)

	f.api.Hub().Publish(api.EventEpisode, map[string]any{"id": "PIU-001.speed.x", "note": "linha 1\nlinha 2"})
	f.api.Hub().Publish(api.EventPosition, map[string]any{"vehicle": "PIU-001", "lat": -20.8367})
	for _, want := range []sseEvent{
		{api.EventEpisode, `{"id":"PIU-001.speed.x","note":"linha 1\nlinha 2"}`},
		{api.EventPosition, `{"lat":-20.8367,"vehicle":"PIU-001"}`},
	} {
		ev, err := rd.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev != want {
			t.Errorf("event %+v, want %+v", ev, want)
		}
	}
	// Positions by key arrive too, each once.
	f.api.Hub().PublishLatest(api.EventPosition, "PIU-002", map[string]any{"vehicle": "PIU-002"})
	f.api.Hub().PublishLatest(api.EventPosition, "PIU-003", map[string]any{"vehicle": "PIU-003"})
	for _, want := range []sseEvent{
		{api.EventPosition, `{"vehicle":"PIU-002"}`},
		{api.EventPosition, `{"vehicle":"PIU-003"}`},
	} {
		ev, err := rd.next()
		if err != nil {
			t.Fatal(err)
		}
		if ev != want {
			t.Errorf("event %+v, want %+v", ev, want)
		}
	}
}

// slowListener makes the server's socket buffers small, so that a client that does not read
// blocks its stream handler after a few events.
type slowListener struct{ net.Listener }

func (l slowListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(4096)
	}
	return c, err
}

func TestStreamSlowClientDoesNotBlockPublish(t *testing.T) {
	reg := prometheus.NewRegistry()
	hub := api.NewHub(api.HubConfig{Buffer: 4})
	f := newFixture(t, func(c *api.Config) { c.Hub = hub; c.Metrics = reg })
	// Serve the same handler from a server whose sockets have small buffers.
	srv := httptest.NewUnstartedServer(f.api.Handler())
	srv.Listener = slowListener{srv.Listener}
	srv.Start()
	t.Cleanup(srv.Close)
	f.srv = srv
	_, token := f.login("maria", viewerPassword)

	// The slow client subscribes, then never reads again.
	slow, err := net.Dial("tcp", srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	slow.(*net.TCPConn).SetReadBuffer(4096)
	t.Cleanup(func() { slow.Close() }) // before srv.Close, which waits for the handlers
	fmt.Fprintf(slow, "GET /api/v1/stream HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\n\r\n", token)
	sr := bufio.NewReader(slow)
	for {
		line, err := sr.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(line, ": connected") {
			break
		}
	}

	// The fast client reads every event.
	resp := f.openStream(session{bearer: token})
	defer resp.Body.Close()
	fast := &sseReader{bufio.NewReader(resp.Body)}
	fast.waitConnected(t)
	if n := hub.Clients(); n != 2 {
		t.Fatalf("%d clients, want 2", n)
	}

	// Publish, in step with the fast client, until the slow one is dropped; then a few more.
	pad := strings.Repeat("x", 16<<10)
	published, after := 0, 0
	for after < 5 {
		if published > 10000 {
			t.Fatal("the slow client was never dropped")
		}
		hub.Publish(api.EventPosition, map[string]any{"n": published, "pad": pad})
		published++
		ev, err := fast.next()
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ N int }
		if err := json.Unmarshal([]byte(ev.data), &got); err != nil || ev.name != api.EventPosition || got.N != published-1 {
			t.Fatalf("fast client got %s %.40s…, want event %d", ev.name, ev.data, published-1)
		}
		if hub.Clients() == 1 {
			after++
		}
	}
	if hub.Dropped() != 1 {
		t.Errorf("%d clients dropped, want 1", hub.Dropped())
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == "trenzinho_monitor_stream_dropped_total" && mf.GetMetric()[0].GetCounter().GetValue() != 1 {
			t.Errorf("dropped metric %v", mf)
		}
	}
	t.Logf("slow client dropped after %d events of %d KiB", published-after, len(pad)>>10)
}

// TestStreamsPerUser: one viewer opening 1,000 streams (through two sessions) holds at most
// max_streams_per_user of them; the others are refused with 429 and Connection: close, and an
// admin still gets a stream.
func TestStreamsPerUser(t *testing.T) {
	f := newFixture(t, nil)
	_, token1 := f.login("maria", viewerPassword)
	cookie2, _ := f.login("maria", viewerPassword)
	var open []*http.Response
	defer func() {
		for _, r := range open {
			r.Body.Close()
		}
	}()
	refused := 0
	for i := range 1000 {
		auth := session{bearer: token1}
		if i%2 == 1 {
			auth = session{cookie: cookie2}
		}
		resp := f.openStream(auth)
		switch resp.StatusCode {
		case http.StatusOK:
			open = append(open, resp)
			continue
		case http.StatusTooManyRequests:
			refused++
			// The client takes the "Connection: close" header out and sets Close.
			if !resp.Close {
				t.Errorf("attempt %d: 429 without Connection: close (%v)", i, resp.Header)
			}
		default:
			t.Fatalf("attempt %d: %d", i, resp.StatusCode)
		}
		resp.Body.Close()
	}
	if len(open) != api.DefaultMaxStreamsPerUser || refused != 1000-api.DefaultMaxStreamsPerUser {
		t.Errorf("%d streams open and %d refused, want %d and %d", len(open), refused, api.DefaultMaxStreamsPerUser, 1000-api.DefaultMaxStreamsPerUser)
	}
	adminCookie, _ := f.login("admin", adminPassword)
	resp := f.openStream(session{cookie: adminCookie})
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the admin's stream: %d, want 200", resp.StatusCode)
	}
	(&sseReader{bufio.NewReader(resp.Body)}).waitConnected(t)

	// A stream closed gives its place back.
	open[0].Body.Close()
	open = open[1:]
	deadline := time.Now().Add(10 * time.Second)
	for {
		r := f.openStream(session{bearer: token1})
		if r.StatusCode == http.StatusOK {
			open = append(open, r)
			break
		}
		r.Body.Close()
		if time.Now().After(deadline) {
			t.Fatal("a closed stream did not give its place back")
		}
		time.Sleep(20 * time.Millisecond)
	}
}
