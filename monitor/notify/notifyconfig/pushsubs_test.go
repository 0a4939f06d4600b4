package notifyconfig

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/webpush"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// recorder is a notify.Channel that keeps where each message went: the routing is under test
// here, the Web Push delivery itself in package webpush.
type recorder struct {
	mu sync.Mutex
	to []string
}

func (r *recorder) Send(_ context.Context, to string, _ notify.Message) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.to = append(r.to, to)
	return nil
}

// TestDirectoryAddsPushSubscriptions: the subscriptions made in the dashboard join their
// users' webpush addresses whatever the source of the preferences (file, saved, none), an
// endpoint the file names already is not doubled, a disabled account's are left out; the
// subscription is checked by the sender's guard before it is stored; the next alert reaches
// the new subscription; without Web Push configured no subscription is taken.
// stepClock moves an hour at each reading, so that each alert of a test comes after the
// grouping window of the one before, however fast the machine.
type stepClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *stepClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(time.Hour)
	return c.t
}

func TestDirectoryAddsPushSubscriptions(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	fileSub := "https://fcm.googleapis.com/fcm/send/ana-phone"
	f, err := Parse([]byte(`
webpush: {subject: "mailto:f@piuma.example"}
users:
  - {id: ana, webpush: ['`+pushTo(fileSub)+`']}
  - {id: bruno, rules: [speed]}
`), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ana", "bruno", "carla", "davi", "erin"} {
		if _, err := db.CreateUser(ctx, n, "senha-de-teste-1", store.RoleFiscal); err != nil {
			t.Fatal(err)
		}
	}
	if err := db.SetNotifyPrefs(ctx, store.NotifyPrefs{User: "erin", Email: "erin@db.example", MinSeverity: "high"}); err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	d, err := notify.New(notify.Config{Channels: map[string]notify.Channel{"webpush": rec}, Window: time.Minute, Clock: &stepClock{t: time.Now()}})
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := webpush.GenerateKeys()
	dir := NewDirectory(DirectoryConfig{File: f, Store: db, Dispatcher: d, VAPIDPublicKey: keys.PublicString()})
	if dir.VAPIDPublicKey() != keys.PublicString() {
		t.Fatalf("key %q", dir.VAPIDPublicKey())
	}

	add := func(user, endpoint string) {
		t.Helper()
		if _, _, err := dir.AddPushSubscription(ctx, user, pushTo(endpoint), "aparelho"); err != nil {
			t.Fatalf("%s %s: %v", user, endpoint, err)
		}
	}
	add("ana", fileSub) // the file's own, subscribed again from the dashboard
	add("ana", "https://updates.push.services.mozilla.com/wpush/v2/ana-laptop")
	add("bruno", "https://fcm.googleapis.com/fcm/send/bruno")
	add("carla", "https://fcm.googleapis.com/fcm/send/carla")
	add("davi", "https://fcm.googleapis.com/fcm/send/davi")
	add("erin", "https://fcm.googleapis.com/fcm/send/erin")
	if err := db.SetDisabled(ctx, "davi", true); err != nil {
		t.Fatal(err)
	}
	for _, ep := range []string{"https://127.0.0.1/write", "https://influx.piuma.example/", "http://fcm.googleapis.com/x"} {
		_, _, err := dir.AddPushSubscription(ctx, "ana", pushTo(ep), "")
		if !errors.Is(err, webpush.ErrBadSubscription) {
			t.Errorf("%s: %v, want a refusal", ep, err)
		}
	}

	saved, _ := db.AllNotifyPrefs(ctx)
	subs, _ := db.AllPushSubscriptions(ctx)
	users, _ := dir.merge(saved, nil, subs)
	pushes := map[string][]string{}
	byID := map[string]notify.User{}
	for _, u := range users {
		byID[u.ID] = u
		for _, a := range u.Addresses {
			if a.Channel == "webpush" {
				sub, _, _, err := webpush.ParseSubscription(a.To)
				if err != nil {
					t.Fatalf("%s: %v", u.ID, err)
				}
				pushes[u.ID] = append(pushes[u.ID], sub.Endpoint)
			}
		}
	}
	want := map[string][]string{
		"ana":   {fileSub, "https://updates.push.services.mozilla.com/wpush/v2/ana-laptop"},
		"bruno": {"https://fcm.googleapis.com/fcm/send/bruno"},
		"carla": {"https://fcm.googleapis.com/fcm/send/carla"},
		"erin":  {"https://fcm.googleapis.com/fcm/send/erin"},
	}
	for u, w := range want {
		if !slices.Equal(pushes[u], w) {
			t.Errorf("%s's push addresses %v, want %v", u, pushes[u], w)
		}
	}
	if _, ok := byID["davi"]; ok {
		t.Error("the disabled davi is notified")
	}
	if !slices.Equal(byID["bruno"].Prefs.Rules, []string{"speed"}) || byID["erin"].Prefs.MinSeverity != notify.High {
		t.Errorf("preferences lost: bruno %+v, erin %+v", byID["bruno"].Prefs, byID["erin"].Prefs)
	}

	// The dispatcher has them: carla, who chose nothing, receives a medium alert on her phone.
	if err := dir.Refresh(ctx); err != nil {
		t.Fatal(err)
	}
	d.Notify(notify.Alert{EpisodeID: "e1", Rule: "noise_limit", Vehicle: "PIU-001", Severity: notify.Medium, Start: time.Now()})
	d.Flush(ctx)
	var got []string
	for _, to := range rec.to {
		sub, _, _, _ := webpush.ParseSubscription(to)
		got = append(got, sub.Endpoint)
	}
	slices.Sort(got)
	wantSent := []string{"https://fcm.googleapis.com/fcm/send/carla", fileSub, "https://updates.push.services.mozilla.com/wpush/v2/ana-laptop"}
	slices.Sort(wantSent)
	if !slices.Equal(got, wantSent) {
		t.Errorf("a medium noise alert went to %v, want %v (bruno follows speed only, erin high only)", got, wantSent)
	}

	// Removing one hands the change over too.
	mine, _ := db.PushSubscriptions(ctx, "carla")
	if _, err := dir.DeletePushSubscription(ctx, "ana", mine[0].ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ana removes carla's: %v", err)
	}
	if _, err := dir.DeletePushSubscription(ctx, "carla", mine[0].ID); err != nil {
		t.Fatal(err)
	}
	rec.to = nil
	d.Notify(notify.Alert{EpisodeID: "e2", Rule: "noise_limit", Vehicle: "PIU-002", Severity: notify.Medium, Start: time.Now()})
	d.Flush(ctx)
	if len(rec.to) != 2 {
		t.Errorf("after carla's removal %d messages, want ana's 2", len(rec.to))
	}

	// No Web Push in the file: no key, no subscription.
	off := NewDirectory(DirectoryConfig{File: &File{}, Store: db, VAPIDPublicKey: keys.PublicString()})
	if off.VAPIDPublicKey() != "" {
		t.Error("a key without webpush")
	}
	if _, _, err := off.AddPushSubscription(ctx, "ana", pushTo(fileSub), ""); !errors.Is(err, ErrWebPushOff) {
		t.Errorf("subscription without webpush: %v", err)
	}
}

// goneService is a Web Push channel whose push service no longer knows one endpoint: the error
// webpush.Sender returns for 404 and 410.
type goneService struct {
	recorder
	gone string
}

func (g *goneService) Send(ctx context.Context, to string, m notify.Message) error {
	sub, _, _, _ := webpush.ParseSubscription(to)
	if sub.Endpoint == g.gone {
		return notify.Permanent(fmt.Errorf("%w: web push to fcm.googleapis.com: 410 Gone", webpush.ErrGone))
	}
	return g.recorder.Send(ctx, to, m)
}

// TestPushGoneRemoved: a subscription the push service says is gone is removed from the store
// (audited as notify.push.gone), and the next alert is not sent to it; the user's other device
// keeps receiving.
func TestPushGoneRemoved(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f, err := Parse([]byte("webpush: {subject: \"mailto:f@piuma.example\"}\n"), "n.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.CreateUser(ctx, "ana", "senha-de-teste-1", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	old, phone := "https://fcm.googleapis.com/fcm/send/old-phone", "https://fcm.googleapis.com/fcm/send/new-phone"
	svc := &goneService{gone: old}
	var dir *Directory
	ch := goneHook{Channel: svc, gone: func(ctx context.Context, sub string) { dir.PushGone(ctx, sub) }}
	d, err := notify.New(notify.Config{Channels: map[string]notify.Channel{"webpush": ch}, Window: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	keys, _ := webpush.GenerateKeys()
	dir = NewDirectory(DirectoryConfig{File: f, Store: db, Dispatcher: d, VAPIDPublicKey: keys.PublicString()})
	for _, ep := range []string{old, phone} {
		if _, _, err := dir.AddPushSubscription(ctx, "ana", pushTo(ep), "celular"); err != nil {
			t.Fatal(err)
		}
	}
	alert := func(id string) {
		d.Notify(notify.Alert{EpisodeID: id, Rule: "speed", Vehicle: "PIU-001", Severity: notify.High, Start: time.Now()})
		d.Flush(ctx)
	}
	alert("e1")
	left, _ := db.PushSubscriptions(ctx, "ana")
	if len(left) != 1 || left[0].Endpoint != phone {
		t.Fatalf("after the 410: %+v", left)
	}
	entries, _, _ := db.ListAudit(ctx, store.AuditFilter{Action: "notify.push.gone"}, 10, "")
	if len(entries) != 1 || !strings.Contains(string(entries[0].Before), `"user":"ana"`) || strings.Contains(string(entries[0].Before), "old-phone") {
		t.Errorf("audit: %+v", entries)
	}
	svc.to = nil
	alert("e2")
	if len(svc.to) != 1 || len(d.DeadLetters()) != 1 {
		t.Errorf("the next alert went to %d devices (want the one left), %d dead letters (want the first 410)", len(svc.to), len(d.DeadLetters()))
	}
}
