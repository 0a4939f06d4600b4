package notify

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// fakeClock is a clock the test moves.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

// recorder is a Channel that keeps what it is given and fails as scripted. The real channels
// are tested against real servers in their packages and in TestSpeedingReachesTheMailbox;
// this one lets the routing tests count messages exactly.
type recorder struct {
	mu    sync.Mutex
	sent  []sentMsg
	fails []error // consumed one per Send
	calls int
}

type sentMsg struct {
	to string
	m  Message
}

func (r *recorder) Send(_ context.Context, to string, m Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls++
	if len(r.fails) > 0 {
		err := r.fails[0]
		r.fails = r.fails[1:]
		if err != nil {
			return err
		}
	}
	r.sent = append(r.sent, sentMsg{to, m})
	return nil
}

func (r *recorder) to(addr string) []Message {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Message
	for _, s := range r.sent {
		if s.to == addr {
			out = append(out, s.m)
		}
	}
	return out
}

// t0 is 20:00 in Piúma (23:00 UTC).
var t0 = time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)

func alertAt(i int, at time.Time) Alert {
	return Alert{EpisodeID: fmt.Sprintf("TR-01/speed/%d", i), Rule: "speed", Vehicle: "TR-01", Licensee: "L1",
		Severity: High, Start: at, Peak: 30, Limit: 20, Unit: "km/h", Lat: -20.84, Lon: -40.72}
}

func newTest(t *testing.T, users []User, sched Schedule) (*Dispatcher, *fakeClock, *recorder, *recorder, *prometheus.Registry) {
	t.Helper()
	clock := &fakeClock{t: t0}
	mail, tg := &recorder{}, &recorder{}
	reg := prometheus.NewRegistry()
	d, err := New(Config{
		Channels: map[string]Channel{"email": mail, "telegram": tg}, Users: users, Schedule: sched,
		Composer: Composer{BaseURL: "https://monitor.example"}, Clock: clock, Window: time.Minute,
		Backoff: 10 * time.Second, MaxBackoff: time.Minute, MaxAttempts: 3, Registerer: reg,
		Logger: slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatal(err)
	}
	return d, clock, mail, tg, reg
}

func both(id string) User {
	return User{ID: id, Addresses: []Address{{"email", id + "@piuma.example"}, {"telegram", id}}}
}

// TestBurstIsGrouped: 20 alerts in 10 s give each user, on each channel, the first alert at
// once and one message for the other 19 when the window ends.
func TestBurstIsGrouped(t *testing.T) {
	d, clock, mail, tg, _ := newTest(t, []User{both("ana"), both("bruno")}, nil)
	ctx := context.Background()
	for i := range 20 {
		d.Notify(alertAt(i, clock.Now()))
		d.Flush(ctx)
		clock.Advance(500 * time.Millisecond) // 20 alerts in 10 s
	}
	for _, ch := range []*recorder{mail, tg} {
		for _, to := range []string{"ana@piuma.example", "ana", "bruno@piuma.example", "bruno"} {
			if got := ch.to(to); len(got) > 1 {
				t.Fatalf("%s got %d messages during the burst", to, len(got))
			}
		}
	}
	clock.Advance(time.Minute)
	d.Flush(ctx)
	d.Flush(ctx) // nothing more
	for _, c := range []struct {
		ch *recorder
		to string
	}{{mail, "ana@piuma.example"}, {mail, "bruno@piuma.example"}, {tg, "ana"}, {tg, "bruno"}} {
		got := c.ch.to(c.to)
		if len(got) != 2 {
			t.Fatalf("%s: %d messages, want 2", c.to, len(got))
		}
		if got[0].Count != 1 || got[1].Count != 19 || !strings.Contains(got[1].Text, "e mais 18 alertas") {
			t.Errorf("%s: counts %d, %d; second text:\n%s", c.to, got[0].Count, got[1].Count, got[1].Text)
		}
	}
	// A quiet spell after the group: the next alert goes at once.
	clock.Advance(2 * time.Minute)
	d.Notify(alertAt(100, clock.Now()))
	d.Flush(ctx)
	if n := len(mail.to("ana@piuma.example")); n != 3 {
		t.Errorf("after the window: %d messages, want 3", n)
	}
	if d.Pending() != 0 {
		t.Errorf("%d pending", d.Pending())
	}
}

func TestQuietHoursAndDuty(t *testing.T) {
	quiet, err := ParseQuietHours("19:00-07:00")
	if err != nil {
		t.Fatal(err)
	}
	sleeper := both("ana")
	sleeper.Prefs.Quiet = &quiet
	carla := both("carla")
	carla.Prefs.OnDutyOnly = true
	carla.Prefs.Rules = []string{"hours"} // filters do not bind the person on duty
	sched := Schedule{{User: "carla", From: t0.Add(time.Hour), To: t0.Add(13 * time.Hour)}}
	d, clock, mail, _, reg := newTest(t, []User{sleeper, both("bruno"), carla}, sched)
	ctx := context.Background()

	// 20:00 local: Ana sleeps, Bruno gets it, Carla is not on duty yet.
	d.Notify(alertAt(1, clock.Now()))
	d.Flush(ctx)
	if len(mail.to("ana@piuma.example")) != 0 || len(mail.to("bruno@piuma.example")) != 1 || len(mail.to("carla@piuma.example")) != 0 {
		t.Fatalf("sent %+v", mail.sent)
	}
	if v := value(t, d.metrics.quiet); v != 1 {
		t.Errorf("quiet_hours_total %v", v)
	}
	// 21:30 local: Carla's shift began; she gets a speeding alert although she chose "hours".
	clock.Advance(90 * time.Minute)
	d.Notify(alertAt(2, clock.Now()))
	d.Flush(ctx)
	if len(mail.to("carla@piuma.example")) != 1 || len(mail.to("ana@piuma.example")) != 0 {
		t.Fatalf("sent %+v", mail.sent)
	}
	// 07:30 local the next day: Ana's quiet hours are over.
	clock.Advance(10 * time.Hour)
	d.Notify(alertAt(3, clock.Now()))
	d.Flush(ctx)
	if len(mail.to("ana@piuma.example")) != 1 {
		t.Errorf("Ana after her quiet hours: %d", len(mail.to("ana@piuma.example")))
	}
	if n := series(t, reg, "trenzinho_notify_sent_total"); n != 2 {
		t.Errorf("sent_total has %d series, want one per channel", n)
	}
	// Bruno 3, Carla 2 (her shift runs to 09:00 local), Ana 1.
	if v := value(t, d.metrics.sent.WithLabelValues("email")); v != 6 {
		t.Errorf("email sent %v, want 6", v)
	}
}

func TestPreferences(t *testing.T) {
	a := alertAt(1, t0) // speed, TR-01, L1, high
	for _, c := range []struct {
		p    Preferences
		want bool
	}{
		{Preferences{}, true},
		{Preferences{Rules: []string{"hours"}}, false},
		{Preferences{Rules: []string{"hours", "speed"}}, true},
		{Preferences{Vehicles: []string{"TR-02"}}, false},
		{Preferences{Vehicles: []string{"TR-02"}, Licensees: []string{"L1"}}, true},
		{Preferences{Licensees: []string{"L2"}}, false},
		{Preferences{MinSeverity: High}, true},
	} {
		if got := c.p.Matches(a); got != c.want {
			t.Errorf("%+v: %v", c.p, got)
		}
	}
	low := a
	low.Severity = Low
	if (Preferences{MinSeverity: Medium}).Matches(low) {
		t.Error("a low alert passed a medium minimum")
	}

	// Channels: only Telegram for Ana.
	ana := both("ana")
	ana.Prefs.Channels = []string{"telegram"}
	d, _, mail, tg, _ := newTest(t, []User{ana}, nil)
	d.Notify(a)
	d.Notify(a) // the same episode again: nothing more
	d.Flush(context.Background())
	if len(mail.sent) != 0 || len(tg.sent) != 1 {
		t.Errorf("email %d telegram %d", len(mail.sent), len(tg.sent))
	}
}

func TestQuietHoursCovers(t *testing.T) {
	loc := saoPaulo
	at := func(h, m int) time.Time { return time.Date(2026, 12, 1, h, m, 0, 0, loc) }
	for _, c := range []struct {
		q    string
		t    time.Time
		want bool
	}{
		{"22:00-07:00", at(23, 0), true},
		{"22:00-07:00", at(6, 59), true},
		{"22:00-07:00", at(7, 0), false},
		{"22:00-07:00", at(21, 59), false},
		{"12:00-14:00", at(13, 0), true},
		{"12:00-14:00", at(14, 0), false},
		{"08:00-08:00", at(8, 0), false},
	} {
		q, err := ParseQuietHours(c.q)
		if err != nil {
			t.Fatal(err)
		}
		if got := q.Covers(c.t.UTC(), loc); got != c.want {
			t.Errorf("%s at %s: %v", c.q, c.t.Format("15:04"), got)
		}
	}
	for _, bad := range []string{"", "22-07", "25:00-07:00", "22:60-07:00"} {
		if _, err := ParseQuietHours(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

func TestRetriesAndDeadLetters(t *testing.T) {
	d, clock, mail, tg, _ := newTest(t, []User{both("ana")}, nil)
	ctx := context.Background()
	// E-mail: two transient failures, then delivered. Telegram: a permanent failure.
	mail.fails = []error{Transient(errors.New("451 try later"), 0), Transient(errors.New("flood"), 25*time.Second)}
	tg.fails = []error{Permanent(errors.New("403 blocked"))}
	d.Notify(alertAt(1, clock.Now()))
	d.Flush(ctx)
	if mail.calls != 1 || tg.calls != 1 {
		t.Fatalf("calls %d %d", mail.calls, tg.calls)
	}
	clock.Advance(9 * time.Second) // backoff 10 s not over
	d.Flush(ctx)
	if mail.calls != 1 {
		t.Fatalf("retried before the backoff: %d calls", mail.calls)
	}
	clock.Advance(time.Second)
	d.Flush(ctx)
	if mail.calls != 2 {
		t.Fatalf("not retried after the backoff: %d calls", mail.calls)
	}
	clock.Advance(20 * time.Second) // second backoff 20 s, but the server asked 25 s
	d.Flush(ctx)
	if mail.calls != 2 {
		t.Fatalf("retry_after not honoured: %d calls", mail.calls)
	}
	clock.Advance(5 * time.Second)
	d.Flush(ctx)
	if len(mail.sent) != 1 || mail.calls != 3 {
		t.Fatalf("not delivered: %d sent, %d calls", len(mail.sent), mail.calls)
	}
	if v := value(t, d.metrics.retried.WithLabelValues("email")); v != 2 {
		t.Errorf("email retried %v", v)
	}
	dead := d.DeadLetters()
	if len(dead) != 1 || dead[0].Channel != "telegram" || dead[0].Attempts != 1 || dead[0].Episodes[0] != "TR-01/speed/1" {
		t.Fatalf("dead letters %+v", dead)
	}

	// Always transient: given up after MaxAttempts (3).
	clock.Advance(time.Hour)
	mail.fails = []error{errors.New("reset"), errors.New("reset"), errors.New("reset")}
	tg.fails = nil
	d.Notify(alertAt(2, clock.Now()))
	for range 10 {
		d.Flush(ctx)
		clock.Advance(time.Minute)
	}
	if mail.calls != 6 || len(d.DeadLetters()) != 2 || d.Pending() != 0 {
		t.Errorf("calls %d dead %d pending %d", mail.calls, len(d.DeadLetters()), d.Pending())
	}
	if v := value(t, d.metrics.failed.WithLabelValues("email")); v != 1 {
		t.Errorf("email failed %v", v)
	}
}

func TestRunSendsAndStops(t *testing.T) {
	d, clock, mail, _, _ := newTest(t, []User{both("ana")}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx, 10*time.Millisecond) }()
	d.Notify(alertAt(1, clock.Now()))
	deadline := time.Now().Add(10 * time.Second)
	for len(mail.to("ana@piuma.example")) == 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if len(mail.to("ana@piuma.example")) != 1 {
		t.Error("Run did not send")
	}
}

func TestMetricsNeedOwnRegistry(t *testing.T) {
	reg := prometheus.NewRegistry()
	for i, want := range []bool{true, false} {
		_, err := New(Config{Channels: map[string]Channel{"email": &recorder{}}, Registerer: reg})
		if (err == nil) != want {
			t.Errorf("New #%d on one registry: %v", i, err)
		}
	}
}

func value(t *testing.T, m prometheus.Metric) float64 {
	t.Helper()
	var pb dto.Metric
	if err := m.Write(&pb); err != nil {
		t.Fatal(err)
	}
	return pb.GetCounter().GetValue()
}

func series(t *testing.T, g prometheus.Gatherer, name string) int {
	t.Helper()
	mfs, err := g.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() == name {
			return len(mf.GetMetric())
		}
	}
	return 0
}
