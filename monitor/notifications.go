package main

import (
	"context"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
)

// notifications reads the notifications file (TRENZINHO_NOTIFICATIONS) and returns the
// dispatcher, the hub the judge publishes to — the dashboard's hub behind a tap that notifies
// each opening episode —, the directory of who gets what: the file's users and schedule
// combined with the preferences and shifts stored from the dashboard (docs/operations.md §13),
// and the escalator when the file sets an escalation (nil otherwise). No file: no dispatcher,
// the hub as it is, and a directory that only keeps what the dashboard edits (the in-browser
// notifications use the preferences).
func notifications(path string, hub notify.Hub, regStore *registry.Store, db *store.DB, reg prometheus.Registerer, now func() time.Time, log *slog.Logger) (*notify.Dispatcher, notify.Hub, *notifyconfig.Directory, *notify.Escalator, error) {
	clk := clockFunc(now)
	if path == "" {
		return nil, hub, notifyconfig.NewDirectory(notifyconfig.DirectoryConfig{Store: db, Logger: log, Clock: clk}), nil, nil
	}
	f, err := notifyconfig.Load(path)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	// The directory is made with the dispatcher; the sender tells it of the subscriptions gone
	// only once both exist (a message is sent in Run, after this function returns).
	var dir *notifyconfig.Directory
	pushGone := func(ctx context.Context, sub string) { dir.PushGone(ctx, sub) }
	d, severity, err := f.Dispatcher(notifyconfig.Options{Registerer: reg, Logger: log, DeadLetters: db, PushGone: pushGone, Clock: clk})
	if err != nil {
		return nil, nil, nil, nil, err
	}
	var vapidPub string
	if f.WebPush != nil {
		keys, err := f.WebPushKeys(nil) // read by Dispatcher above: it parses
		if err != nil {
			return nil, nil, nil, nil, err
		}
		vapidPub = keys.PublicString()
	}
	dir = notifyconfig.NewDirectory(notifyconfig.DirectoryConfig{File: f, Store: db, Dispatcher: d, Severity: severity, Logger: log, Clock: clk,
		VAPIDPublicKey: vapidPub})
	tap := &notify.HubTap{Next: hub, Dispatcher: d, Severity: severity}
	if regStore != nil {
		lookup := rules.FromRegistry(regStore)
		tap.Licensee = func(vehicle string) string {
			r, _ := lookup(vehicle)
			return r.Licensee
		}
	}
	var esc *notify.Escalator
	if p := f.Policy(); p != nil {
		esc = &notify.Escalator{Policy: *p, Store: db, Dispatcher: d, Severity: severity, Licensee: tap.Licensee, Logger: log, Clock: clk}
		log.Info("escalation configured", "min_severity", p.MinSeverity, "after", p.After, "to", p.To)
	}
	log.Info("notifications configured", "path", path, "users", len(f.Users), "shifts", len(f.Schedule))
	return d, tap, dir, esc, nil
}

// clockFunc is the monitor's clock as the notifications' Clock.
type clockFunc func() time.Time

func (f clockFunc) Now() time.Time { return f() }
