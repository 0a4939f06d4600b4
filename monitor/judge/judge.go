// Package judge is the monitor's live loop: it consumes telemetry from MQTT, applies the rules
// engine to each batch in arrival order, commits the resulting episodes and the engine's state in
// one transaction per group of batches, and only then acknowledges those batches to the broker.
// An event (an episode opened or closed) is committed ahead of its group, with the vehicles it
// concerns, and announced at once; the group's commit follows. Every transaction holds, for each
// vehicle it writes, its snapshot with the batches that snapshot has judged. A crash at any point
// therefore loses nothing and judges nothing twice: unacknowledged batches are redelivered and
// the restored cursors recognise the ones already judged.
package judge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	mqtt "github.com/eclipse/paho.mqtt.golang"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/internal/batchsig"
	"github.com/trenzinho/trenzinho/internal/replay"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Store persists what the engine changed.
type Store interface {
	// Commit writes the episodes, their new evidence, the vehicle snapshots and the judged
	// batches verbatim, atomically.
	Commit(ctx context.Context, c *rules.Changes, batches []store.Batch) error
	// VehicleSnapshots returns every vehicle snapshot committed so far.
	VehicleSnapshots(ctx context.Context) ([][]byte, error)
	// Quarantine keeps a message the monitor could not keep as a judged batch.
	Quarantine(ctx context.Context, q store.Quarantined) error
	// LoggedBatch returns the payload of a judged batch from the batch log (store.ErrNotFound
	// when it is not there).
	LoggedBatch(ctx context.Context, vehicle, epoch string, seq uint64) ([]byte, error)
}

// unsyncedCommitter is a Store that can commit without waiting for the disk
// (store.DB.CommitUnsynced): durable with its next Commit.
type unsyncedCommitter interface {
	CommitUnsynced(ctx context.Context, c *rules.Changes, batches []store.Batch) error
}

// Hub receives live events for the dashboard (Server-Sent Events).
type Hub interface {
	Publish(event string, data any)
	// PublishLatest publishes an event that a newer one with the same key replaces for a
	// client that has not been sent it yet (a vehicle's position).
	PublishLatest(event, key string, data any)
}

// Message is one MQTT message the judge must acknowledge once judged and committed.
type Message interface {
	Topic() string
	Payload() []byte
	Ack()
}

// Config configures a Judge.
type Config struct {
	Engine *rules.Engine
	Store  Store
	Hub    Hub // may be nil
	Logger *slog.Logger
	// Publish sends an episode event to trenzinho/v1/{vehicle}/episodes; may be nil.
	Publish func(topic string, payload []byte)
	// FlushEvery and FlushBatches bound how long and how many batches wait for a commit.
	FlushEvery   time.Duration
	FlushBatches int
	Metrics      prometheus.Registerer // receives the judge's metrics; nil: not registered
	Now          func() time.Time
	// Drafter makes drafts from closed episodes; nil: no drafts.
	Drafter *drafts.Drafter
	// DraftEvery is how often the drafter looks for groups ready to draft (5 s by default).
	DraftEvery time.Duration
	// Pruner deletes logged batches older than BatchRetention (48 h by default); may be nil.
	Pruner         func(ctx context.Context, before time.Time) (int64, error)
	BatchRetention time.Duration
	// Signatures is the signing policy (docs/protocol.md §6): a batch it refuses is counted
	// (rejected_total by reason), logged once per vehicle per minute, acknowledged and not
	// judged. The zero value accepts every batch that decodes.
	Signatures batchsig.Policy
	// Known reports whether a vehicle is registered; nil: no registry, and at most MaxVehicles
	// vehicles are tracked. Telemetry and status of a vehicle refused are rejected
	// (unknown_vehicle) and leave no state, no row and no metric label behind.
	Known func(vehicle string) bool
	// MaxVehicles bounds the vehicles tracked without a registry (DefaultMaxVehicles when ≤ 0).
	MaxVehicles int
	// Limits is the time window of valid batches (wire.DefaultLimits when zero): the same as
	// ingest's, so that the monitor never judges a batch the archive lacks.
	Limits wire.Limits
}

// Judge runs the live loop.
type Judge struct {
	cfg Config
	in  chan Message
	log *slog.Logger

	raw       []store.Batch     // judged batches waiting for the next commit
	held      map[string][]byte // vehicle snapshots drained from the engine, not committed yet
	lastDraft time.Time
	lastPrune time.Time
	sigLogged map[string]time.Time // vehicle → last log of a refused signature
	replays   *replay.Cache        // digests of recent batches: a changed replay is a conflict

	mu    sync.RWMutex
	fleet map[string]fleetEntry

	batches     *prometheus.CounterVec
	rejected    *prometheus.CounterVec
	commitDur   prometheus.Histogram
	commitErr   prometheus.Counter
	quarantined *prometheus.CounterVec
	openEpis    prometheus.Gauge
	episodes    *prometheus.CounterVec
	drafted     prometheus.Counter
	draftDur    prometheus.Histogram
}

// New returns a Judge. Call Restore before Run.
func New(cfg Config) *Judge {
	if cfg.FlushEvery <= 0 {
		// The group's commit, which acknowledges the messages, runs every 50 ms. When an
		// episode's announcement waited for it, 50 ms instead of 200 ms took the p99 from
		// publish to episode open with 2,000 vehicles from 341 to 167 ms, for about 10% more CPU
		// (docs/benchmarks.md, "Monitor: publish to episode"); an event commits ahead of it.
		cfg.FlushEvery = 50 * time.Millisecond
	}
	if cfg.FlushBatches <= 0 {
		cfg.FlushBatches = 500
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.DraftEvery <= 0 {
		cfg.DraftEvery = 5 * time.Second
	}
	if cfg.MaxVehicles <= 0 {
		cfg.MaxVehicles = DefaultMaxVehicles
	}
	if cfg.BatchRetention <= 0 {
		cfg.BatchRetention = store.DefaultBatchRetention
	}
	j := &Judge{
		cfg:     cfg,
		in:      make(chan Message, 4*cfg.FlushBatches),
		log:     cfg.Logger,
		fleet:   map[string]fleetEntry{},
		held:    map[string][]byte{},
		replays: replay.New(replay.DefaultSize),
		batches: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "trenzinho", Subsystem: "monitor", Name: "batches_total",
			Help: "Telemetry batches received, by outcome (judged, duplicate, conflict, rejected).",
		}, []string{"outcome"}),
		rejected: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "trenzinho", Subsystem: "monitor", Name: "rejected_total",
			Help: "Payloads the monitor could not judge, by wire reason.",
		}, []string{"reason"}),
		commitDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "trenzinho", Subsystem: "monitor", Name: "commit_seconds",
			Help: "Time to commit a group of judged batches.", Buckets: prometheus.ExponentialBuckets(0.001, 2, 14),
		}),
		commitErr: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "trenzinho", Subsystem: "monitor", Name: "commit_errors_total",
			Help: "Failed attempts to commit judged batches to the database (busy: retried until it passes; refused data: quarantined; anything else: the monitor stops after six in a row).",
		}),
		quarantined: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "trenzinho", Subsystem: "monitor", Name: "quarantined_total",
			Help: "Batches the monitor kept apart instead of judging or storing them, by reason (unstorable, conflict).",
		}, []string{"reason"}),
		episodes: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "trenzinho", Subsystem: "monitor", Name: "episodes_total",
			Help: "Episode events committed, by rule and event (open, close, reopen).",
		}, []string{"rule", "event"}),
		drafted: prometheus.NewCounter(prometheus.CounterOpts{
			Namespace: "trenzinho", Subsystem: "monitor", Name: "drafts_total",
			Help: "Drafts of autos de infração made.",
		}),
		draftDur: prometheus.NewHistogram(prometheus.HistogramOpts{
			Namespace: "trenzinho", Subsystem: "monitor", Name: "draft_run_seconds",
			Help:    "Time of one drafter run (every draft ready at a tick), beside the judging loop.",
			Buckets: []float64{.01, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}),
		openEpis: prometheus.NewGauge(prometheus.GaugeOpts{
			Namespace: "trenzinho", Subsystem: "monitor", Name: "open_episodes",
			Help: "Episodes open now.",
		}),
	}
	if cfg.Metrics != nil {
		cfg.Metrics.MustRegister(j.batches, j.rejected, j.commitDur, j.commitErr, j.quarantined, j.openEpis, j.episodes, j.drafted, j.draftDur, fleetCollector{j})
	}
	return j
}

// DefaultMaxVehicles is how many vehicles the monitor tracks without a registry.
const DefaultMaxVehicles = 10_000

// admits reports whether the monitor keeps state for the vehicle: with a registry, registered
// vehicles; without, those it tracks already and new ones up to MaxVehicles.
func (j *Judge) admits(vehicle string) bool {
	if j.cfg.Known != nil {
		return j.cfg.Known(vehicle)
	}
	return j.cfg.Engine.Tracks(vehicle) || j.cfg.Engine.Len() < j.cfg.MaxVehicles
}

// refuseUnknown counts a message of a vehicle the monitor does not admit; nothing else is kept.
func (j *Judge) refuseUnknown(kind string) {
	if kind == "telemetry" {
		j.batches.WithLabelValues("rejected").Inc()
	}
	j.rejected.WithLabelValues(string(wire.ReasonUnknownVehicle)).Inc()
}

// Restore loads the committed vehicle snapshots into the engine.
func (j *Judge) Restore(ctx context.Context) error {
	snaps, err := j.cfg.Store.VehicleSnapshots(ctx)
	if err != nil {
		return fmt.Errorf("judge: restore: %w", err)
	}
	for _, s := range snaps {
		if err := j.cfg.Engine.Restore(s); err != nil {
			return err
		}
	}
	j.refreshFleet(nil)
	return nil
}

// Handle is the MQTT message handler: it queues the message for the loop (blocking when the
// loop is behind, which holds back the broker: backpressure, not loss).
func (j *Judge) Handle(ctx context.Context, m Message) {
	select {
	case j.in <- m:
	case <-ctx.Done():
	}
}

// MQTTHandler adapts Handle to paho.
func (j *Judge) MQTTHandler(ctx context.Context) mqtt.MessageHandler {
	return func(_ mqtt.Client, m mqtt.Message) { j.Handle(ctx, m) }
}

// Run judges messages until ctx is cancelled; it commits what it has before returning.
func (j *Judge) Run(ctx context.Context) error {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	flush := time.NewTimer(j.cfg.FlushEvery)
	defer flush.Stop()
	var pending []Message
	commit := func() error {
		if err := j.commit(ctx, pending); err != nil {
			return err
		}
		pending = pending[:0]
		return nil
	}
	// The drafter runs beside the loop, never in it: a draft reads and verifies every batch of
	// its evidence window (a 4-hour episode's draft takes about a second here,
	// BenchmarkDraftLongEpisode), and a second the loop spent drafting would be a second of
	// every vehicle's batches waiting to be judged. One draft run at a time; a tick that finds
	// the drafter still busy leaves the work to a later one.
	draftAt := make(chan time.Time, 1)
	var drafting sync.WaitGroup
	if j.cfg.Drafter != nil {
		drafting.Add(1)
		go func() {
			defer drafting.Done()
			for now := range draftAt {
				j.draft(ctx, now)
			}
		}()
	}
	defer func() {
		close(draftAt)
		drafting.Wait()
	}()
	housekeeping := func(now time.Time) {
		if j.cfg.Drafter != nil && now.Sub(j.lastDraft) >= j.cfg.DraftEvery {
			select {
			case draftAt <- now:
				j.lastDraft = now
			default: // the previous run is still drafting
			}
		}
		if j.cfg.Pruner != nil && now.Sub(j.lastPrune) >= time.Hour {
			j.lastPrune = now
			if n, err := j.cfg.Pruner(ctx, now.Add(-j.cfg.BatchRetention)); err != nil {
				j.log.Error("prune batch log", "err", err)
			} else if n > 0 {
				j.log.Info("batch log pruned", "batches", n)
			}
		}
	}
	for {
		select {
		case <-ctx.Done():
			// Commit with a fresh context: what was judged must not be lost on shutdown.
			cctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return j.commit(cctx, pending)
		case m := <-j.in:
			j.judge(m)
			pending = append(pending, m)
			if len(pending) >= j.cfg.FlushBatches {
				if err := commit(); err != nil {
					return err
				}
			} else if j.cfg.Engine.PendingEvents() > 0 {
				// An event (an episode opened or closed) is announced after its commit: commit
				// it now rather than at the next FlushEvery, so that the announcement waits for
				// no timer, and only it (commitEvents), so that it waits for no other vehicle's
				// writes either. The messages are acknowledged at the next full commit.
				if err := j.commitEvents(ctx); err != nil {
					return err
				}
			}
		case <-flush.C:
			flush.Reset(j.cfg.FlushEvery)
			if err := commit(); err != nil {
				return err
			}
		case <-tick.C:
			now := j.cfg.Now()
			j.cfg.Engine.Tick(now)
			if err := commit(); err != nil {
				return err
			}
			j.countOpen()
			housekeeping(now)
		}
	}
}

// draft makes the drafts ready at now and announces each on the hub. It runs on the drafting
// goroutine of Run.
func (j *Judge) draft(ctx context.Context, now time.Time) {
	began := time.Now()
	made, err := j.cfg.Drafter.Run(ctx, now)
	j.draftDur.Observe(time.Since(began).Seconds())
	if err != nil && ctx.Err() == nil {
		j.log.Error("drafter", "err", err)
	}
	j.drafted.Add(float64(len(made)))
	for _, m := range made {
		if j.cfg.Hub != nil {
			// The summary only: the stream is open to every role, and a draft's facts
			// and warnings may name its driver (personal data, fiscal and above).
			j.cfg.Hub.Publish("draft", view.NewDraftSummary(&m.Draft, drafts.StatusDraft, "ok")) // sealed just now
		}
	}
}

func (j *Judge) judge(m Message) {
	now := j.cfg.Now()
	topic := m.Topic()
	vehicle, kind, err := wire.VehicleFromTopic(topic)
	if err != nil {
		j.batches.WithLabelValues("rejected").Inc()
		j.rejected.WithLabelValues(string(wire.ReasonBadTopic)).Inc()
		return
	}
	switch kind {
	case "status":
		st, err := wire.DecodeStatus(m.Payload())
		if err != nil {
			j.rejected.WithLabelValues(string(wire.ReasonOf(err))).Inc()
			return
		}
		s := *st
		if !j.admits(vehicle) {
			j.refuseUnknown(kind)
			return
		}
		// A status obeys the signing policy as a batch does; the MQTT will, unsigned, can only
		// say that the bridge went offline.
		if _, err := j.cfg.Signatures.CheckStatus(vehicle, &s, m.Payload()); err != nil {
			if !s.OfflineOnly() && s.Online {
				j.rejected.WithLabelValues(string(wire.ReasonOf(err))).Inc()
				return
			}
			s = wire.Status{Online: false}
			if prev := j.cfg.Engine.StatusOf(vehicle); prev != nil {
				s = *prev // what the last accepted status said, marked offline
				s.Online = false
			}
		}
		j.cfg.Engine.SetStatus(vehicle, &s, now)
		return
	case "telemetry":
	default:
		return
	}
	b, err := j.cfg.Limits.Decode(topic, m.Payload(), now)
	if err != nil {
		j.batches.WithLabelValues("rejected").Inc()
		j.rejected.WithLabelValues(string(wire.ReasonOf(err))).Inc()
		j.log.Debug("batch rejected", "topic", topic, "err", err)
		if wire.ReasonOf(err) == wire.ReasonFutureTime && j.admits(vehicle) {
			j.futureBatch(topic, m.Payload(), now)
		}
		return
	}
	if !j.admits(vehicle) {
		j.refuseUnknown(kind)
		return
	}
	if _, err := j.cfg.Signatures.Check(b, m.Payload()); err != nil {
		j.refuseSignature(b.Vehicle, err, now)
		return
	}
	digest := replay.Sum(m.Payload())
	seen, conflict := j.replays.Check(replay.Key{Vehicle: b.Vehicle, Epoch: b.Epoch, Seq: b.Seq}, digest)
	if conflict {
		j.conflict(b, m, now)
		return
	}
	res := j.cfg.Engine.Apply(b, now)
	if res.Duplicate {
		if !seen && j.changedSinceLogged(b, digest) {
			j.conflict(b, m, now)
			return
		}
		j.batches.WithLabelValues("duplicate").Inc()
		return
	}
	j.batches.WithLabelValues("judged").Inc()
	if tmin, tmax, ok := span(b); ok {
		// The warnings of the driver's coach are evidence, not readings: the rules never read
		// them; they are stored with their batch, in its commit (store.Warning).
		var licensee string
		if len(b.Warnings) > 0 {
			if v := j.cfg.Engine.VehicleByID(b.Vehicle); v != nil {
				licensee = v.Licensee
			}
		}
		j.raw = append(j.raw, store.Batch{Vehicle: b.Vehicle, Epoch: b.Epoch, Seq: b.Seq, ReceivedAt: now,
			TMin: tmin, TMax: tmax, Payload: append([]byte(nil), m.Payload()...),
			Warnings: b.Warnings, Clock: b.Clock, Licensee: licensee})
	}
}

// changedSinceLogged reports whether a duplicate the replay cache no longer remembers differs
// from the batch log's copy (one query per such duplicate: redeliveries after a restart).
func (j *Judge) changedSinceLogged(b *wire.Batch, digest replay.Digest) bool {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	logged, err := j.cfg.Store.LoggedBatch(ctx, b.Vehicle, b.Epoch, b.Seq)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			j.log.Warn("batch log lookup of a duplicate", "vehicle", b.Vehicle, "err", err)
		}
		return false
	}
	return replay.Sum(logged) != digest
}

// conflict handles a replay of a judged batch with other content: tamper evidence. The first is
// kept; this one is quarantined (conflict) and not judged, and the vehicle gets a
// telemetry_conflict episode.
func (j *Judge) conflict(b *wire.Batch, m Message, now time.Time) {
	j.batches.WithLabelValues("conflict").Inc()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	j.quarantine(ctx, store.Batch{Vehicle: b.Vehicle, Epoch: b.Epoch, Seq: b.Seq, ReceivedAt: now, Payload: m.Payload()},
		wire.ReasonConflict, fmt.Errorf("vehicle %s epoch %s seq %d was judged before with other content", b.Vehicle, b.Epoch, b.Seq))
	j.cfg.Engine.Conflict(b.Vehicle, b.Epoch, b.Seq, now)
}

// futureBatch records the clock fault of a batch refused as future_time: not judged, but evidence
// that the vehicle's clock is wrong (rules.ClockFault). Only a batch that is valid but for its
// times, and that the signing policy accepts, speaks for the vehicle.
func (j *Judge) futureBatch(topic string, payload []byte, now time.Time) {
	b, err := wire.Decode(topic, payload, time.Time{}) // no checks relative to the receipt
	if err != nil {
		return
	}
	if _, err := j.cfg.Signatures.Check(b, payload); err != nil {
		return
	}
	_, tmax, ok := span(b)
	if b.SentAt.After(tmax) || !ok {
		tmax = b.SentAt.Time
	}
	j.cfg.Engine.ClockFault(b.Vehicle, tmax.Sub(now), now)
}

// refuseSignature counts a batch the signing policy refused and logs it, once per vehicle per
// minute.
func (j *Judge) refuseSignature(vehicle string, err error, now time.Time) {
	j.batches.WithLabelValues("rejected").Inc()
	j.rejected.WithLabelValues(string(wire.ReasonOf(err))).Inc()
	if j.sigLogged == nil {
		j.sigLogged = map[string]time.Time{}
	}
	if last, ok := j.sigLogged[vehicle]; ok && now.Sub(last) < time.Minute {
		return
	}
	j.sigLogged[vehicle] = now
	j.log.Warn("batch refused by the signing policy; not judged", "vehicle", vehicle, "reason", wire.ReasonOf(err), "err", err)
}

// span returns the device times of a batch's first and last readings and warnings.
func span(b *wire.Batch) (tmin, tmax time.Time, ok bool) {
	see := func(t wire.Time) {
		if !ok || t.Before(tmin) {
			tmin = t.Time
		}
		if !ok || t.After(tmax) {
			tmax = t.Time
		}
		ok = true
	}
	for _, r := range b.GPS {
		see(r.T)
	}
	for _, r := range b.Tacho {
		see(r.T)
	}
	for _, r := range b.Sound {
		see(r.T)
	}
	for _, r := range b.Service {
		see(r.T)
	}
	for _, r := range b.Door {
		see(r.T)
	}
	for _, w := range b.Warnings { // a batch of warnings alone is logged as evidence too
		see(w.T)
	}
	return tmin, tmax, ok
}

// commit persists the engine's changes with every judged batch and every snapshot held back by
// commitEvents, then acknowledges the messages that caused them, then tells the world.
func (j *Judge) commit(ctx context.Context, msgs []Message) error {
	c, err := j.cfg.Engine.Drain()
	if err != nil {
		return err
	}
	for v, s := range j.held {
		if _, newer := c.Snapshots[v]; !newer {
			c.Snapshots[v] = s
		}
	}
	if !c.Empty() || len(j.raw) > 0 {
		start := time.Now()
		if err := j.store(ctx, true, &c, j.raw); err != nil {
			// Not acknowledged: the broker redelivers after a restart.
			return fmt.Errorf("judge: commit: %w", err)
		}
		j.commitDur.Observe(time.Since(start).Seconds())
		j.raw = j.raw[:0]
		clear(j.held)
	}
	for _, m := range msgs {
		m.Ack()
	}
	if c.Empty() {
		return nil
	}
	for _, ev := range c.Events {
		j.announce(ev)
	}
	j.refreshFleet(c.Snapshots)
	return nil
}

// commitEvents persists the engine's pending events ahead of the rest of the group, and
// announces them: their episodes and evidence, and the vehicles they concern — each one's
// snapshot with the batches judged for it since its last commit. The other vehicles' snapshots
// are held back (j.held) and their batches stay in j.raw, for the next full commit, which
// acknowledges the messages: none is acknowledged here.
//
// The announcement thus waits for the writes of the vehicles that have something to announce, not
// for the other vehicles' batch log rows and snapshots (docs/benchmarks.md, "Monitor: publish to
// episode"). Crash safety is the full commit's: every transaction carries, for each vehicle it
// writes, the snapshot together with the log rows of the batches that snapshot has judged, and a
// message is acknowledged only once everything judged up to it is committed. A kill between the two
// commits leaves the held vehicles as they were at their last commit, with their messages
// unacknowledged: the broker redelivers them and they are judged again; the vehicles committed here
// recognise theirs as judged, and find them in the batch log.
func (j *Judge) commitEvents(ctx context.Context) error {
	c, err := j.cfg.Engine.Drain()
	if err != nil {
		return err
	}
	now := rules.Changes{Episodes: c.Episodes, Evidence: c.Evidence, Events: c.Events, Snapshots: map[string][]byte{}}
	involved := map[string]bool{}
	for _, ev := range c.Events {
		involved[ev.Vehicle] = true
	}
	for i := range c.Episodes {
		involved[c.Episodes[i].Vehicle] = true
	}
	for v, s := range c.Snapshots {
		if !involved[v] {
			j.held[v] = s
		}
	}
	var raw, rest []store.Batch
	for _, b := range j.raw {
		if involved[b.Vehicle] {
			raw = append(raw, b)
		} else {
			rest = append(rest, b)
		}
	}
	for v := range involved {
		// The engine leaves out a snapshot equal to the last one it handed over, which may be
		// the one held here.
		s, ok := c.Snapshots[v]
		if !ok {
			s, ok = j.held[v]
		}
		if ok {
			now.Snapshots[v] = s
		}
		delete(j.held, v)
	}
	if now.Empty() && len(raw) == 0 {
		return nil
	}
	start := time.Now()
	// Not synced: a kill loses nothing, and what a power cut would take back is redelivered,
	// the group's commit, synced, making it durable before any acknowledgement.
	if err := j.store(ctx, false, &now, raw); err != nil {
		return fmt.Errorf("judge: commit: %w", err)
	}
	j.commitDur.Observe(time.Since(start).Seconds())
	j.raw = append(j.raw[:0], rest...)
	for _, ev := range now.Events {
		j.announce(ev)
	}
	j.refreshFleet(now.Snapshots)
	return nil
}

// maxCommitAttempts is how often a commit that fails neither transiently nor permanently (I/O,
// a full disk, a read-only or corrupt file) is tried before the monitor stops: an operator has
// to look, and the process exits non-zero so that its supervisor reports it.
const maxCommitAttempts = 6

// store commits c with the judged batches raw, synced or not (unsyncedCommitter). A transient failure (the database busy) is
// retried until it passes or ctx ends. When the database refuses the data for good (a
// constraint, a value it cannot hold), the changes are committed without the batch log and then
// each batch alone: a batch still refused is quarantined (store.Quarantine, a metric, an error
// log line for the alert) and the commit goes on without it. Any other failure is retried
// maxCommitAttempts times and then returned.
func (j *Judge) store(ctx context.Context, synced bool, c *rules.Changes, raw []store.Batch) error {
	commit := j.cfg.Store.Commit
	if u, ok := j.cfg.Store.(unsyncedCommitter); ok && !synced {
		commit = u.CommitUnsynced
	}
	apart := false // the changes are committed; raw is committed batch by batch
	for attempt := 1; ; attempt++ {
		var err error
		if !apart {
			err = commit(ctx, c, raw)
			if err != nil && store.Permanent(err) {
				j.commitErr.Inc()
				j.log.Warn("the database refuses part of a commit; committing the batches one by one", "err", err)
				err = commit(ctx, c, nil)
				if err == nil {
					apart = true
					// The engine's changes are committed (its cursors are past these batches):
					// each batch's own record — logged or quarantined — must follow even when the
					// monitor is stopping. Cut off here, a restart would take the redelivered
					// batch for one already judged and acknowledge it with no record at all.
					var cancel context.CancelFunc
					ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
					defer cancel()
				} else if store.Permanent(err) {
					// The engine's own output is refused: nothing a batch can be blamed for.
					return fmt.Errorf("the database refuses the engine's changes: %w", err)
				}
			}
		}
		if apart {
			for len(raw) > 0 {
				err = commit(ctx, &rules.Changes{}, raw[:1])
				if err != nil && store.Permanent(err) {
					j.quarantine(ctx, raw[0], wire.ReasonUnstorable, err)
					err = nil
				}
				if err != nil {
					break
				}
				raw = raw[1:]
			}
		}
		if err == nil {
			return nil
		}
		j.commitErr.Inc()
		if ctx.Err() != nil {
			return errors.Join(err, ctx.Err())
		}
		if !store.Transient(err) && attempt >= maxCommitAttempts {
			return fmt.Errorf("%d attempts: %w", attempt, err)
		}
		j.log.Warn("commit failed; retrying", "err", err, "attempt", attempt, "transient", store.Transient(err))
		wait := time.Duration(min(attempt, 10)) * 200 * time.Millisecond
		select {
		case <-ctx.Done():
			return errors.Join(err, ctx.Err())
		case <-time.After(wait):
		}
	}
}

// quarantine keeps a batch apart: in the database's quarantine (best effort: when even that is
// refused the log line and the metric remain), counted by reason, logged as an error.
func (j *Judge) quarantine(ctx context.Context, b store.Batch, reason wire.Reason, cause error) {
	j.quarantined.WithLabelValues(string(reason)).Inc()
	j.log.Error("batch quarantined", "reason", reason, "vehicle", b.Vehicle, "epoch", b.Epoch, "seq", b.Seq, "err", cause)
	q := store.Quarantined{ReceivedAt: b.ReceivedAt, Vehicle: b.Vehicle, Topic: wire.TelemetryTopic(b.Vehicle),
		Reason: reason, Detail: cause.Error(), Payload: b.Payload}
	if err := j.cfg.Store.Quarantine(ctx, q); err != nil {
		j.log.Error("quarantine record not stored", "vehicle", b.Vehicle, "err", err)
	}
}

func (j *Judge) announce(ev rules.Event) {
	switch ev.Kind {
	case rules.EventNewEpoch:
		j.log.Info("vehicle started a new sequence epoch", "vehicle", ev.Vehicle, "epoch", ev.Epoch)
		if j.cfg.Hub != nil {
			j.cfg.Hub.Publish("status", map[string]string{"vehicle": ev.Vehicle, "event": "new_epoch", "epoch": ev.Epoch})
		}
		return
	}
	if ev.Episode == nil {
		return
	}
	j.log.Info("episode "+string(ev.Kind), "episode", ev.Episode.ID, "vehicle", ev.Vehicle, "rule", ev.Episode.Rule, "peak", ev.Episode.Peak)
	if ev.Kind != rules.EventUpdate {
		j.episodes.WithLabelValues(ev.Episode.Rule, string(ev.Kind)).Inc()
	}
	if j.cfg.Publish != nil {
		if b, err := json.Marshal(ev.Episode); err == nil {
			j.cfg.Publish(wire.EpisodesTopic(ev.Vehicle), b)
		}
	}
	if j.cfg.Hub != nil {
		j.cfg.Hub.Publish("episode", struct {
			Event string `json:"event"`
			*rules.Episode
		}{string(ev.Kind), ev.Episode})
	}
}

// refreshFleet rebuilds the view of the vehicles in ids (all when ids is nil) and pushes their
// positions to the hub. With ids it visits those vehicles only: it runs at every commit.
func (j *Judge) refreshFleet(ids map[string][]byte) {
	now := j.cfg.Now()
	var views []fleetEntry
	if ids == nil {
		j.cfg.Engine.Vehicles(func(v *rules.Vehicle) { views = append(views, j.view(v, now)) })
		j.countOpen()
	} else {
		for id := range ids {
			if v := j.cfg.Engine.VehicleByID(id); v != nil {
				views = append(views, j.view(v, now))
			}
		}
	}
	j.mu.Lock()
	for _, v := range views {
		j.fleet[v.ID] = v
	}
	j.mu.Unlock()
	if j.cfg.Hub != nil && ids != nil {
		for _, v := range views {
			j.cfg.Hub.PublishLatest("position", v.ID, v.Vehicle)
		}
	}
}

// countOpen sets the open_episodes gauge (every second, from Run, and at Restore).
func (j *Judge) countOpen() {
	open := 0
	j.cfg.Engine.Vehicles(func(v *rules.Vehicle) {
		for _, ep := range v.Episodes { // not OpenEpisodeIDs, which allocates
			if ep.End == nil {
				open++
			}
		}
	})
	j.openEpis.Set(float64(open))
}

// onlineWithin is how recent a batch must be for a vehicle to count as online.
const onlineWithin = 2 * time.Minute

// fleetEntry is a vehicle as the dashboard shows it, and whether its bridge's will message
// said it went offline.
type fleetEntry struct {
	view.Vehicle
	statusOffline bool
}

func (j *Judge) view(v *rules.Vehicle, now time.Time) fleetEntry {
	e := fleetEntry{Vehicle: view.Vehicle{ID: v.ID, Licensee: v.Licensee, Epoch: v.Epoch, OpenEpisodes: v.OpenEpisodeIDs(),
		Telemetry: &view.Telemetry{OutOfOrder: v.OutOfOrder, NotEvidence: v.NotEvidence, Duplicates: v.Duplicates,
			ClockFaults: v.ClockFaults, ClockFault: v.ClockFaultID()}}}
	vv := &e.Vehicle
	if vv.OpenEpisodes == nil {
		vv.OpenEpisodes = []string{}
	}
	if !v.LastSeen.IsZero() {
		vv.LastSeen = wire.NewTime(v.LastSeen)
	}
	if f := v.LastGPS; f != nil {
		vv.Lat, vv.Lon, vv.CourseDeg = &f.Lat, &f.Lon, f.Course
	}
	// Speed and service as of the newest speed reading (sound readings may be timed a little
	// differently, by the bridge's clock).
	at := v.TachoT
	if v.LastGPS != nil && v.LastGPS.T.After(at) {
		at = v.LastGPS.T
	}
	if kmh, _, ok := v.SpeedAt(at); ok {
		vv.SpeedKmh = &kmh
	}
	vv.LAeqDB = v.LAeqDB
	if in, known := j.cfg.Engine.InService(v, at); known {
		vv.InService = &in
	}
	if s := v.Status; s != nil {
		vv.Devices = s.Devices
		vv.SpoolDepth = s.SpoolDepth
		vv.ConfigVersion = s.ConfigVersion
		e.statusOffline = !s.Online
	}
	e.setOnline(now)
	return e
}

// setOnline: a batch within onlineWithin and no will message since.
func (e *fleetEntry) setOnline(now time.Time) {
	on := !e.LastSeen.IsZero() && now.Sub(e.LastSeen.Time) < onlineWithin && !e.statusOffline
	e.Online = &on
}

// Vehicles returns the fleet as last committed, sorted by id.
func (j *Judge) Vehicles(context.Context) ([]view.Vehicle, error) {
	j.mu.RLock()
	defer j.mu.RUnlock()
	now := j.cfg.Now()
	out := make([]view.Vehicle, 0, len(j.fleet))
	for _, e := range j.fleet {
		e.setOnline(now)
		out = append(out, e.Vehicle)
	}
	slices.SortFunc(out, func(a, b view.Vehicle) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}
