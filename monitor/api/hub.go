package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Event names of the stream (docs/api.md).
const (
	EventPosition = "position"
	EventEpisode  = "episode"
	EventStatus   = "status"
	EventDraft    = "draft"
)

// HubConfig configures a Hub. Zero fields take the defaults.
type HubConfig struct {
	// Buffer is how many events may wait for one client; a client that falls further behind
	// is dropped (its browser reconnects and reloads). Default 256. Events published with
	// PublishLatest do not count: they wait one per key (see MaxKeys).
	Buffer int
	// MaxKeys bounds the keys (vehicles) whose latest event may wait for one client; a client
	// with more pending is dropped. Default 20000.
	MaxKeys int
	// MaxClients bounds the open streams; more are refused with 503. Default 1000.
	MaxClients int
	// MaxStreamsPerUser bounds the open streams of one user (all sessions and tokens
	// together); more are refused with 429, so that one account cannot take the streams of
	// everyone else (TRENZINHO_MAX_STREAMS_PER_USER). Default 8: a few tabs and devices.
	MaxStreamsPerUser int
	Logger            *slog.Logger
}

// A Hub broadcasts events to the Server-Sent Events streams. Publish never waits for a client:
// each client has a bounded buffer, and one that lets it fill is dropped.
type Hub struct {
	buffer     int
	maxKeys    int
	maxClients int
	maxPerUser int
	log        *slog.Logger

	mu      sync.Mutex
	clients map[*subscriber]struct{}
	perUser map[string]int // open streams per user
	closed  bool

	dropped atomic.Uint64
}

// A subscriber is one open stream.
type subscriber struct {
	user string
	// scope, when set, decides the events this stream gets (the licensee's portal): the
	// hub asks it with each event's name and vehicle, and sends what it returns.
	scope  *streamScope
	frames chan []byte
	// gone is closed when the hub drops the subscriber (it fell behind, or the hub closed).
	gone chan struct{}

	// The events of PublishLatest waiting to be written: only the newest per key, in the
	// order their keys first became pending. wake has a token while any wait.
	mu     sync.Mutex
	latest map[string][]byte
	order  []string
	wake   chan struct{}
}

// takeLatest removes and returns the pending latest-value frames, oldest key first.
func (s *subscriber) takeLatest() [][]byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([][]byte, 0, len(s.order))
	for _, k := range s.order {
		out = append(out, s.latest[k])
	}
	clear(s.latest)
	s.order = s.order[:0]
	return out
}

// NewHub returns a hub with no clients.
func NewHub(cfg HubConfig) *Hub {
	h := &Hub{buffer: cfg.Buffer, maxKeys: cfg.MaxKeys, maxClients: cfg.MaxClients, maxPerUser: cfg.MaxStreamsPerUser,
		log: cfg.Logger, clients: map[*subscriber]struct{}{}, perUser: map[string]int{}}
	if h.buffer <= 0 {
		h.buffer = 256
	}
	if h.maxKeys <= 0 {
		h.maxKeys = 20000
	}
	if h.maxClients <= 0 {
		h.maxClients = 1000
	}
	if h.maxPerUser <= 0 {
		h.maxPerUser = DefaultMaxStreamsPerUser
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	return h
}

// Publish sends the event with data encoded as JSON to every client. It does not block: a
// client whose buffer is full is dropped instead.
func (h *Hub) Publish(event string, data any) {
	frame, ok := h.frame(event, data)
	if !ok {
		return
	}
	sc := scoped{event: event, frame: frame}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.clients {
		frame := frame
		if s.scope != nil {
			if frame = sc.forScope(s.scope); frame == nil {
				continue
			}
		}
		select {
		case s.frames <- frame:
		default:
			h.dropLocked(s)
			h.dropped.Add(1)
			h.log.Warn("stream: client too slow, dropped", "event", event)
		}
	}
}

// PublishLatest sends the event to every client like Publish, but an event that a client has
// not yet been sent is replaced by a newer one with the same key: a client that falls behind
// gets the newest state of each key (each vehicle's position) instead of every step, and is not
// dropped for it. Events of different keys keep their order; relative to events sent with
// Publish they may arrive later.
func (h *Hub) PublishLatest(event, key string, data any) {
	frame, ok := h.frame(event, data)
	if !ok {
		return
	}
	sc := scoped{event: event, frame: frame}
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.clients {
		frame := frame
		if s.scope != nil {
			if frame = sc.forScope(s.scope); frame == nil {
				continue
			}
		}
		s.mu.Lock()
		_, pending := s.latest[key]
		full := !pending && len(s.order) >= h.maxKeys
		if !full {
			if !pending {
				s.order = append(s.order, key)
			}
			s.latest[key] = frame
		}
		s.mu.Unlock()
		if full {
			h.dropLocked(s)
			h.dropped.Add(1)
			h.log.Warn("stream: client too slow, dropped", "event", event, "keys", h.maxKeys)
			continue
		}
		select {
		case s.wake <- struct{}{}:
		default: // a wake-up is already pending
		}
	}
}

// frame encodes an event as a Server-Sent Events frame; ok is false (and it is logged) when
// the event cannot be framed or encoded.
func (h *Hub) frame(event string, data any) (frame []byte, ok bool) {
	if event == "" || strings.ContainsAny(event, "\r\n:") {
		h.log.Error("stream: invalid event name", "event", event)
		return nil, false
	}
	b, err := json.Marshal(data)
	if err != nil {
		h.log.Error("stream: cannot encode event", "event", event, "err", err)
		return nil, false
	}
	// json.Marshal escapes line breaks inside strings, so the data fits on one "data:" line.
	frame = make([]byte, 0, len(event)+len(b)+16)
	frame = append(frame, "event: "...)
	frame = append(frame, event...)
	frame = append(frame, "\ndata: "...)
	frame = append(frame, b...)
	frame = append(frame, "\n\n"...)
	return frame, true
}

// Clients is the number of open streams.
func (h *Hub) Clients() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.clients)
}

// Dropped is how many clients were dropped for falling behind.
func (h *Hub) Dropped() uint64 { return h.dropped.Load() }

// Close ends every stream and refuses new ones, so that http.Server.Shutdown does not wait for
// them.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.clients {
		h.dropLocked(s)
	}
}

// DefaultMaxStreamsPerUser is HubConfig.MaxStreamsPerUser's default.
const DefaultMaxStreamsPerUser = 8

var (
	errHubClosed   = errors.New("stream closed")
	errHubFull     = errors.New("too many streams")
	errUserStreams = errors.New("too many streams of this user")
)

// subscribe opens a stream for user. The user's own limit is checked before the hub's, so
// that a user at their limit learns that it is theirs (429), not the server's (503).
func (h *Hub) subscribe(user string) (*subscriber, error) { return h.subscribeScoped(user, nil) }

// subscribeScoped opens a stream for user that gets only the events scope admits.
func (h *Hub) subscribeScoped(user string, scope *streamScope) (*subscriber, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.closed {
		return nil, errHubClosed
	}
	if h.perUser[user] >= h.maxPerUser {
		return nil, errUserStreams
	}
	if len(h.clients) >= h.maxClients {
		return nil, errHubFull
	}
	s := &subscriber{user: user, scope: scope, frames: make(chan []byte, h.buffer), gone: make(chan struct{}),
		latest: map[string][]byte{}, wake: make(chan struct{}, 1)}
	h.clients[s] = struct{}{}
	h.perUser[user]++
	return s, nil
}

func (h *Hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if _, ok := h.clients[s]; ok {
		h.dropLocked(s)
	}
}

func (h *Hub) dropLocked(s *subscriber) {
	delete(h.clients, s)
	if h.perUser[s.user]--; h.perUser[s.user] <= 0 {
		delete(h.perUser, s.user)
	}
	close(s.gone)
}

// streamWriteTimeout bounds each write to a stream, so that a client that stops reading does not
// hold its handler forever.
const streamWriteTimeout = 30 * time.Second

// handleStream serves GET /api/v1/stream: the hub's events as Server-Sent Events, with a comment
// every keep-alive interval so that proxies and browsers keep the connection open.
func (s *Server) handleStream(w http.ResponseWriter, r *http.Request) { s.serveStream(w, r, nil) }

// serveStream serves the hub's events that scope admits (all when nil) as Server-Sent Events.
func (s *Server) serveStream(w http.ResponseWriter, r *http.Request, scope *streamScope) {
	sub, err := s.hub.subscribeScoped(userFrom(r.Context()).Name, scope)
	if errors.Is(err, errUserStreams) {
		// Close the connection too: a client that opens streams in a loop should not keep
		// the connections they came on.
		w.Header().Set("Connection", "close")
		s.writeError(w, r, http.StatusTooManyRequests, "muitas transmissões abertas por este usuário; feche outras abas")
		return
	}
	if err != nil {
		s.writeError(w, r, http.StatusServiceUnavailable, "transmissão indisponível no momento")
		return
	}
	defer s.hub.unsubscribe(sub)

	rc := http.NewResponseController(w)
	// The server's read timeout bounds reading a request; a stream lasts for hours. Lift the
	// deadline for this request explicitly: net/http (1.26) clears it itself once a request
	// has no body left to read, but a read timing out would end the stream, so the stream does
	// not rely on that. Reads on this connection are then only the server's watch for the
	// client going away.
	if err := rc.SetReadDeadline(time.Time{}); err != nil && !errors.Is(err, http.ErrNotSupported) {
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no") // nginx: do not buffer the stream
	w.WriteHeader(http.StatusOK)

	// write sends b and flushes it, within the write timeout.
	write := func(b []byte) bool {
		if err := rc.SetWriteDeadline(time.Now().Add(streamWriteTimeout)); err != nil && !errors.Is(err, http.ErrNotSupported) {
			return false
		}
		if _, err := w.Write(b); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	// The first comment tells the client that it is subscribed.
	if !write([]byte("retry: 3000\n: connected\n\n")) {
		return
	}
	keepAlive := time.NewTicker(s.keepAlive)
	defer keepAlive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-sub.gone:
			return
		case frame := <-sub.frames:
			if !write(frame) {
				return
			}
		case <-sub.wake:
			// One write and one flush for all the pending states.
			if frames := sub.takeLatest(); len(frames) > 0 && !write(bytes.Join(frames, nil)) {
				return
			}
		case <-keepAlive.C:
			if !write([]byte(": keep-alive\n\n")) {
				return
			}
		}
	}
}
