package notify

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"golang.org/x/sync/errgroup"
)

// Clock tells the time; tests pass a fake one.
type Clock interface{ Now() time.Time }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

// Config configures a Dispatcher. Zero values take the defaults documented on each field.
type Config struct {
	// Channels by name ("email", "telegram", "webpush"): the names in Address.Channel.
	Channels map[string]Channel
	Users    []User
	Schedule Schedule
	Composer Composer
	Clock    Clock // the real clock when nil
	// Window is the grouping window: after a message to an address, the alerts of the next
	// Window go out together in one message when it ends ("e mais N alertas"). 5 min.
	Window time.Duration
	// MaxAttempts is how many times a message is tried before it goes to the dead letters. 5.
	MaxAttempts int
	// Backoff is the wait before the first retry, doubled at each next one up to MaxBackoff
	// (30 s and 15 min); a longer wait the remote side asked for (retry_after) wins.
	Backoff, MaxBackoff time.Duration
	// Concurrency bounds the messages in flight. 4.
	Concurrency int
	// MaxQueue bounds the messages waiting to be sent or retried; beyond it new ones are
	// dropped and counted (a broken SMTP server must not grow the monitor's memory). 10,000.
	MaxQueue int
	// MaxDeadLetters is how many dead letters are kept, the newest (in memory or in the
	// DeadLetterStore). 1,000.
	MaxDeadLetters int
	// DeadLetterStore keeps the dead letters across restarts, for the admin to list and retry
	// (*store.DB); nil: they are kept in memory only (DeadLetters).
	DeadLetterStore DeadLetterStore
	// DeadLetterMaxAge is how long a stored dead letter is kept. 30 days.
	DeadLetterMaxAge time.Duration
	// Registerer receives the metrics; none when nil.
	Registerer prometheus.Registerer
	Logger     *slog.Logger // slog.Default() when nil
}

// DeadLetter is a message given up: a permanent error or the retries exhausted.
type DeadLetter struct {
	At       time.Time
	User     string
	Channel  string
	To       string // the address; a push subscription is shown as its endpoint's host
	Subject  string
	Episodes []string
	Attempts int
	Error    string
}

// delivery is one message to one address: the alerts it covers, and its attempts so far.
type delivery struct {
	user, channel, to string
	alerts            []Alert
	more              int // alerts beyond the ones kept
	attempts          int
	due               time.Time
}

func (dl *delivery) add(a Alert) {
	if len(dl.alerts) <= maxListed {
		dl.alerts = append(dl.alerts, a)
	} else {
		dl.more++
	}
}

// slot is the grouping state of one address.
type slot struct {
	lastSent time.Time
	pending  *delivery
}

// Dispatcher routes alerts to users' channels. Notify never waits for the network; Run sends.
type Dispatcher struct {
	cfg     Config
	clock   Clock
	log     *slog.Logger
	metrics *metrics
	wake    chan struct{}
	// retryMu serializes the admins' retries of dead letters: two at once of the same letter
	// would send it twice.
	retryMu sync.Mutex

	mu       sync.Mutex
	users    []User
	schedule Schedule
	slots    map[string]*slot
	queue    []*delivery // due or waiting for a retry
	seen     map[string]time.Time
	dead     []DeadLetter
}

// New checks cfg and returns a Dispatcher.
func New(cfg Config) (*Dispatcher, error) {
	if cfg.Clock == nil {
		cfg.Clock = realClock{}
	}
	if cfg.Window <= 0 {
		cfg.Window = 5 * time.Minute
	}
	if cfg.MaxAttempts <= 0 {
		cfg.MaxAttempts = 5
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 30 * time.Second
	}
	if cfg.MaxBackoff <= 0 {
		cfg.MaxBackoff = 15 * time.Minute
	}
	if cfg.Concurrency <= 0 {
		cfg.Concurrency = 4
	}
	if cfg.MaxQueue <= 0 {
		cfg.MaxQueue = 10_000
	}
	if cfg.MaxDeadLetters <= 0 {
		cfg.MaxDeadLetters = 1000
	}
	if cfg.DeadLetterMaxAge <= 0 {
		cfg.DeadLetterMaxAge = 30 * 24 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	names := make([]string, 0, len(cfg.Channels))
	for n := range cfg.Channels {
		names = append(names, n)
	}
	m, err := newMetrics(cfg.Registerer, names)
	if err != nil {
		return nil, err
	}
	d := &Dispatcher{cfg: cfg, clock: cfg.Clock, log: cfg.Logger, metrics: m, wake: make(chan struct{}, 1),
		slots: map[string]*slot{}, seen: map[string]time.Time{}}
	if err := d.SetUsers(cfg.Users, cfg.Schedule); err != nil {
		return nil, err
	}
	return d, nil
}

// SetUsers replaces the users and the schedule (after an edit on the dashboard).
func (d *Dispatcher) SetUsers(users []User, schedule Schedule) error {
	for _, u := range users {
		for _, a := range u.Addresses {
			if _, ok := d.cfg.Channels[a.Channel]; !ok {
				d.log.Warn("notify: user address of a channel not configured; ignored", "user", u.ID, "channel", a.Channel)
			}
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.users = slices.Clone(users)
	d.schedule = slices.Clone(schedule)
	return nil
}

// seenFor is how long an episode is remembered, so that a second Notify of the same episode
// (a replay, a restart) sends nothing.
const seenFor = 24 * time.Hour

// Notify routes an alert. It only queues: the messages go out in Run.
func (d *Dispatcher) Notify(a Alert) {
	now := d.clock.Now()
	loc := d.cfg.Composer.loc()
	d.mu.Lock()
	if a.EpisodeID != "" {
		if _, dup := d.seen[a.EpisodeID]; dup {
			d.mu.Unlock()
			return
		}
		d.seen[a.EpisodeID] = now
	}
	onDuty := d.schedule.OnDuty(now)
	queued := false
	for _, u := range d.users {
		duty := slices.Contains(onDuty, u.ID)
		p := u.Prefs
		switch {
		case p.OnDutyOnly && !duty:
			continue
		case a.Severity < p.MinSeverity:
			continue
		case duty:
			// The person on duty gets every alert of their minimum severity, whatever their
			// filters and quiet hours: being on call is the reason to be woken.
		case !p.Matches(a):
			continue
		case p.Quiet != nil && p.Quiet.Covers(now, loc):
			d.metrics.quiet.Inc()
			continue
		}
		for _, addr := range u.Addresses {
			if _, ok := d.cfg.Channels[addr.Channel]; !ok || !p.uses(addr.Channel) {
				continue
			}
			queued = d.route(u.ID, addr, a, now) || queued
		}
	}
	d.mu.Unlock()
	if queued {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// Escalate sends a to the users named (the supervisors of an escalation, Escalator) on each of
// their addresses of the channels they chose, whatever their filters and quiet hours: an
// escalation is the reason to be woken, like being on duty. Unlike Notify it sends an episode
// already notified; a name not among the users is logged and skipped.
func (d *Dispatcher) Escalate(a Alert, users []string) {
	now := d.clock.Now()
	d.mu.Lock()
	queued := false
	for _, name := range users {
		i := slices.IndexFunc(d.users, func(u User) bool { return u.ID == name })
		if i < 0 {
			d.log.Warn("notify: escalation to a user not in the notifications file", "user", name)
			continue
		}
		u := d.users[i]
		for _, addr := range u.Addresses {
			if _, ok := d.cfg.Channels[addr.Channel]; !ok || !u.Prefs.uses(addr.Channel) {
				continue
			}
			queued = d.route(u.ID, addr, a, now) || queued
		}
	}
	d.mu.Unlock()
	if queued {
		select {
		case d.wake <- struct{}{}:
		default:
		}
	}
}

// route queues a for one address: at once when nothing went to it in the last Window, else
// grouped with the others of the window. It reports whether something is due now.
func (d *Dispatcher) route(user string, addr Address, a Alert, now time.Time) bool {
	key := user + "\x00" + addr.Channel + "\x00" + addr.To
	s := d.slots[key]
	if s == nil {
		s = &slot{}
		d.slots[key] = s
	}
	if s.pending != nil {
		s.pending.add(a)
		return false
	}
	if !s.lastSent.IsZero() && now.Sub(s.lastSent) < d.cfg.Window {
		s.pending = &delivery{user: user, channel: addr.Channel, to: addr.To, due: s.lastSent.Add(d.cfg.Window)}
		s.pending.add(a)
		return false
	}
	s.lastSent = now
	return d.enqueue(&delivery{user: user, channel: addr.Channel, to: addr.To, alerts: []Alert{a}, due: now})
}

func (d *Dispatcher) enqueue(dl *delivery) bool {
	if len(d.queue) >= d.cfg.MaxQueue {
		d.metrics.dropped.WithLabelValues(dl.channel).Inc()
		d.log.Warn("notify: queue full, message dropped", "channel", dl.channel, "user", dl.user)
		return false
	}
	d.queue = append(d.queue, dl)
	d.metrics.queued.WithLabelValues(dl.channel).Inc()
	return true
}

// due takes the deliveries due at now: queued ones and the groups whose window ended.
func (d *Dispatcher) due(now time.Time) []*delivery {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []*delivery
	rest := d.queue[:0]
	for _, dl := range d.queue {
		if !dl.due.After(now) {
			out = append(out, dl)
		} else {
			rest = append(rest, dl)
		}
	}
	clear(d.queue[len(rest):])
	d.queue = rest
	for key, s := range d.slots {
		switch {
		case s.pending != nil && !s.pending.due.After(now):
			out = append(out, s.pending)
			s.pending, s.lastSent = nil, now
		case s.pending == nil && now.Sub(s.lastSent) >= d.cfg.Window:
			delete(d.slots, key)
		}
	}
	for id, t := range d.seen {
		if now.Sub(t) > seenFor {
			delete(d.seen, id)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].due.Before(out[j].due) })
	return out
}

// Flush sends every message due now and waits for them: the messages that fail transiently
// are queued again for later, the others go to the dead letters.
func (d *Dispatcher) Flush(ctx context.Context) {
	now := d.clock.Now()
	batch := d.due(now)
	if len(batch) == 0 {
		return
	}
	var g errgroup.Group
	g.SetLimit(d.cfg.Concurrency)
	for _, dl := range batch {
		g.Go(func() error {
			d.send(ctx, dl)
			return nil
		})
	}
	g.Wait()
}

func (d *Dispatcher) send(ctx context.Context, dl *delivery) {
	m := d.cfg.Composer.Compose(dl.alerts, dl.more)
	dl.attempts++
	err := d.cfg.Channels[dl.channel].Send(ctx, dl.to, m)
	if err == nil {
		d.metrics.sent.WithLabelValues(dl.channel).Inc()
		return
	}
	if ctx.Err() != nil {
		// Stopping: the message is lost with the process (the alert stays on the dashboard).
		d.log.Info("notify: message not sent, stopping", "channel", dl.channel, "user", dl.user)
		return
	}
	transient, after := Classify(err)
	now := d.clock.Now()
	if transient && dl.attempts < d.cfg.MaxAttempts {
		wait := d.cfg.Backoff << (dl.attempts - 1)
		if wait > d.cfg.MaxBackoff || wait <= 0 {
			wait = d.cfg.MaxBackoff
		}
		wait = max(wait, after)
		dl.due = now.Add(wait)
		d.metrics.retried.WithLabelValues(dl.channel).Inc()
		d.log.Warn("notify: send failed, will retry", "channel", dl.channel, "user", dl.user, "attempt", dl.attempts, "in", wait, "err", err)
		d.mu.Lock()
		d.enqueue(dl)
		d.mu.Unlock()
		return
	}
	d.metrics.failed.WithLabelValues(dl.channel).Inc()
	d.log.Error("notify: message given up", "channel", dl.channel, "user", dl.user, "attempts", dl.attempts, "err", err)
	letter := DeadLetter{At: now, User: dl.user, Channel: dl.channel, To: displayAddress(dl.channel, dl.to),
		Subject: m.Subject, Attempts: dl.attempts, Error: err.Error()}
	for _, a := range dl.alerts {
		letter.Episodes = append(letter.Episodes, a.EpisodeID)
	}
	if d.cfg.DeadLetterStore != nil {
		err := d.storeDeadLetter(ctx, dl, letter)
		if err == nil {
			return
		}
		d.log.Error("notify: dead letter not stored; kept in memory", "channel", dl.channel, "user", dl.user, "err", err)
	}
	d.mu.Lock()
	d.dead = append(d.dead, letter)
	if n := len(d.dead) - d.cfg.MaxDeadLetters; n > 0 {
		d.dead = slices.Delete(d.dead, 0, n)
	}
	d.mu.Unlock()
}

// displayAddress keeps a push subscription's keys out of the dead letters.
func displayAddress(channel, to string) string {
	if channel != "webpush" {
		return to
	}
	var sub struct {
		Endpoint string `json:"endpoint"`
	}
	if err := jsonUnmarshal(to, &sub); err == nil {
		if u, err := url.Parse(sub.Endpoint); err == nil {
			return u.Host
		}
	}
	return "(assinatura push)"
}

// DeadLetters lists the messages given up, oldest first.
func (d *Dispatcher) DeadLetters() []DeadLetter {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.dead)
}

// Pending is the number of messages waiting: queued, retrying or grouped.
func (d *Dispatcher) Pending() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	n := len(d.queue)
	for _, s := range d.slots {
		if s.pending != nil {
			n++
		}
	}
	return n
}

// Run sends the messages as they fall due, checking every tick (1 s when zero), until ctx
// ends.
func (d *Dispatcher) Run(ctx context.Context, tick time.Duration) error {
	if tick <= 0 {
		tick = time.Second
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			if n := d.Pending(); n > 0 {
				d.log.Info("notify: stopping with messages not sent", "pending", n)
			}
			return nil
		case <-d.wake:
		case <-t.C:
		}
		d.Flush(ctx)
	}
}

type metrics struct {
	queued, sent, failed, retried, dropped *prometheus.CounterVec
	quiet                                  prometheus.Counter
}

func newMetrics(reg prometheus.Registerer, channels []string) (*metrics, error) {
	counter := func(name, help string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{Namespace: "trenzinho", Subsystem: "notify", Name: name, Help: help}, []string{"channel"})
	}
	m := &metrics{
		queued:  counter("queued_total", "Messages queued for the channel, retries included: each ends sent, failed or retried."),
		sent:    counter("sent_total", "Messages delivered to the channel."),
		failed:  counter("failed_total", "Messages given up (dead letters): a permanent error or the retries exhausted."),
		retried: counter("retried_total", "Failed attempts queued for a retry."),
		dropped: counter("dropped_total", "Messages dropped because the queue was full."),
		quiet: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "trenzinho", Subsystem: "notify", Name: "quiet_hours_total",
			Help: "Alerts not sent to a user because of their quiet hours."}),
	}
	// Every channel's series exist from the start, so that a rate() sees the first failure.
	for _, c := range channels {
		for _, v := range []*prometheus.CounterVec{m.queued, m.sent, m.failed, m.retried, m.dropped} {
			v.WithLabelValues(c)
		}
	}
	if reg != nil {
		for _, c := range []prometheus.Collector{m.queued, m.sent, m.failed, m.retried, m.dropped, m.quiet} {
			if err := reg.Register(c); err != nil {
				return nil, fmt.Errorf("notify metrics: %w", err)
			}
		}
	}
	return m, nil
}
