// Package archive is ingest's pipeline from MQTT to InfluxDB: it decodes telemetry batches,
// turns them into InfluxDB points (docs/storage.md), writes them in batches and acknowledges
// each MQTT message only once its points are stored, so that every batch arrives at least once
// and, since its points are idempotent, is stored exactly once. A payload that cannot be stored
// is quarantined (stored, published, counted and logged) and acknowledged, so it never holds
// up the messages behind it.
//
// The pipeline, in the order a message goes through it:
//
//	Handle (the MQTT client's goroutine)  takes an in-flight slot; blocks only at the memory bound
//	decoders (one per CPU)                decode and encode line protocol, in parallel
//	batcher                               collects the results in arrival order into a write
//	writer                                writes with retries, then acknowledges in order
package archive

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	influxhttp "github.com/influxdata/influxdb-client-go/v2/api/http"
	"golang.org/x/sync/semaphore"

	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/internal/replay"
	"github.com/trenzinho/trenzinho/wire"
)

// Message is what the archiver needs of a received MQTT message; paho's mqtt.Message is one.
type Message interface {
	Topic() string
	Payload() []byte
	Duplicate() bool
	// Ack acknowledges the message to the broker (PUBACK). It is called exactly once, after
	// the message's points were written, and never for a message that was not stored.
	Ack()
}

// Writer writes line protocol; influxdb-client-go's api.WriteAPIBlocking is one. An error
// that unwraps to an *http.Error of the client with status 400, 413 or 422 means InfluxDB
// refuses the data; any other error is retried.
type Writer interface {
	WriteRecord(ctx context.Context, line ...string) error
}

// Publisher publishes a quarantine record. It must not block: it queues or drops.
type Publisher func(topic string, payload []byte)

// Config tunes the pipeline. Zero fields take the defaults documented on each.
type Config struct {
	// BatchLines flushes a write once it holds this many points (5000, InfluxDB's
	// recommended batch size).
	BatchLines int
	// BatchMessages flushes a write once it holds this many messages
	// (MaxInFlight/(WriteConcurrency+1)), so that the broker, which sends at most its
	// max_inflight_messages unacknowledged messages, can fill the next write while
	// WriteConcurrency writes are in progress.
	BatchMessages int
	// FlushInterval flushes a write at most this long after its first message (1s).
	FlushInterval time.Duration
	// MaxInFlight is the broker's max_inflight_messages (1000, deploy/mosquitto/mosquitto.conf):
	// the most messages it sends without their acknowledgement. The archiver holds at most
	// twice as many: after a reconnect the broker resends its window while the messages of the
	// previous connection may still be held (their acknowledgements are lost with the
	// connection, so they are written and then redelivered).
	MaxInFlight int
	// MaxInFlightBytes bounds their payload bytes (256 MiB); a larger payload counts as this.
	MaxInFlightBytes int64
	// WriteConcurrency is the number of writes in flight at once (1). Messages are still
	// acknowledged in arrival order, each once its write succeeded.
	WriteConcurrency int
	// WriteTimeout bounds one write request (10s).
	WriteTimeout time.Duration
	// RetryMin and RetryMax bound the backoff between retries of a failed write (100ms, 10s).
	RetryMin, RetryMax time.Duration
	// ShutdownTimeout bounds the final flush after the context is cancelled (20s); what is
	// not written by then is left unacknowledged, for the broker to redeliver.
	ShutdownTimeout time.Duration
	// Workers is the number of decoders (GOMAXPROCS).
	Workers int
	// Signatures is the signing policy (docs/protocol.md §6): a batch it refuses (unsigned,
	// unknown_key, signature_failed) is quarantined. The zero value accepts every batch that
	// decodes.
	Signatures batchsig.Policy
	// Known reports whether a vehicle is registered; nil: every vehicle is. A batch of a vehicle
	// it does not know is quarantined (unknown_vehicle), without the vehicle as a tag, so that
	// made-up ids cannot grow InfluxDB's series.
	Known func(vehicle string) bool
	// Limits is the time window of valid batches (wire.DefaultLimits when zero); the monitor
	// must be given the same.
	Limits wire.Limits
}

func (c Config) withDefaults() Config {
	def := func(p *time.Duration, d time.Duration) {
		if *p <= 0 {
			*p = d
		}
	}
	if c.BatchLines <= 0 {
		c.BatchLines = 5000
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 1000
	}
	if c.WriteConcurrency <= 0 {
		c.WriteConcurrency = 1
	}
	if c.BatchMessages <= 0 {
		c.BatchMessages = max(1, c.MaxInFlight/(c.WriteConcurrency+1))
	}
	c.BatchMessages = min(c.BatchMessages, c.MaxInFlight)
	if c.MaxInFlightBytes <= 0 {
		c.MaxInFlightBytes = 256 << 20
	}
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	def(&c.FlushInterval, time.Second)
	def(&c.WriteTimeout, 10*time.Second)
	def(&c.RetryMin, 100*time.Millisecond)
	def(&c.RetryMax, 10*time.Second)
	def(&c.ShutdownTimeout, 20*time.Second)
	c.RetryMax = max(c.RetryMax, c.RetryMin)
	return c
}

// maxBodyHint bounds the size the batcher reserves for a write ahead of its lines.
const maxBodyHint = 64 << 20

// maxHeld is the bound on the messages held unacknowledged.
func (c Config) maxHeld() int { return 2 * c.MaxInFlight }

// Archiver is the pipeline. Create it with New, feed it with Handle and run it with Run.
type Archiver struct {
	cfg     Config
	w       Writer
	publish Publisher
	m       *Metrics
	log     *slog.Logger
	reasons *reasonLog
	now     func() time.Time
	replays *replay.Cache // digests of recent batches: a changed replay is a conflict

	slots    chan struct{}       // one per message in flight
	bytes    *semaphore.Weighted // payload bytes in flight
	orderQ   chan *job           // arrival order, read by the batcher
	decodeQ  chan *job           // read by the decoders
	lastRecv atomic.Int64        // last receive time handed out (ns)

	mu          sync.RWMutex // Handle holds it shared while enqueueing; close exclusively
	closed      bool
	intake      context.Context // cancelled when the archiver stops taking messages
	closeIntake context.CancelFunc
	ran         atomic.Bool
}

// New returns an archiver writing to w. publish may be nil (quarantine records are then only
// stored).
func New(cfg Config, w Writer, publish Publisher, m *Metrics, log *slog.Logger) *Archiver {
	cfg = cfg.withDefaults()
	intake, closeIntake := context.WithCancel(context.Background())
	return &Archiver{
		cfg:         cfg,
		w:           w,
		publish:     publish,
		m:           m,
		log:         log,
		reasons:     &reasonLog{every: time.Minute, last: make(map[wire.Reason]reasonState)},
		replays:     replay.New(replay.DefaultSize),
		now:         time.Now,
		slots:       make(chan struct{}, cfg.maxHeld()),
		bytes:       semaphore.NewWeighted(cfg.MaxInFlightBytes),
		orderQ:      make(chan *job, cfg.maxHeld()),
		decodeQ:     make(chan *job, cfg.maxHeld()),
		intake:      intake,
		closeIntake: closeIntake,
	}
}

// job is one message on its way through the pipeline.
type job struct {
	msg        Message
	weight     int64 // bytes taken from the in-flight bound
	receivedAt time.Time
	done       chan struct{} // closed by the decoder

	// Set by the decoder.
	lines      []byte            // line protocol, each line ending in '\n'
	points     pointCounts       // points per measurement in lines
	quarantine *quarantineRecord // when rejected
	qJSON      []byte            // the wire.Quarantine record to publish

	key *replay.Key // the batch's identity once decoded, to forget it when InfluxDB refuses it

	stored bool // set by the writer once InfluxDB took its points (or refused even its quarantine record)
}

// Handle takes a received message into the pipeline. It returns at once unless the in-flight
// bound is reached, in which case it waits for the writer to acknowledge earlier messages.
// After Run has begun to shut down it returns without taking (or acknowledging) the message:
// the broker redelivers it to the next session.
func (a *Archiver) Handle(msg Message) {
	receivedAt := a.receiveTime()
	a.m.messages.Inc()
	if msg.Duplicate() {
		a.m.redelivered.Inc()
	}
	weight := min(int64(len(msg.Payload())), a.cfg.MaxInFlightBytes)
	select {
	case a.slots <- struct{}{}:
	case <-a.intake.Done():
		return
	}
	if err := a.bytes.Acquire(a.intake, weight); err != nil {
		<-a.slots
		return
	}
	j := &job{msg: msg, weight: weight, receivedAt: receivedAt, done: make(chan struct{})}
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.closed {
		a.release(j)
		return
	}
	a.m.inFlight.Inc()
	a.m.inFlightBytes.Add(float64(weight))
	// Neither send blocks: both channels hold as many jobs as there are slots.
	a.orderQ <- j
	a.decodeQ <- j
}

// receiveTime returns the current time, made strictly increasing so that quarantine records,
// which are timestamped by their receipt, never overwrite each other.
func (a *Archiver) receiveTime() time.Time {
	now := a.now().UnixNano()
	for {
		last := a.lastRecv.Load()
		t := max(now, last+1)
		if a.lastRecv.CompareAndSwap(last, t) {
			return time.Unix(0, t).UTC()
		}
	}
}

func (a *Archiver) release(j *job) {
	a.bytes.Release(j.weight)
	<-a.slots
}

// Run runs the pipeline until ctx is cancelled, then stops taking messages, writes and
// acknowledges what it holds (for at most Config.ShutdownTimeout) and returns. It returns an
// error when messages were left unacknowledged. Run may be called once.
func (a *Archiver) Run(ctx context.Context) error {
	if a.ran.Swap(true) {
		return errors.New("archive: Run called twice")
	}
	flushCtx, stopFlushing := context.WithCancel(context.WithoutCancel(ctx))
	defer stopFlushing()

	var decoders sync.WaitGroup
	for range a.cfg.Workers {
		decoders.Go(func() {
			for j := range a.decodeQ {
				a.decode(j)
			}
		})
	}
	writeQ := make(chan *pending, 1)
	batched := make(chan struct{})
	go func() {
		defer close(batched)
		a.batch(writeQ)
	}()
	written := make(chan int)
	go func() { written <- a.write(flushCtx, writeQ) }()

	<-ctx.Done()
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.closeIntake()
	deadline := time.AfterFunc(a.cfg.ShutdownTimeout, stopFlushing)
	defer deadline.Stop()

	<-batched
	close(a.decodeQ) // nothing is sent after closed was set
	decoders.Wait()
	if left := <-written; left > 0 {
		return fmt.Errorf("archive: %d messages left unacknowledged at shutdown (the broker redelivers them)", left)
	}
	return nil
}

// decode turns a message into line protocol or into a quarantine record.
func (a *Archiver) decode(j *job) {
	defer close(j.done)
	topic, payload := j.msg.Topic(), j.msg.Payload()
	b, err := a.cfg.Limits.Decode(topic, payload, j.receivedAt)
	if err == nil && a.cfg.Known != nil && !a.cfg.Known(b.Vehicle) {
		err = &wire.Error{Reason: wire.ReasonUnknownVehicle, Detail: fmt.Sprintf("vehicle %q is not in the registry", b.Vehicle)}
	}
	if err == nil {
		var outcome batchsig.Outcome
		if outcome, err = a.cfg.Signatures.Check(b, payload); err != nil {
			a.quarantine(j, err)
			return
		}
		a.m.signatures.WithLabelValues(outcome.String()).Inc()
		// The same (vehicle, epoch, seq) with other bytes must never overwrite the points of
		// the first (they share their timestamps): quarantined as conflict.
		key := replay.Key{Vehicle: b.Vehicle, Epoch: b.Epoch, Seq: b.Seq}
		if _, conflict := a.replays.Check(key, replay.Sum(payload)); conflict {
			a.quarantine(j, &wire.Error{Reason: wire.ReasonConflict,
				Detail: fmt.Sprintf("vehicle %s epoch %s seq %d was taken before with other content", b.Vehicle, b.Epoch, b.Seq)})
			return
		}
		j.key = &key
		var collisions pointCounts
		// Line protocol takes about as many bytes as the JSON of the readings.
		j.lines, j.points, collisions, err = encodeBatch(make([]byte, 0, len(payload)+len(payload)/4+256), b, j.receivedAt, len(payload))
		if err == nil {
			for i, n := range collisions[:idxBatch] {
				if n > 0 {
					a.m.collisions.WithLabelValues(measurements[i]).Add(float64(n))
				}
			}
			a.observeLag(b, j.receivedAt)
			return
		}
		err = &wire.Error{Reason: wire.ReasonBadValue, Detail: err.Error()}
	}
	a.quarantine(j, err)
}

func (a *Archiver) observeLag(b *wire.Batch, receivedAt time.Time) {
	for i := range b.GPS {
		a.m.lag.Observe(receivedAt.Sub(b.GPS[i].T.Time).Seconds())
	}
	for i := range b.Tacho {
		a.m.lag.Observe(receivedAt.Sub(b.Tacho[i].T.Time).Seconds())
	}
	for i := range b.Sound {
		a.m.lag.Observe(receivedAt.Sub(b.Sound[i].T.Time).Seconds())
	}
}

// quarantine replaces the job's points by a quarantine record of the payload.
func (a *Archiver) quarantine(j *job, err error) {
	q := newQuarantine(j.msg.Topic(), j.msg.Payload(), j.receivedAt, j.msg.Duplicate(), err)
	j.quarantine = q
	j.lines = encodeQuarantine(nil, q, j.receivedAt.UnixNano())
	j.points = pointCounts{idxQuarantine: 1}
	if b, err := json.Marshal(&q.Quarantine); err == nil {
		j.qJSON = b
	}
	a.m.quarantined.WithLabelValues(string(q.Reason)).Inc()
	if ok, suppressed := a.reasons.allow(q.Reason, a.now()); ok {
		a.log.Warn("payload quarantined", "reason", q.Reason, "detail", q.Detail, "topic", q.Topic,
			"bytes", q.size, "suppressed_since_last", suppressed)
	}
}

// pending is one write in preparation.
type pending struct {
	jobs   []*job
	body   strings.Builder // the jobs' lines: String() hands them to the writer without a copy
	points int
}

// batch collects decoded messages in arrival order into writes and hands them to the writer.
// It returns after the intake was closed and everything taken in was handed over.
func (a *Archiver) batch(writeQ chan<- *pending) {
	defer close(writeQ)
	var (
		cur    *pending
		timer  = time.NewTimer(time.Hour)
		timerC <-chan time.Time
		// size is the body of the last full write: the next one is allocated at once rather
		// than grown (and copied) a dozen times.
		size = 64 << 10
	)
	timer.Stop()
	flush := func() {
		if cur == nil {
			return
		}
		timer.Stop()
		timerC = nil
		if n := cur.body.Len(); n > size && n <= maxBodyHint {
			size = n
		}
		writeQ <- cur // waits while the writer is busy: the in-flight bound then stops Handle
		cur = nil
	}
	add := func(j *job) {
		<-j.done
		if cur == nil {
			cur = &pending{}
			cur.body.Grow(size + size/8)
			timer.Reset(a.cfg.FlushInterval)
			timerC = timer.C
		}
		cur.jobs = append(cur.jobs, j)
		cur.body.Write(j.lines)
		cur.points += j.points.total()
		if cur.points >= a.cfg.BatchLines || len(cur.jobs) >= a.cfg.BatchMessages {
			flush()
		}
	}
	for {
		select {
		case j := <-a.orderQ:
			add(j)
		case <-timerC:
			flush()
		case <-a.intake.Done():
			for {
				select {
				case j := <-a.orderQ:
					add(j)
				default:
					flush()
					return
				}
			}
		}
	}
}

// write stores the batches from writeQ, up to Config.WriteConcurrency at a time, and
// acknowledges their messages in arrival order once stored. It retries until ctx ends; it
// returns how many messages it could not store and left unacknowledged.
func (a *Archiver) write(ctx context.Context, writeQ <-chan *pending) (unacked int) {
	type flight struct {
		p    *pending
		done chan struct{}
	}
	slots := make(chan struct{}, a.cfg.WriteConcurrency)
	flights := make(chan *flight, a.cfg.WriteConcurrency)
	left := make(chan int)
	go func() {
		n := 0
		for f := range flights {
			<-f.done
			for _, j := range f.p.jobs {
				if j.stored {
					a.ack(j)
				} else {
					n++
					a.done(j)
				}
			}
			<-slots
		}
		left <- n
	}()
	for {
		// A slot first, then the next write: until a slot is free, writes wait in the batcher
		// (whose hand-off then blocks, and the in-flight bound stops Handle).
		slots <- struct{}{}
		p, ok := <-writeQ
		if !ok {
			break
		}
		f := &flight{p: p, done: make(chan struct{})}
		flights <- f
		go func() {
			defer close(f.done)
			if err := a.store(ctx, p.jobs, p.body.String(), p.points); err != nil {
				a.log.Error("giving up writing at shutdown; the broker redelivers the messages",
					"error", err)
			}
		}()
	}
	close(flights)
	return <-left
}

// store writes the points of jobs (body, holding points points) and marks the jobs stored.
// When InfluxDB refuses the data, it splits the jobs to find the messages it refuses and
// quarantines them. It returns an error only when ctx ends first.
func (a *Archiver) store(ctx context.Context, jobs []*job, body string, points int) error {
	err := a.writeRetrying(ctx, body, points)
	if err == nil {
		for _, j := range jobs {
			for i, n := range j.points {
				if n > 0 {
					a.m.points.WithLabelValues(measurements[i]).Add(float64(n))
				}
			}
			j.stored = true
		}
		return nil
	}
	if !refused(err) {
		return err
	}
	if len(jobs) > 1 {
		half := len(jobs) / 2
		for _, part := range [][]*job{jobs[:half], jobs[half:]} {
			body, points := joinLines(part)
			if err := a.store(ctx, part, body, points); err != nil {
				return err
			}
		}
		return nil
	}
	j := jobs[0]
	if j.quarantine == nil {
		// InfluxDB refuses a decoded batch (e.g. points older than the retention period):
		// quarantine it instead.
		a.log.Warn("InfluxDB refused the points of a batch", "topic", j.msg.Topic(), "error", err)
		if j.key != nil {
			a.replays.Forget(*j.key) // not kept: a corrected retransmission is no conflict
		}
		a.quarantine(j, &wire.Error{Reason: wire.ReasonBadValue, Detail: "InfluxDB refused the points: " + err.Error()})
		return a.store(ctx, jobs, string(j.lines), 1)
	}
	// Even the quarantine record is refused: acknowledge rather than stall.
	a.log.Error("InfluxDB refused a quarantine record; the message is dropped",
		"topic", j.msg.Topic(), "reason", j.quarantine.Reason, "error", err)
	j.stored = true
	return nil
}

func joinLines(jobs []*job) (body string, points int) {
	var b strings.Builder
	for _, j := range jobs {
		b.Write(j.lines)
		points += j.points.total()
	}
	return b.String(), points
}

// ack publishes the job's quarantine record, if any, acknowledges its message and frees its slot.
func (a *Archiver) ack(j *job) {
	if j.quarantine != nil && a.publish != nil && j.qJSON != nil {
		a.publish(j.quarantine.mqttTopic(), j.qJSON)
	}
	j.msg.Ack()
	a.m.acked.Inc()
	a.done(j)
}

// done frees the job's in-flight slot.
func (a *Archiver) done(j *job) {
	a.m.inFlight.Dec()
	a.m.inFlightBytes.Sub(float64(j.weight))
	a.release(j)
}

// writeRetrying writes s, retrying with exponential backoff until it succeeds, InfluxDB
// refuses it, or ctx ends.
func (a *Archiver) writeRetrying(ctx context.Context, s string, points int) error {
	backoff := a.cfg.RetryMin
	var since time.Time
	for attempt := 1; ; attempt++ {
		wctx, cancel := context.WithTimeout(ctx, a.cfg.WriteTimeout)
		start := time.Now()
		err := a.w.WriteRecord(wctx, s)
		cancel()
		if err == nil {
			a.m.writes.WithLabelValues("ok").Inc()
			a.m.writeSeconds.Observe(time.Since(start).Seconds())
			a.m.writePoints.Observe(float64(points))
			a.m.influxUp.Set(1)
			if attempt > 1 {
				a.log.Info("InfluxDB write succeeded again", "attempts", attempt,
					"after", time.Since(since).Round(time.Millisecond))
			}
			return nil
		}
		if ctx.Err() != nil {
			return fmt.Errorf("write %d points: %w (after %d attempts)", points, ctx.Err(), attempt)
		}
		if refused(err) {
			a.m.writes.WithLabelValues("rejected").Inc()
			return fmt.Errorf("write %d points: %w", points, err)
		}
		a.m.writes.WithLabelValues("retry").Inc()
		a.m.influxUp.Set(0)
		if attempt == 1 {
			since = start
		}
		if attempt == 1 || backoff >= a.cfg.RetryMax && attempt%10 == 0 {
			a.log.Warn("InfluxDB write failed; retrying, messages stay unacknowledged",
				"points", points, "attempt", attempt, "error", err)
		}
		wait := backoff/2 + rand.N(backoff/2+1) // jitter: [backoff/2, backoff]
		var he *influxhttp.Error
		if errors.As(err, &he) && he.RetryAfter > 0 {
			wait = min(time.Duration(he.RetryAfter)*time.Second, a.cfg.RetryMax)
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("write %d points: %w (after %d attempts; last: %v)", points, ctx.Err(), attempt, err)
		case <-t.C:
		}
		backoff = min(2*backoff, a.cfg.RetryMax)
	}
}

// refused reports whether InfluxDB refuses the data itself (retrying cannot help): malformed
// or conflicting points (400), a body too large (413), points outside the retention (422).
func refused(err error) bool {
	var he *influxhttp.Error
	if !errors.As(err, &he) {
		return false
	}
	switch he.StatusCode {
	case http.StatusBadRequest, http.StatusRequestEntityTooLarge, http.StatusUnprocessableEntity:
		return true
	}
	return false
}

// reasonLog lets one log line per reason through per period.
type reasonLog struct {
	every time.Duration
	mu    sync.Mutex
	last  map[wire.Reason]reasonState
}

type reasonState struct {
	at         time.Time
	suppressed int
}

// allow reports whether to log a rejection for reason now, and how many were not logged since
// the last one.
func (r *reasonLog) allow(reason wire.Reason, now time.Time) (ok bool, suppressed int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s, seen := r.last[reason]
	if seen && now.Sub(s.at) < r.every {
		s.suppressed++
		r.last[reason] = s
		return false, 0
	}
	r.last[reason] = reasonState{at: now}
	return true, s.suppressed
}
