// Package bridge is the firmware bridge's run loop: it reads the vehicle's instruments over
// serial, groups their readings into batches of the wire format every interval, writes each batch
// to the crash-safe spool before anything else, and publishes the spool in order over MQTT at
// QoS 1, deleting a batch only once the broker acknowledged it.
//
// What a power cut can cost: the readings not yet in a batch (at most one batch interval, 5 s by
// default). Every batch in the spool survives and is published after the power returns.
package bridge

import (
	"context"
	"crypto/ed25519"
	"crypto/tls"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/configbundle"
	"github.com/trenzinho/trenzinho/firmware-bridge/spool"
	"github.com/trenzinho/trenzinho/firmware-bridge/tacho"
	"github.com/trenzinho/trenzinho/wire"
)

// Config configures a bridge.
type Config struct {
	Vehicle  string
	StateDir string
	Version  string

	GPS   *Device // nil: not fitted
	Tacho *Device
	SLM   *Device
	// Service is the driver's service switch, when wired (nil: none).
	Service *ServiceInput
	// Door is the passenger door's contact, when wired (nil: none).
	Door *DoorInput

	// BatchInterval is how often a batch is closed (5 s by default); a batch is closed sooner
	// when it reaches MaxReadings.
	BatchInterval time.Duration
	MaxReadings   int
	// SpoolMaxBytes bounds the spool (512 MiB by default); the oldest batches are evicted.
	SpoolMaxBytes int64
	// RTC says the system clock is kept by a real-time clock when no GPS time is known.
	RTC bool

	MQTT config.MQTT
	// Key signs every batch when set; Kid names it.
	Key ed25519.PrivateKey
	Kid string
	// InFlight bounds the batches published and not yet acknowledged (16 by default).
	InFlight int
	// StatusEvery is how often the retained status is refreshed (30 s by default).
	StatusEvery time.Duration

	Logger *slog.Logger
	// ConfigKey is the monitor's public key pinned at enrolment: configuration bundles signed
	// by it are applied (config.go); nil: the bridge takes no configuration.
	ConfigKey ed25519.PublicKey
	// LogLevel, when set, is the level of Logger, which a configuration bundle may change.
	LogLevel *slog.LevelVar
	// Coach is the driver's coach (firmware-bridge/coach), when on: it sees every reading as
	// it is batched and every configuration bundle put in force.
	Coach Coach
}

// Coach is what the bridge needs of the driver's coach. Observe must not block: the coach
// evaluates on its own goroutine and drops what it has no time for.
type Coach interface {
	Observe(readings *wire.Batch)
	Configure(cb *configbundle.Bundle) error
}

// Bridge runs one vehicle's bridge.
type Bridge struct {
	cfg   Config
	log   *slog.Logger
	spool *spool.Spool
	devs  deviceState

	readings chan reading
	clock    clockState

	client   mqtt.Client
	tls      *tls.Config // nil: no TLS to the broker
	statusMu sync.Mutex
	statusCh chan struct{}

	published atomic.Int64
	acked     atomic.Int64
	warned    atomic.Int64 // warnings taken by Warn

	// What the batcher has done, for whoever must know it has (the tests wait on these rather
	// than on time): readings and warnings it took, intervals it ended (empty ones included).
	batchTaken atomic.Int64
	batchTicks atomic.Int64

	conf       atomic.Pointer[configbundle.Bundle] // in force; nil: none
	confMu     sync.Mutex                          // serialises ReceiveConfig
	interval   atomic.Int64                        // batch interval in force, ns
	intervalCh chan struct{}

	// coaching: the coach took a bundle; until then it is handed nothing (a bridge without a
	// bundle pays nothing for it).
	coaching atomic.Bool
}

// Open prepares a bridge: it opens (or creates) the state directory and its spool.
func Open(cfg Config) (*Bridge, error) {
	if !wire.ValidVehicle(cfg.Vehicle) {
		return nil, fmt.Errorf("bridge: vehicle id %q: want [A-Za-z0-9_-]{1,32}", cfg.Vehicle)
	}
	if cfg.StateDir == "" {
		return nil, errors.New("bridge: state directory required")
	}
	if cfg.BatchInterval <= 0 {
		cfg.BatchInterval = 5 * time.Second
	}
	if cfg.MaxReadings <= 0 || cfg.MaxReadings > wire.MaxReadings {
		cfg.MaxReadings = wire.MaxReadings
	}
	if cfg.InFlight <= 0 {
		cfg.InFlight = 16
	}
	if cfg.StatusEvery <= 0 {
		cfg.StatusEvery = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	// A CA or client certificate that cannot be read fails the start, as in ingest and the
	// monitor, rather than be logged once and leave the bridge spooling with no usable link.
	tlsCfg, err := cfg.MQTT.TLSConfig()
	if err != nil {
		return nil, err
	}
	sp, err := spool.Open(cfg.StateDir, spool.Options{MaxBytes: cfg.SpoolMaxBytes, Logger: cfg.Logger, Rekey: rekey(cfg)})
	if err != nil {
		return nil, fmt.Errorf("bridge: %w", err)
	}
	if st := sp.Stats(); st.EpochLost {
		cfg.Logger.Warn("the state directory lost its epoch file: the spooled batches are sent again under a new epoch",
			"vehicle", cfg.Vehicle, "state_dir", cfg.StateDir, "epoch", st.Epoch, "previous_epoch", st.PreviousEpoch,
			"rekeyed", st.Rekeyed, "unreadable", st.Lost)
	}
	b := &Bridge{
		cfg:      cfg,
		log:      cfg.Logger.With("vehicle", cfg.Vehicle),
		spool:    sp,
		tls:      tlsCfg,
		devs:     deviceState{states: map[string]string{}},
		readings: make(chan reading, 4096),
		statusCh: make(chan struct{}, 1),

		intervalCh: make(chan struct{}, 1),
	}
	b.interval.Store(int64(cfg.BatchInterval))
	b.loadConfig()
	for name, d := range map[string]*Device{"gps": cfg.GPS, "tacho": cfg.Tacho, "slm": cfg.SLM} {
		if d != nil {
			b.devs.set(name, wire.DeviceMissing)
		}
	}
	return b, nil
}

// rekey re-encodes a spooled batch of a lost epoch for the new epoch and seq, signed again with
// the bridge's key: the readings, their times and the batch's sent_at stay as they were. The
// payload is the bridge's own, so it is read without the receiver's checks (an old batch
// may be older than the receiver's max_age: the receiver decides that, not the bridge).
func rekey(cfg Config) spool.Rekeyer {
	return func(payload []byte, epoch string, seq uint64) ([]byte, string, error) {
		var b wire.Batch
		if err := json.Unmarshal(payload, &b); err != nil {
			return nil, "", fmt.Errorf("bridge: spooled batch: %w", err)
		}
		old := b.Epoch
		// As batch does: this vehicle, this key (the key may have been rotated since).
		b.Vehicle, b.Epoch, b.Seq, b.Kid, b.Sig = cfg.Vehicle, epoch, seq, cfg.Kid, ""
		p, err := wire.Encode(&b, cfg.Key)
		return p, old, err
	}
}

// Epoch is the bridge's sequence epoch.
func (b *Bridge) Epoch() string { return b.spool.Epoch() }

// Run reads, batches and publishes until ctx is cancelled. On cancellation it stops the
// devices, closes the open batch with everything they handed over, writes it to the spool, gives
// the publisher a moment to flush, and closes the spool.
func (b *Bridge) Run(ctx context.Context) error {
	defer b.spool.Close()
	devCtx, stopDevices := context.WithCancel(ctx)
	defer stopDevices()
	var wg sync.WaitGroup
	start := func(name string, d *Device, read func(context.Context, io.ReadWriter, *Device) error) {
		if d == nil {
			return
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			b.portLoop(devCtx, name, d, read)
		}()
	}
	start("gps", b.cfg.GPS, b.readGPS)
	start("tacho", b.cfg.Tacho, b.readTacho)
	if d := b.cfg.SLM; d != nil && d.Protocol == "modbus-rtu" {
		wg.Add(1)
		go func() {
			defer wg.Done()
			modbusLoop(devCtx, b.log, d, &b.clock, b.readings, &b.devs, b.onDeviceChange)
		}()
	} else {
		start("slm", d, b.readSLM)
	}
	awaitGPS := b.cfg.GPS != nil && !b.cfg.RTC
	if in := b.cfg.Service; in != nil {
		in := *in
		in.AwaitGPS = in.AwaitGPS || awaitGPS
		wg.Add(1)
		go func() {
			defer wg.Done()
			pollService(devCtx, b.log, &in, &b.clock, b.readings, &b.devs, b.onDeviceChange)
		}()
	}
	if in := b.cfg.Door; in != nil {
		in := *in
		in.AwaitGPS = in.AwaitGPS || awaitGPS
		wg.Add(1)
		go func() {
			defer wg.Done()
			pollDoor(devCtx, b.log, &in, &b.clock, b.readings, &b.devs, b.onDeviceChange)
		}()
	}

	devicesDone := make(chan struct{})
	go func() { wg.Wait(); close(devicesDone) }()

	pubCtx, stopPublisher := context.WithCancel(context.Background())
	defer stopPublisher()
	pubDone := make(chan error, 1)
	go func() { pubDone <- b.publish(pubCtx) }()

	// The batcher outlives the devices: on cancellation the devices stop first and hand over
	// what they still hold (the GPS epoch and the sound second in progress), and only then
	// does the batcher drain the channel and close the last batch.
	batchCtx, stopBatch := context.WithCancel(context.Background())
	defer stopBatch()
	go func() {
		select {
		case <-ctx.Done():
		case <-batchCtx.Done(): // the batcher failed and Run is returning
		}
		stopDevices()
		<-devicesDone
		stopBatch()
	}()

	err := b.batch(batchCtx)
	stopDevices()
	<-devicesDone
	// Let the publisher send what is spooled for a short while; what it cannot send stays in
	// the spool for the next start.
	deadline := time.Now().Add(3 * time.Second)
	for b.spool.Depth() > 0 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	stopPublisher()
	<-pubDone
	return err
}

func (b *Bridge) onDeviceChange() {
	select {
	case b.statusCh <- struct{}{}:
	default:
	}
}

func (b *Bridge) portLoop(ctx context.Context, name string, d *Device, read func(context.Context, io.ReadWriter, *Device) error) {
	portLoop(ctx, b.log, name, d.Port, &b.devs, b.onDeviceChange, func(rw io.ReadWriter) error {
		return read(ctx, rw, d)
	})
}

func (b *Bridge) readSLM(ctx context.Context, rw io.ReadWriter, d *Device) error {
	if d.Protocol != "pce322a" && d.Protocol != "" {
		return fmt.Errorf("sound-level meter protocol %q: want pce322a or modbus-rtu", d.Protocol)
	}
	return readPCE(ctx, rw, d, &b.clock, b.readings, &b.devs, b.onDeviceChange)
}

func (b *Bridge) readGPS(ctx context.Context, r io.ReadWriter, _ *Device) error {
	return readGPS(ctx, r, b.readings, &b.devs, b.onDeviceChange)
}

func (b *Bridge) readTacho(ctx context.Context, r io.ReadWriter, d *Device) error {
	layout, err := tacho.ParseLayout(d.Protocol)
	if err != nil {
		return err
	}
	return readTacho(ctx, r, layout, b.readings, &b.devs, b.onDeviceChange)
}

// batch collects readings into batches and appends them to the spool.
func (b *Bridge) batch(ctx context.Context) error {
	tick := time.NewTicker(b.batchInterval())
	defer tick.Stop()
	var cur wire.Batch
	n := 0
	flush := func() error {
		if n == 0 && len(cur.Warnings) == 0 {
			return nil
		}
		cur.Clock = b.clock.source(b.cfg.RTC)
		cur.Vehicle, cur.Epoch, cur.V, cur.Kid = b.cfg.Vehicle, b.spool.Epoch(), wire.Version, b.cfg.Kid
		_, err := b.spool.Append(func(seq uint64) ([]byte, error) {
			cur.Seq = seq
			cur.SentAt = wire.NewTime(b.clock.now())
			return wire.Encode(&cur, b.cfg.Key)
		})
		if err != nil {
			return fmt.Errorf("bridge: spool batch: %w", err)
		}
		cur, n = wire.Batch{}, 0
		return nil
	}
	for {
		select {
		case <-ctx.Done():
			// Drain what the devices already handed over, then close the open batch.
			for {
				select {
				case r := <-b.readings:
					if b.add(&cur, r) {
						n++
					}
					if n >= b.cfg.MaxReadings || r.Warning != nil {
						if err := flush(); err != nil {
							return err
						}
					}
					continue
				default:
				}
				break
			}
			return flush()
		case r := <-b.readings:
			if b.add(&cur, r) {
				n++
			}
			// A warning closes its batch at once: it is evidence of what the driver was told,
			// and the spool, not the open batch, is what survives a power cut.
			if n >= b.cfg.MaxReadings || r.Warning != nil {
				if err := flush(); err != nil {
					return err
				}
			}
			b.batchTaken.Add(1)
		case <-b.intervalCh:
			tick.Reset(b.batchInterval())
		case <-tick.C:
			if err := flush(); err != nil {
				b.log.Error("batch not spooled", "err", err)
			}
			b.batchTicks.Add(1)
		}
	}
}

// add puts r in the open batch and reports whether it is a reading (a warning is not).
func (b *Bridge) add(cur *wire.Batch, r reading) bool {
	switch {
	case r.Warning != nil:
		cur.Warnings = append(cur.Warnings, *r.Warning)
		return false
	case r.GPS != nil:
		b.clock.observeGPS(r.GPS.T.Time, r.received)
		cur.GPS = append(cur.GPS, *r.GPS)
	case r.Tacho != nil:
		if r.needsTime {
			r.Tacho.T = wire.NewTime(b.clock.at(r.received))
		}
		cur.Tacho = append(cur.Tacho, *r.Tacho)
	case r.Sound != nil:
		if r.needsTime {
			r.Sound.T = wire.NewTime(b.clock.at(r.received))
		}
		cur.Sound = append(cur.Sound, *r.Sound)
	case r.Service != nil:
		cur.Service = append(cur.Service, *r.Service)
	case r.Door != nil:
		cur.Door = append(cur.Door, *r.Door)
	}
	if b.coaching.Load() {
		b.cfg.Coach.Observe(coachBatch(r))
	}
	return true
}

// ErrWarningQueueFull is returned by Warn when the batcher has not taken the thousands of
// readings handed to it before (its spool is stuck): the warning is not queued.
var ErrWarningQueueFull = errors.New("bridge: the batcher's queue is full; warning not queued")

// Warn hands a warning of the driver's coach to the batcher, which puts it in the open batch
// and closes that batch at once: the warning reaches the crash-safe spool a few milliseconds
// later (one spool append) and from then on survives a restart, a kill or a power cut like
// every spooled batch, and is published in order with the readings (docs/protocol.md §2.7).
// A zero w.T is set to now on the bridge's time base (GPS time when known).
//
// Warn never blocks: it returns an error, and queues nothing, when w is not valid (a warning the
// receiver would reject would take its whole batch of readings with it) or when the batcher's
// queue is full. It may be called before Run (the warning waits for the batcher) and from any
// goroutine.
func (b *Bridge) Warn(w wire.Warning) error {
	if w.T.IsZero() {
		w.T = wire.NewTime(b.clock.now())
	}
	if err := w.Validate(); err != nil {
		return fmt.Errorf("bridge: warning: %w", err)
	}
	select {
	case b.readings <- reading{Warning: &w, received: time.Now()}:
		b.warned.Add(1)
		return nil
	default:
		return ErrWarningQueueFull
	}
}

// coachBatch copies one reading, timed as batched, for the coach.
func coachBatch(r reading) *wire.Batch {
	var one wire.Batch
	switch {
	case r.GPS != nil:
		one.GPS = []wire.GPS{*r.GPS}
	case r.Tacho != nil:
		one.Tacho = []wire.Tacho{*r.Tacho}
	case r.Sound != nil:
		one.Sound = []wire.Sound{*r.Sound}
	case r.Service != nil:
		one.Service = []wire.Service{*r.Service}
	case r.Door != nil:
		one.Door = []wire.Door{*r.Door}
	}
	return &one
}

// publish sends the spool in order and acknowledges each batch once the broker acknowledged it.
func (b *Bridge) publish(ctx context.Context) error {
	b.client = mqtt.NewClient(b.mqttOptions())
	for {
		tok := b.client.Connect()
		tok.Wait()
		if tok.Error() == nil {
			break
		}
		b.log.Warn("broker unreachable; spooling", "err", tok.Error())
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(5 * time.Second):
		}
	}
	defer func() {
		b.publishStatus(false)
		b.client.Disconnect(500)
	}()
	go b.statusLoop(ctx)

	type inflight struct {
		seq uint64
		tok mqtt.Token
	}
	var window []inflight
	var sent uint64 // highest seq handed to paho in this connection run
	topic := wire.TelemetryTopic(b.cfg.Vehicle)
	for ctx.Err() == nil {
		if !b.client.IsConnectionOpen() {
			window, sent = nil, 0 // replay everything unacknowledged once reconnected
			select {
			case <-ctx.Done():
				return nil
			case <-time.After(200 * time.Millisecond):
			}
			continue
		}
		if len(window) < b.cfg.InFlight {
			recs, err := b.spool.Pending(sent, b.cfg.InFlight-len(window))
			if err != nil {
				return fmt.Errorf("bridge: read spool: %w", err)
			}
			for _, r := range recs {
				window = append(window, inflight{r.Seq, b.client.Publish(topic, 1, false, r.Payload)})
				sent = r.Seq
				b.published.Add(1)
			}
		}
		if len(window) == 0 {
			select {
			case <-ctx.Done():
				return nil
			case <-b.spool.Notify():
			case <-time.After(time.Second):
			}
			continue
		}
		head := window[0]
		select {
		case <-ctx.Done():
			return nil
		case <-head.tok.Done():
		case <-time.After(30 * time.Second):
			b.log.Warn("no PUBACK in 30 s; republishing from the oldest unacknowledged batch", "seq", head.seq)
			window, sent = nil, 0
			continue
		}
		if err := head.tok.Error(); err != nil {
			b.log.Warn("publish failed; will replay", "seq", head.seq, "err", err)
			window, sent = nil, 0
			continue
		}
		window = window[1:]
		if err := b.spool.Ack(head.seq); err != nil {
			return fmt.Errorf("bridge: ack %d in spool: %w", head.seq, err)
		}
		b.acked.Add(1)
	}
	return nil
}

func (b *Bridge) mqttOptions() *mqtt.ClientOptions {
	o := mqtt.NewClientOptions().
		AddBroker(b.cfg.MQTT.URL).
		SetClientID("bridge-" + b.cfg.Vehicle).
		SetUsername(b.cfg.MQTT.User).
		SetPassword(b.cfg.MQTT.Password).
		SetCleanSession(true).
		SetAutoReconnect(true).
		SetConnectRetry(false).
		SetMaxReconnectInterval(30 * time.Second).
		SetKeepAlive(30 * time.Second).
		SetWriteTimeout(10 * time.Second).
		SetOrderMatters(false)
	will, _ := json.Marshal(wire.Status{Online: false})
	o.SetBinaryWill(wire.StatusTopic(b.cfg.Vehicle), will, 1, true)
	o.SetOnConnectHandler(func(c mqtt.Client) {
		b.log.Info("connected to the broker", "url", b.cfg.MQTT.URL)
		b.subscribeConfig(c)
		b.onDeviceChange()
	})
	o.SetConnectionLostHandler(func(_ mqtt.Client, err error) {
		b.log.Warn("connection to the broker lost", "err", err)
	})
	if b.tls != nil {
		o.SetTLSConfig(b.tls)
	}
	return o
}

func (b *Bridge) statusLoop(ctx context.Context) {
	t := time.NewTicker(b.cfg.StatusEvery)
	defer t.Stop()
	for {
		b.publishStatus(true)
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		case <-b.statusCh:
		}
	}
}

// Status returns the bridge's status message.
func (b *Bridge) Status(online bool) wire.Status {
	st := b.spool.Stats()
	depth, evicted := int64(st.Depth), int64(st.Evicted)
	now := wire.NewTime(time.Now())
	return wire.Status{
		Online: online, Version: b.cfg.Version, Epoch: st.Epoch, Seq: st.LastSeq, PreviousEpoch: st.PreviousEpoch,
		SpoolDepth: &depth, SpoolEvicted: &evicted, Devices: b.devs.snapshot(), T: &now,
		ConfigVersion: b.configVersion(),
	}
}

func (b *Bridge) publishStatus(online bool) {
	if b.client == nil || !b.client.IsConnectionOpen() {
		return
	}
	b.statusMu.Lock()
	defer b.statusMu.Unlock()
	st := b.Status(online)
	st.Kid = b.cfg.Kid
	if b.cfg.Key == nil {
		st.Kid = ""
	}
	p, err := wire.EncodeStatus(&st, b.cfg.Key) // signed like the batches when the bridge has a key
	if err != nil {
		return
	}
	b.client.Publish(wire.StatusTopic(b.cfg.Vehicle), 1, true, p).WaitTimeout(5 * time.Second)
}
