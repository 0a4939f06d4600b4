package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/complaints"
	"github.com/trenzinho/trenzinho/monitor/notify/notifyconfig"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
)

// complaintsConfig are the settings of citizens' complaints (docs/operations.md).
type complaintsConfig struct {
	influx  config.Influx
	token   string
	powBits int
}

func (c *complaintsConfig) bind(b *config.Binder) {
	b.BindInflux(&c.influx)
	b.String(&c.token, "TRENZINHO_COMPLAINTS_TOKEN", "", "token of the city's 156/ouvidoria system for POST /api/v1/ouvidoria/complaints (empty: no 156 API)")
	b.Int(&c.powBits, "TRENZINHO_COMPLAINTS_POW_BITS", complaints.DefaultDifficulty, "proof-of-work difficulty of the public complaint form, in leading zero bits (1–32)")
}

func (c *complaintsConfig) check() error {
	if c.powBits < 1 || c.powBits > 32 {
		return usageErr("TRENZINHO_COMPLAINTS_POW_BITS must be between 1 and 32, got %d", c.powBits)
	}
	return nil
}

// complaintsAPI is the API's complaints configuration: nil (no complaint routes) without an
// InfluxDB to match the complaints against. The returned closer releases the InfluxDB client.
func complaintsAPI(c complaintsConfig, db *store.DB, prof *profile.Profile, set *geofences.Set, regStore *registry.Store,
	notificationsPath, publicURL string, log *slog.Logger) (*api.ComplaintsConfig, func(), error) {
	if c.influx.URL == "" {
		log.Info("citizens' complaints off: TRENZINHO_INFLUX_URL not set (the complaints are matched against the telemetry in InfluxDB)")
		return nil, func() {}, nil
	}
	ix, err := complaints.NewInflux(c.influx)
	if err != nil {
		return nil, nil, err
	}
	m := &complaints.Matcher{Telemetry: ix, Profile: prof, Places: set}
	if regStore != nil {
		m.MeterDistance = func(vehicle string) float64 {
			if v, ok := regStore.Vehicle(vehicle); ok {
				return v.MeterDistanceM
			}
			return 0
		}
	}
	cfg := &api.ComplaintsConfig{Store: db, Matcher: m, Places: set, Location: prof.Location(), Difficulty: c.powBits,
		Token: c.token, PublicURL: publicURL}
	if notificationsPath != "" {
		f, err := notifyconfig.Load(notificationsPath)
		if err != nil {
			ix.Close()
			return nil, nil, err
		}
		sender, err := f.EmailSender(nil)
		if err != nil {
			ix.Close()
			return nil, nil, err
		}
		if sender != nil {
			cfg.Mail = sender.Send
		}
	}
	log.Info("citizens' complaints on", "influx", c.influx.URL, "ouvidoria_api", c.token != "", "email", cfg.Mail != nil,
		"radius_m", prof.Complaints.Radius(), "window", prof.Complaints.Window(), "contact_retention", prof.Complaints.ContactRetention())
	return cfg, ix.Close, nil
}

// sweepComplaintContacts erases, every hour until ctx ends, the complainants' contacts older
// than the profile's complaints.contact_retention_days (LGPD: kept no longer than needed).
func sweepComplaintContacts(ctx context.Context, db *store.DB, retention time.Duration, now func() time.Time, log *slog.Logger) {
	sweep := func() {
		n, err := db.EraseComplaintContacts(ctx, now().Add(-retention))
		switch {
		case err != nil && ctx.Err() == nil:
			log.Error("complaint contacts retention sweep", "err", err)
		case n > 0:
			log.Info("complaint contacts erased after the retention period", "count", n, "retention", fmt.Sprint(retention))
		}
	}
	sweep()
	t := time.NewTicker(time.Hour)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			sweep()
		}
	}
}
