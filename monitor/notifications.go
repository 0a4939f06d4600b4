package main

import (
	"log/slog"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
)

// notifications reads the notifications file (TRENZINHO_NOTIFICATIONS) and returns the
// dispatcher and the hub the judge publishes to: the dashboard's hub behind a tap that notifies
// each opening episode (docs/operations.md §13). No file: no dispatcher, the hub as it is.
func notifications(path string, hub notify.Hub, regStore *registry.Store, dead notify.DeadLetterStore, reg prometheus.Registerer, log *slog.Logger) (*notify.Dispatcher, notify.Hub, error) {
	if path == "" {
		return nil, hub, nil
	}
	f, err := notifyconfig.Load(path)
	if err != nil {
		return nil, nil, err
	}
	d, severity, err := f.Dispatcher(notifyconfig.Options{Registerer: reg, Logger: log, DeadLetters: dead})
	if err != nil {
		return nil, nil, err
	}
	tap := &notify.HubTap{Next: hub, Dispatcher: d, Severity: severity}
	if regStore != nil {
		lookup := rules.FromRegistry(regStore)
		tap.Licensee = func(vehicle string) string {
			r, _ := lookup(vehicle)
			return r.Licensee
		}
	}
	log.Info("notifications configured", "path", path, "users", len(f.Users), "shifts", len(f.Schedule))
	return d, tap, nil
}
