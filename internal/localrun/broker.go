package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	mochi "github.com/mochi-mqtt/server/v2"
	"github.com/mochi-mqtt/server/v2/hooks/auth"
	"github.com/mochi-mqtt/server/v2/listeners"
	"github.com/mochi-mqtt/server/v2/packets"

	"github.com/trenzinho/trenzinho/internal/atomicfile"
	"github.com/trenzinho/trenzinho/wire"
)

// broker is the embedded MQTT broker (mochi-mqtt) of one run, with anonymous access on
// loopback. It tells when a client has subscribed and counts the telemetry batches it received
// (each batch once, however often it was sent), which the run reports when it stops.
type broker struct {
	srv  *mochi.Server
	hook *watchHook
}

// startBroker listens on p (replacing a taken default port by a free one) and serves.
func startBroker(p *port, log *slog.Logger) (*broker, error) {
	ln, err := p.reserve()
	if err != nil {
		return nil, err
	}
	caps := mochi.NewDefaultServerCapabilities()
	caps.MaximumClientWritesPending = 64 * 1024
	caps.MaximumSessionExpiryInterval = 7 * 24 * 3600
	caps.MaximumPacketSize = 1 << 20
	// Ingest's session holds the telemetry while InfluxDB is being built (minutes on a slow
	// machine): the largest store mochi allows, about six hours of the demo fleet.
	caps.MaximumInflight = 65535
	s := mochi.New(&mochi.Options{Capabilities: caps, Logger: log, InlineClient: true})
	if err := s.AddHook(new(auth.AllowHook), nil); err != nil {
		ln.Close()
		return nil, err
	}
	h := &watchHook{subs: map[string]chan struct{}{}, seen: map[string]struct{}{}, vehicles: map[string]struct{}{}}
	if err := s.AddHook(h, nil); err != nil {
		ln.Close()
		return nil, err
	}
	if err := s.AddListener(listeners.NewNet("tcp", ln)); err != nil {
		ln.Close()
		return nil, fmt.Errorf("MQTT broker on %s: %w", p.addr(), err)
	}
	if err := s.Serve(); err != nil {
		return nil, err
	}
	return &broker{srv: s, hook: h}, nil
}

// subscribed returns a channel closed once clientID has subscribed.
func (b *broker) subscribed(clientID string) <-chan struct{} { return b.hook.subscribed(clientID) }

// telemetry returns how many distinct telemetry batches the broker received, and from how many
// vehicles. It is the count of everything ingest can have stored from this run: mochi-mqtt
// calls OnPublished right after delivering a message to the subscribers, on every path that
// delivers one (QoS 0, QoS 1 and 2 once the acknowledgement is written, the inline client's
// publishes), and ingest decodes with the same limits. A store holding more is one that another
// writer reached: the InfluxDB front takes this run's ingest's writes alone (influxFront).
func (b *broker) telemetry() (batches, vehicles int) {
	b.hook.mu.Lock()
	defer b.hook.mu.Unlock()
	return len(b.hook.seen), len(b.hook.vehicles)
}

// drain waits, at most timeout, until the client has acknowledged every message the broker
// sent it.
func (b *broker) drain(clientID string, timeout time.Duration) {
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		cl, ok := b.srv.Clients.Get(clientID)
		if !ok || cl.State.Inflight.Len() == 0 {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func (b *broker) close() { b.srv.Close() }

// held is one telemetry message saved by saveUnacknowledged.
type held struct {
	Topic   string `json:"topic"`
	Payload []byte `json:"payload"`
}

// saveUnacknowledged writes the messages that clientID's session holds unacknowledged to path,
// one JSON line each, so that the next run publishes them again (replay): the embedded broker
// keeps its sessions in memory, and what ingest could not write before InfluxDB answered would
// otherwise be lost with it. It returns how many it saved.
func (b *broker) saveUnacknowledged(clientID, path string) (int, error) {
	cl, ok := b.srv.Clients.Get(clientID)
	if !ok {
		return 0, nil
	}
	pks := cl.State.Inflight.GetAll(false)
	if len(pks) == 0 {
		return 0, nil
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	for _, pk := range pks {
		if err := enc.Encode(held{Topic: pk.TopicName, Payload: pk.Payload}); err != nil {
			return 0, err
		}
	}
	if err := atomicfile.Write(path, buf.Bytes(), 0o600); err != nil {
		return 0, err
	}
	return len(pks), nil
}

// replay publishes the messages saved by a previous run's saveUnacknowledged, at QoS 1, and
// removes the file. Ingest stores a batch published twice once (docs/storage.md).
func (b *broker) replay(path string) (int, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var h held
		if err := dec.Decode(&h); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return n, fmt.Errorf("%s: %w", path, err)
		}
		if err := b.srv.Publish(h.Topic, h.Payload, false, 1); err != nil {
			return n, err
		}
		n++
	}
	return n, os.Remove(path)
}

// watchHook is the broker's hook that watches subscriptions and telemetry.
type watchHook struct {
	mochi.HookBase
	mu       sync.Mutex
	subs     map[string]chan struct{}
	seen     map[string]struct{} // vehicle/epoch/seq of every telemetry batch received
	vehicles map[string]struct{}
}

func (h *watchHook) ID() string { return "localrun-watch" }

func (h *watchHook) Provides(b byte) bool {
	return bytes.Contains([]byte{mochi.OnSubscribed, mochi.OnPublished}, []byte{b})
}

func (h *watchHook) subscribed(clientID string) chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.subs[clientID]
	if !ok {
		c = make(chan struct{})
		h.subs[clientID] = c
	}
	return c
}

func (h *watchHook) OnSubscribed(cl *mochi.Client, _ packets.Packet, codes []byte) {
	for _, c := range codes {
		if c >= 0x80 { // a refused filter
			return
		}
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	c, ok := h.subs[cl.ID]
	if !ok {
		c = make(chan struct{})
		h.subs[cl.ID] = c
	}
	select {
	case <-c:
	default:
		close(c)
	}
}

func (h *watchHook) OnPublished(_ *mochi.Client, pk packets.Packet) {
	vehicle, kind, err := wire.VehicleFromTopic(pk.TopicName)
	if err != nil || kind != "telemetry" {
		return
	}
	b, err := wire.Decode(pk.TopicName, pk.Payload, time.Now())
	if err != nil {
		return // quarantined by ingest, not a batch
	}
	h.mu.Lock()
	h.seen[fmt.Sprintf("%s/%s/%d", vehicle, b.Epoch, b.Seq)] = struct{}{}
	h.vehicles[vehicle] = struct{}{}
	h.mu.Unlock()
}
