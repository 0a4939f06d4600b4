package archive

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/url"
	"os"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/wire"
)

// MQTTConfig are the broker settings of ingest.
type MQTTConfig struct {
	config.MQTT
	// ClientID names the persistent session; it must be stable per instance and different
	// between instances.
	ClientID string
	// ShareGroup, when set, subscribes to $share/{ShareGroup}/trenzinho/v1/+/telemetry so that
	// the instances of one group share the messages.
	ShareGroup string
	// KeepAlive of the connection (30s).
	KeepAlive time.Duration
}

// Filter is the subscription's topic filter.
func (c MQTTConfig) Filter() string {
	if c.ShareGroup == "" {
		return wire.TelemetryWildcard
	}
	return "$share/" + c.ShareGroup + "/" + wire.TelemetryWildcard
}

// quarantineQueue bounds the quarantine records waiting to be published.
const quarantineQueue = 1024

type outbound struct {
	topic   string
	payload []byte
}

// subscription is the MQTT side of ingest: a persistent session subscribed with QoS 1 and
// automatic acknowledgement off, and a publisher of quarantine records.
type subscription struct {
	cfg    MQTTConfig
	client mqtt.Client
	m      *Metrics
	log    *slog.Logger
	out    chan outbound
	done   chan struct{} // closed when the publisher has drained out
	ctx    context.Context
}

// newSubscription prepares the client; connect starts it. Every message is passed to handle
// in the order received, from one goroutine: handle must return quickly.
func newSubscription(ctx context.Context, cfg MQTTConfig, handle func(Message), m *Metrics, log *slog.Logger) (*subscription, error) {
	if cfg.ClientID == "" {
		return nil, errors.New("MQTT client id is empty")
	}
	if cfg.KeepAlive <= 0 {
		cfg.KeepAlive = 30 * time.Second
	}
	s := &subscription{cfg: cfg, m: m, log: log, ctx: ctx,
		out: make(chan outbound, quarantineQueue), done: make(chan struct{})}
	opts := mqtt.NewClientOptions().
		AddBroker(cfg.URL).
		SetClientID(cfg.ClientID).
		SetUsername(cfg.User).
		SetPassword(cfg.Password).
		// A persistent session: the broker keeps the subscription and queues messages while
		// ingest is away, and redelivers (DUP) what was not acknowledged.
		SetCleanSession(false).
		// Acknowledge only once stored (Archiver.Handle and Message.Ack).
		SetAutoAckDisabled(true).
		// The handler runs on paho's goroutine in arrival order and only enqueues; with
		// OrderMatters false paho would start a goroutine per message, unbounded and unordered.
		SetOrderMatters(true).
		// The default handler, not a per-subscription route: after a reconnect the broker
		// redelivers and sends queued messages before Subscribe could register a route, and
		// paho never acknowledges a message that no handler took, which would hold its
		// in-flight slot on the broker until the next reconnect.
		SetDefaultPublishHandler(func(_ mqtt.Client, msg mqtt.Message) { handle(msg) }).
		SetKeepAlive(cfg.KeepAlive).
		SetPingTimeout(10 * time.Second).
		SetConnectTimeout(10 * time.Second).
		SetWriteTimeout(10 * time.Second).
		SetAutoReconnect(true).
		SetConnectRetry(true).
		SetConnectRetryInterval(2 * time.Second).
		SetMaxReconnectInterval(10 * time.Second).
		SetOnConnectHandler(s.onConnect).
		SetConnectionLostHandler(func(_ mqtt.Client, err error) {
			m.mqttUp.Set(0)
			log.Warn("MQTT connection lost; reconnecting (unacknowledged messages will be redelivered)", "error", err)
		})
	tlsConfig, err := cfg.TLSConfig()
	if err != nil {
		return nil, err
	}
	if tlsConfig != nil {
		opts.SetTLSConfig(tlsConfig)
	}
	if buffered(cfg.URL) {
		opts.SetCustomOpenConnectionFn(openBuffered)
	}
	s.client = mqtt.NewClient(opts)
	return s, nil
}

// readBuffer is the read buffer of the connection to the broker: a few messages of a fleet.
const readBuffer = 64 << 10

// buffered reports whether ingest opens the connection to url itself, with a read buffer:
// paho reads each packet's header from the connection a byte at a time, one system call each,
// which costs more than decoding a small batch. Other schemes, and connections through a
// proxy (all_proxy), are left to paho.
func buffered(rawURL string) bool {
	u, err := url.Parse(rawURL)
	if err != nil || os.Getenv("all_proxy") != "" || os.Getenv("ALL_PROXY") != "" {
		return false
	}
	switch u.Scheme {
	case "tcp", "mqtt", "ssl", "tls", "mqtts", "tcps":
		return true
	}
	return false
}

// openBuffered dials the broker as paho does for the schemes of buffered (TCP, or TLS with the
// options' configuration) and reads and writes the connection through buffers.
func openBuffered(u *url.URL, o mqtt.ClientOptions) (net.Conn, error) {
	d := o.Dialer
	if d == nil {
		d = &net.Dialer{Timeout: o.ConnectTimeout}
	}
	var (
		c   net.Conn
		err error
	)
	switch u.Scheme {
	case "tcp", "mqtt":
		c, err = d.Dial("tcp", u.Host)
	default:
		c, err = tls.DialWithDialer(d, "tcp", u.Host, o.TLSConfig)
	}
	if err != nil {
		return nil, err
	}
	timeout := o.WriteTimeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	return newBufferedConn(c, timeout), nil
}

// writeBuffer bounds the bytes a bufferedConn holds not yet written: about 16,000
// acknowledgements, or one larger packet at a time.
const writeBuffer = 64 << 10

// bufferedConn is a connection read through a buffer and written by a goroutine of its own.
//
// Reads: paho reads each packet's fixed header a byte at a time, one system call each.
//
// Writes: paho writes every packet with a system call of its own, from one goroutine. Ingest
// acknowledges a write's 160–500 messages at once, so before this the PUBACKs (4 bytes each) were
// one system call each, the largest cost of ingest's CPU profile on 5-reading batches after
// decoding (docs/benchmarks.md, "Ingest vs Telegraf vs bare writer"), and as many wake-ups of the
// broker. Write now appends to a buffer and returns; the writer goroutine sends whatever has
// accumulated in one system call, so the PUBACKs of a write leave in a few segments, in order.
// A PUBACK that paho handed over but that was not yet sent when the connection breaks is lost
// like one in the socket's buffer: the broker redelivers its message, which was stored, and
// storing it again changes nothing (the points are idempotent). Close sends what is buffered
// first, so a DISCONNECT still follows the last acknowledgements.
type bufferedConn struct {
	net.Conn
	r       *bufio.Reader
	timeout time.Duration // of each write

	mu      sync.Mutex
	cond    *sync.Cond // signalled when pending was taken or an error set
	pending []byte     // written by paho, not yet sent
	err     error      // the first write error; every later Write returns it
	closed  bool
	wake    chan struct{} // one value: pending is not empty
	stopped chan struct{} // closed when the writer goroutine returns
}

func newBufferedConn(c net.Conn, timeout time.Duration) *bufferedConn {
	b := &bufferedConn{Conn: c, r: bufio.NewReaderSize(c, readBuffer), timeout: timeout,
		wake: make(chan struct{}, 1), stopped: make(chan struct{})}
	b.cond = sync.NewCond(&b.mu)
	go b.writeLoop()
	return b
}

func (c *bufferedConn) Read(p []byte) (int, error) { return c.r.Read(p) }

// Write queues p for the writer goroutine. It waits only while the buffer is full, and returns
// the error of an earlier write, if any.
func (c *bufferedConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for c.err == nil && !c.closed && len(c.pending) > 0 && len(c.pending)+len(p) > writeBuffer {
		c.cond.Wait()
	}
	if c.err != nil {
		return 0, c.err
	}
	if c.closed {
		return 0, net.ErrClosed
	}
	c.pending = append(c.pending, p...)
	select {
	case c.wake <- struct{}{}:
	default:
	}
	return len(p), nil
}

// writeLoop sends what Write queued until Close.
func (c *bufferedConn) writeLoop() {
	defer close(c.stopped)
	var out []byte
	for range c.wake {
		c.mu.Lock()
		out, c.pending = c.pending, out[:0]
		c.cond.Broadcast()
		c.mu.Unlock()
		if len(out) == 0 {
			continue
		}
		if err := c.send(out); err != nil {
			c.mu.Lock()
			c.err = err
			c.cond.Broadcast()
			c.mu.Unlock()
			c.Conn.Close() // paho's reader fails too, and paho reconnects
			return         // Write sends nothing more once err is set
		}
	}
}

func (c *bufferedConn) send(b []byte) error {
	if err := c.Conn.SetWriteDeadline(time.Now().Add(c.timeout)); err != nil {
		return err
	}
	_, err := c.Conn.Write(b)
	return err
}

// SetWriteDeadline is ignored: the writer goroutine bounds each of its writes by the
// connection's write timeout, paho's own deadline would cut a later, unrelated write short.
func (c *bufferedConn) SetWriteDeadline(time.Time) error { return nil }

// SetDeadline sets the read deadline only (see SetWriteDeadline).
func (c *bufferedConn) SetDeadline(t time.Time) error { return c.Conn.SetReadDeadline(t) }

// Close sends what is buffered (within the write timeout), then closes the connection.
func (c *bufferedConn) Close() error {
	c.mu.Lock()
	first := !c.closed
	c.closed = true
	c.cond.Broadcast()
	c.mu.Unlock()
	if first {
		close(c.wake) // Write sends on it only while holding mu and not closed
		select {
		case <-c.stopped: // the writer sent what was queued, or failed
		case <-time.After(c.timeout):
		}
	}
	return c.Conn.Close()
}

// connect connects (retrying in the background until ctx ends) and starts the publisher.
func (s *subscription) connect() {
	tok := s.client.Connect()
	go s.publishLoop()
	go func() {
		t := time.NewTimer(15 * time.Second)
		defer t.Stop()
		select {
		case <-tok.Done():
			if err := tok.Error(); err != nil {
				s.log.Error("MQTT connect", "broker", s.cfg.URL, "error", err)
			}
		case <-t.C:
			s.log.Warn("MQTT broker not reachable yet; still trying", "broker", s.cfg.URL)
		case <-s.ctx.Done():
		}
	}()
}

// onConnect (re)subscribes on every connection; the persistent session keeps the subscription
// anyway, so a failure here is retried but loses nothing.
func (s *subscription) onConnect(c mqtt.Client) {
	filter := s.cfg.Filter()
	backoff := time.Second
	for s.ctx.Err() == nil && c.IsConnectionOpen() {
		tok := c.Subscribe(filter, 1, nil)
		var err error
		if tok.WaitTimeout(10 * time.Second) {
			err = tok.Error()
			if st, ok := tok.(*mqtt.SubscribeToken); ok && err == nil {
				if qos, ok := st.Result()[filter]; ok && qos > 2 {
					err = fmt.Errorf("broker refused the subscription (code %#x)", qos)
				}
			}
		} else {
			err = errors.New("no SUBACK within 10s")
		}
		if err == nil {
			s.m.mqttUp.Set(1)
			s.log.Info("MQTT connected and subscribed", "broker", s.cfg.URL, "client_id", s.cfg.ClientID, "filter", filter)
			return
		}
		s.log.Error("MQTT subscribe failed; retrying", "filter", filter, "error", err)
		select {
		case <-s.ctx.Done():
			return
		case <-time.After(backoff):
		}
		backoff = min(2*backoff, 30*time.Second)
	}
}

// publishQuarantine queues a quarantine record for publishing (QoS 1); it drops it, counted,
// when the queue is full: the record is stored in InfluxDB either way.
func (s *subscription) publishQuarantine(topic string, payload []byte) {
	select {
	case s.out <- outbound{topic, payload}:
	default:
		s.m.qPublished.WithLabelValues("dropped").Inc()
	}
}

func (s *subscription) publishLoop() {
	defer close(s.done)
	for o := range s.out {
		tok := s.client.Publish(o.topic, 1, false, o.payload)
		if !tok.WaitTimeout(10*time.Second) || tok.Error() != nil {
			s.m.qPublished.WithLabelValues("error").Inc()
			if err := tok.Error(); err != nil {
				s.log.Debug("quarantine publish failed", "topic", o.topic, "error", err)
			}
			continue
		}
		s.m.qPublished.WithLabelValues("ok").Inc()
	}
}

// close waits (up to timeout) for the queued quarantine records to be published, then
// disconnects, letting paho send the last acknowledgements first.
func (s *subscription) close(timeout time.Duration) {
	close(s.out)
	select {
	case <-s.done:
	case <-time.After(timeout):
		s.log.Warn("quarantine records left unpublished at shutdown", "queued", len(s.out))
	}
	s.client.Disconnect(250)
	s.m.mqttUp.Set(0)
}

// Subscribe connects to the broker with ingest's subscription — the persistent session, QoS 1,
// acknowledgements left to the handler, the buffered connection — and passes every message to
// handle in the order received, until ctx ends; stop disconnects. It is for tools that measure
// what the broker delivers to ingest without the rest of the pipeline (the load benchmark's
// sink contender): handle must call Ack for every message.
func Subscribe(ctx context.Context, cfg MQTTConfig, handle func(Message), log *slog.Logger) (stop func(), err error) {
	s, err := newSubscription(ctx, cfg, handle, NewMetrics(prometheus.NewRegistry()), log)
	if err != nil {
		return nil, err
	}
	s.connect()
	return func() { s.close(time.Second) }, nil
}
