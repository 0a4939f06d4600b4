package notifyconfig

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/webpush"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// PrefsStore keeps what the dashboard edits: the users' preferences and the on-duty schedule;
// *store.DB implements it.
type PrefsStore interface {
	NotifyPrefs(ctx context.Context, user string) (*store.NotifyPrefs, error)
	SetNotifyPrefs(ctx context.Context, p store.NotifyPrefs) error
	AllNotifyPrefs(ctx context.Context) ([]store.NotifyPrefs, error)
	AddNotifyShift(ctx context.Context, s store.NotifyShift) (store.NotifyShift, error)
	NotifyShifts(ctx context.Context, from, to time.Time) ([]store.NotifyShift, error)
	DeleteNotifyShift(ctx context.Context, id int64) (store.NotifyShift, error)
	AddPushSubscription(ctx context.Context, s store.PushSubscription, max int) (store.PushSubscription, string, error)
	PushSubscriptions(ctx context.Context, user string) ([]store.PushSubscription, error)
	AllPushSubscriptions(ctx context.Context) ([]store.PushSubscription, error)
	DeletePushSubscription(ctx context.Context, user string, id int64) (store.PushSubscription, error)
	DeletePushSubscriptionByEndpoint(ctx context.Context, endpoint string) (store.PushSubscription, error)
	Audit(ctx context.Context, e store.AuditEntry) error
}

// Directory is who gets what: the users and the on-duty schedule of the notifications file,
// combined with what the dashboard stored, handed to the dispatcher.
//
// How they combine (docs/operations.md §13):
//   - The file's users seed the preferences. A user who saved preferences in the dashboard
//     (Perfil → Notificações) is notified by those only, e-mail and Telegram addresses
//     included: the stored record wins over the file's entry of the same id. The file's Web
//     Push subscriptions of that user are kept (the dashboard does not edit them).
//   - Users who saved preferences and are not in the file are added; a disabled account's
//     stored preferences are not used.
//   - The on-duty schedule is the file's shifts plus the stored ones (the file's are read-only
//     in the dashboard).
//   - The Web Push subscriptions users made in the dashboard ("Receber avisos neste aparelho")
//     are added to their webpush addresses, whatever the source of their preferences; a user
//     with subscriptions and neither saved preferences nor an entry in the file gets the
//     defaults (every alert, every channel) on them.
//
// The dispatcher's copy is rebuilt after every edit made through the Directory and every
// minute (Run), so that a disabled account or a restored backup is taken into account too.
type Directory struct {
	file     *File // nil: no notifications file
	db       PrefsStore
	d        *notify.Dispatcher // nil: nothing is sent, the preferences serve the dashboard
	severity func(rule string) notify.Severity
	clock    notify.Clock
	log      *slog.Logger
	vapidPub string // the VAPID public key; "" when Web Push is not configured

	mu sync.Mutex // serialises the refreshes
}

// DirectoryConfig configures a Directory; Store is required.
type DirectoryConfig struct {
	File       *File              // the notifications file; nil when there is none
	Store      PrefsStore         // required
	Dispatcher *notify.Dispatcher // nil when the monitor sends no notifications
	// Severity is the severity of a rule's alert (File.Dispatcher's); notify.DefaultSeverity
	// when nil.
	Severity func(rule string) notify.Severity
	Clock    notify.Clock // the real clock when nil
	Logger   *slog.Logger
	// VAPIDPublicKey is the Web Push application server key (webpush.Keys.PublicString),
	// which the dashboard subscribes with; subscriptions are taken only when it is set and the
	// file configures webpush.
	VAPIDPublicKey string
}

// NewDirectory returns a Directory; call Refresh (or Run) to hand its users to the dispatcher.
func NewDirectory(c DirectoryConfig) *Directory {
	dir := &Directory{file: c.File, db: c.Store, d: c.Dispatcher, severity: c.Severity, clock: c.Clock, log: c.Logger}
	if c.File != nil && c.File.WebPush != nil {
		dir.vapidPub = c.VAPIDPublicKey
	}
	if dir.severity == nil {
		dir.severity = notify.DefaultSeverity
	}
	if dir.clock == nil {
		dir.clock = wallClock{}
	}
	if dir.log == nil {
		dir.log = slog.Default()
	}
	return dir
}

type wallClock struct{}

func (wallClock) Now() time.Time { return time.Now() }

// Channels are the channels the server can send on, sorted; empty without a file.
func (dir *Directory) Channels() []string {
	var out []string
	if f := dir.file; f != nil {
		if f.Email != nil {
			out = append(out, "email")
		}
		if f.Telegram != nil {
			out = append(out, "telegram")
		}
		if f.WebPush != nil {
			out = append(out, "webpush")
		}
	}
	return out
}

// Severities are the severity of each rule's alerts, as the dispatcher judges them ("low",
// "medium", "high"), for the dashboard's in-browser notifications.
func (dir *Directory) Severities() map[string]string {
	out := map[string]string{}
	for _, r := range notify.RuleCodes() {
		out[r] = dir.severity(r).String()
	}
	return out
}

// Preference sources (Prefs).
const (
	SourceSaved = "saved" // saved in the dashboard
	SourceFile  = "file"  // the notifications file's entry of the user
	SourceNone  = "none"  // nothing: the defaults, and no address
)

// Prefs are the preferences in force for a user and where they come from.
func (dir *Directory) Prefs(ctx context.Context, user string) (store.NotifyPrefs, string, error) {
	p, err := dir.db.NotifyPrefs(ctx, user)
	switch {
	case err == nil:
		return *p, SourceSaved, nil
	case !errors.Is(err, store.ErrNotFound):
		return store.NotifyPrefs{}, "", err
	}
	if u, ok := dir.fileUser(user); ok {
		return store.NotifyPrefs{User: user, Email: u.Email, Telegram: u.Telegram, Rules: u.Rules, Vehicles: u.Vehicles,
			Licensees: u.Licensees, MinSeverity: u.MinSeverity, Channels: u.Channels, QuietHours: u.QuietHours,
			OnDutyOnly: u.OnDutyOnly}, SourceFile, nil
	}
	return store.NotifyPrefs{User: user}, SourceNone, nil
}

func (dir *Directory) fileUser(id string) (User, bool) {
	if dir.file == nil {
		return User{}, false
	}
	i := slices.IndexFunc(dir.file.Users, func(u User) bool { return u.ID == id })
	if i < 0 {
		return User{}, false
	}
	return dir.file.Users[i], true
}

// SetPrefs saves a user's preferences (checked by the caller) and hands them to the dispatcher
// at once: the next alert is routed by them.
func (dir *Directory) SetPrefs(ctx context.Context, p store.NotifyPrefs) error {
	if err := dir.db.SetNotifyPrefs(ctx, p); err != nil {
		return err
	}
	dir.refreshAfterEdit(ctx)
	return nil
}

// refreshAfterEdit hands an edit to the dispatcher. The edit is stored: a failure to read it
// back is logged, and the next periodic refresh (Run) takes it.
func (dir *Directory) refreshAfterEdit(ctx context.Context) {
	// The edit is made: a client that hangs up now must not keep it from the dispatcher.
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := dir.Refresh(ctx); err != nil {
		dir.log.Error("notify: preferences saved but not refreshed; the next refresh takes them", "err", err)
	}
}

// Shifts lists the shifts of the file and of the store that overlap [from, to), by start; the
// file's have ID 0 (read-only in the dashboard).
func (dir *Directory) Shifts(ctx context.Context, from, to time.Time) ([]store.NotifyShift, error) {
	stored, err := dir.db.NotifyShifts(ctx, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]store.NotifyShift, 0, len(stored))
	if dir.file != nil {
		for _, s := range dir.file.Schedule {
			if s.To.After(from) && (to.IsZero() || s.From.Before(to)) {
				out = append(out, store.NotifyShift{User: s.User, From: s.From, To: s.To})
			}
		}
	}
	out = append(out, stored...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].From.Before(out[j].From) })
	return out, nil
}

// AddShift stores a shift and hands the schedule to the dispatcher.
func (dir *Directory) AddShift(ctx context.Context, s store.NotifyShift) (store.NotifyShift, error) {
	s, err := dir.db.AddNotifyShift(ctx, s)
	if err != nil {
		return s, err
	}
	dir.refreshAfterEdit(ctx)
	return s, nil
}

// DeleteShift removes a stored shift and hands the schedule to the dispatcher.
func (dir *Directory) DeleteShift(ctx context.Context, id int64) (store.NotifyShift, error) {
	s, err := dir.db.DeleteNotifyShift(ctx, id)
	if err != nil {
		return s, err
	}
	dir.refreshAfterEdit(ctx)
	return s, nil
}

// Refresh rebuilds the dispatcher's users and schedule from the file and the store.
func (dir *Directory) Refresh(ctx context.Context) error {
	if dir.d == nil {
		return nil
	}
	dir.mu.Lock()
	defer dir.mu.Unlock()
	saved, err := dir.db.AllNotifyPrefs(ctx)
	if err != nil {
		return err
	}
	// Shifts ended are of no use to routing; the next refresh drops them.
	stored, err := dir.db.NotifyShifts(ctx, dir.clock.Now().Add(-time.Hour), time.Time{})
	if err != nil {
		return err
	}
	subs, err := dir.db.AllPushSubscriptions(ctx)
	if err != nil {
		return err
	}
	users, sched := dir.merge(saved, stored, subs)
	return dir.d.SetUsers(users, sched)
}

// merge combines the file's users and schedule with the stored ones (Directory's rules).
func (dir *Directory) merge(saved []store.NotifyPrefs, stored []store.NotifyShift, subs []store.PushSubscription) ([]notify.User, notify.Schedule) {
	byID := map[string]store.NotifyPrefs{}
	for _, p := range saved {
		byID[p.User] = p
	}
	var users []notify.User
	var sched notify.Schedule
	if f := dir.file; f != nil {
		for _, fu := range f.Users {
			p, ok := byID[fu.ID]
			if !ok {
				users = append(users, fu.notifyUser())
				continue
			}
			delete(byID, fu.ID)
			u := storedUser(p)
			for _, s := range fu.WebPush {
				u.Addresses = append(u.Addresses, notify.Address{Channel: "webpush", To: s})
			}
			users = append(users, u)
		}
		for _, s := range f.Schedule {
			sched = append(sched, notify.Shift{User: s.User, From: s.From, To: s.To})
		}
	}
	for _, p := range saved {
		if _, ok := byID[p.User]; ok {
			users = append(users, storedUser(p))
		}
	}
	for _, s := range stored {
		sched = append(sched, notify.Shift{User: s.User, From: s.From, To: s.To})
	}
	if dir.vapidPub != "" {
		users = addSubscriptions(users, subs)
	}
	return users, sched
}

// addSubscriptions adds the stored Web Push subscriptions to their users' webpush addresses
// (an endpoint the file already names is not added twice); a user not yet among users is added
// with the default preferences.
func addSubscriptions(users []notify.User, subs []store.PushSubscription) []notify.User {
	for _, s := range subs {
		i := slices.IndexFunc(users, func(u notify.User) bool { return u.ID == s.User })
		if i < 0 {
			users = append(users, notify.User{ID: s.User})
			i = len(users) - 1
		}
		dup := slices.ContainsFunc(users[i].Addresses, func(a notify.Address) bool {
			if a.Channel != "webpush" {
				return false
			}
			sub, _, _, err := webpush.ParseSubscription(a.To)
			return err == nil && sub.Endpoint == s.Endpoint
		})
		if !dup {
			users[i].Addresses = append(users[i].Addresses, notify.Address{Channel: "webpush", To: s.Sub})
		}
	}
	return users
}

// MaxPushSubscriptions bounds a user's Web Push subscriptions: a phone, a tablet, a desktop
// or two, and browsers reinstalled; an account holding more is being abused.
const MaxPushSubscriptions = 10

// ErrWebPushOff is returned when a subscription is offered and the server does not send Web
// Push.
var ErrWebPushOff = errors.New("web push is not configured")

// VAPIDPublicKey is the application server key the dashboard subscribes with (base64url of
// the uncompressed P-256 point); "" when the server does not send Web Push.
func (dir *Directory) VAPIDPublicKey() string { return dir.vapidPub }

// PushSubscriptions lists the user's subscriptions made in the dashboard.
func (dir *Directory) PushSubscriptions(ctx context.Context, user string) ([]store.PushSubscription, error) {
	return dir.db.PushSubscriptions(ctx, user)
}

// AddPushSubscription checks a subscription (the JSON of the browser's PushSubscription) the
// way the sender will (webpush.ParseSubscription; the endpoint's host among the file's push
// services, its address literal allowed: the same guard against server-side request forgery
// that the sender applies when it connects), stores it for user and hands it to the
// dispatcher. It returns the stored subscription and the user who held the endpoint before,
// if another did. Errors: ErrWebPushOff; webpush.ErrRefusedEndpoint and the parse errors,
// wrapped in webpush.ErrBadSubscription; store.ErrTooMany beyond MaxPushSubscriptions.
func (dir *Directory) AddPushSubscription(ctx context.Context, user, subJSON, label string) (store.PushSubscription, string, error) {
	if dir.vapidPub == "" {
		return store.PushSubscription{}, "", ErrWebPushOff
	}
	sub, _, _, err := webpush.ParseSubscription(subJSON)
	if err != nil {
		return store.PushSubscription{}, "", fmt.Errorf("%w: %w", webpush.ErrBadSubscription, err)
	}
	if err := dir.file.WebPush.policy().CheckEndpoint(sub.Endpoint); err != nil {
		return store.PushSubscription{}, "", fmt.Errorf("%w: %w", webpush.ErrBadSubscription, err)
	}
	// Stored as the sender reads it: the endpoint and the keys, nothing else the browser sent.
	doc, err := json.Marshal(sub)
	if err != nil {
		return store.PushSubscription{}, "", err
	}
	s, prev, err := dir.db.AddPushSubscription(ctx, store.PushSubscription{User: user, Endpoint: sub.Endpoint, Sub: string(doc), Label: label},
		MaxPushSubscriptions)
	if err != nil {
		return s, "", err
	}
	dir.refreshAfterEdit(ctx)
	return s, prev, nil
}

// DeletePushSubscription removes the user's subscription id (store.ErrNotFound when the user
// has none such) and hands the change to the dispatcher.
func (dir *Directory) DeletePushSubscription(ctx context.Context, user string, id int64) (store.PushSubscription, error) {
	s, err := dir.db.DeletePushSubscription(ctx, user, id)
	if err != nil {
		return s, err
	}
	dir.refreshAfterEdit(ctx)
	return s, nil
}

// storedUser is the notify.User of stored preferences. They were checked when saved; a value
// that no longer parses (an edited database) is dropped with the filter it belonged to
// loosened, never tightened into silence: minimum severity none, no quiet hours.
func storedUser(p store.NotifyPrefs) notify.User {
	u := notify.User{ID: p.User, Prefs: notify.Preferences{Rules: p.Rules, Vehicles: p.Vehicles, Licensees: p.Licensees,
		Channels: p.Channels, OnDutyOnly: p.OnDutyOnly}}
	if p.MinSeverity != "" {
		u.Prefs.MinSeverity, _ = notify.ParseSeverity(p.MinSeverity)
	}
	if p.QuietHours != "" {
		if q, err := notify.ParseQuietHours(p.QuietHours); err == nil {
			u.Prefs.Quiet = &q
		}
	}
	if p.Email != "" {
		u.Addresses = append(u.Addresses, notify.Address{Channel: "email", To: p.Email})
	}
	if p.Telegram != "" {
		u.Addresses = append(u.Addresses, notify.Address{Channel: "telegram", To: p.Telegram})
	}
	return u
}

// Run refreshes the dispatcher every interval (1 min when zero) until ctx ends.
func (dir *Directory) Run(ctx context.Context, every time.Duration) {
	if dir.d == nil {
		return
	}
	if every <= 0 {
		every = time.Minute
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := dir.Refresh(ctx); err != nil && ctx.Err() == nil {
				dir.log.Error("notify: preferences not refreshed", "err", err)
			}
		}
	}
}

// PushGone removes a stored subscription the push service no longer knows (404, 410: the app
// uninstalled, the browser's data cleared), audited as notify.push.gone by nobody, and hands
// the change to the dispatcher. A subscription of the notifications file is the operator's:
// it stays (its failures are in the dead letters). Options.PushGone calls it from the sender.
func (dir *Directory) PushGone(ctx context.Context, subscription string) {
	sub, _, _, err := webpush.ParseSubscription(subscription)
	if err != nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	s, err := dir.db.DeletePushSubscriptionByEndpoint(ctx, sub.Endpoint)
	if errors.Is(err, store.ErrNotFound) {
		return
	}
	if err != nil {
		dir.log.Error("notify: push subscription gone but not removed", "err", err)
		return
	}
	host := ""
	if u, err := url.Parse(s.Endpoint); err == nil {
		host = u.Hostname()
	}
	before, _ := json.Marshal(map[string]string{"user": s.User, "label": s.Label, "host": host})
	if err := dir.db.Audit(ctx, store.AuditEntry{Action: "notify.push.gone", Object: "push:" + strconv.FormatInt(s.ID, 10), Before: before}); err != nil {
		dir.log.Error("notify: push subscription removal not audited", "err", err)
	}
	dir.log.Info("notify: push subscription gone; removed", "user", s.User, "id", s.ID, "host", host)
	dir.refreshAfterEdit(ctx)
}
