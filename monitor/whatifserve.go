package main

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
)

// whatifAPI is the API's what-if configuration (docs/whatif.md, "From the dashboard and the
// portal"): nil without an InfluxDB to replay (TRENZINHO_INFLUX_URL). The runs live in dir
// (TRENZINHO_WHATIF_DIR; default: whatif/ beside the database), never in the live database.
// The returned closer cancels a run in progress and waits for it.
func whatifAPI(c serveConfig, prof *profile.Profile, profileYAML []byte, set *geofences.Set, regStore *registry.Store,
	log *slog.Logger) (*api.WhatifConfig, func(), error) {
	influx := c.complaints.influx
	if influx.URL == "" {
		log.Info("what-if replays off: TRENZINHO_INFLUX_URL not set (a replay reads the telemetry archived in InfluxDB)")
		return nil, func() {}, nil
	}
	src, err := whatif.NewInflux(whatif.InfluxConfig{URL: influx.URL, Token: influx.Token, Bucket: influx.Bucket})
	if err != nil {
		return nil, nil, err
	}
	dir := c.whatifDir
	if dir == "" {
		dir = filepath.Join(c.dataDirectory(), "whatif")
	}
	jobs, err := whatif.NewJobs(whatif.JobsConfig{Dir: dir, Archive: src, Logger: log, Now: c.now})
	if err != nil {
		return nil, nil, fmt.Errorf("what-if: %w", err)
	}
	path := ""
	if c.profile != "" {
		path = filepath.Base(c.profile)
	}
	inForce := whatif.Side{Label: "vigente", Path: path, Profile: prof, ProfileYAML: profileYAML, Places: set, Registry: regStore}
	log.Info("what-if replays on", "dir", dir)
	return &api.WhatifConfig{Jobs: jobs, InForce: func() whatif.Side { return inForce }}, jobs.Close, nil
}
