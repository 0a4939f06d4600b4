package api

import (
	"context"
	"net/http"
	"time"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/wire"
)

// activityDays is what GET /api/v1/vehicles/activity needs of the store (the SQLite store has
// it; a store without it answers 404).
type activityDays interface {
	ActivityDays(ctx context.Context, from, to time.Time, offset time.Duration) ([]store.VehicleDays, error)
}

type vehicleDaysJSON struct {
	Vehicle string   `json:"vehicle"`
	Days    []string `json:"days"`
}

type activityJSON struct {
	Items []vehicleDaysJSON `json:"items"`
	// LoggedSince is the start of the batch log's retention (now minus the retention period):
	// before it the log may have been pruned, so a day without data there is unknown, not
	// silent.
	LoggedSince wire.Time `json:"logged_since"`
	TimeZone    string    `json:"time_zone"`
}

// handleActivity serves GET /api/v1/vehicles/activity?from=&to=: for each vehicle, the local
// days (the profile's time zone) on which it sent readings, from the batch log.
func (s *Server) handleActivity(w http.ResponseWriter, r *http.Request) {
	a, ok := s.episodes.(activityDays)
	if !ok {
		s.writeError(w, r, http.StatusNotFound, "registro de lotes indisponível")
		return
	}
	q := r.URL.Query()
	from, ok := s.timeParam(w, r, q, "from")
	if !ok {
		return
	}
	to, ok := s.timeParam(w, r, q, "to")
	if !ok {
		return
	}
	if from.IsZero() || to.IsZero() || to.Before(from) || to.Sub(from) > 93*24*time.Hour {
		s.writeError(w, r, http.StatusBadRequest, "informe from e to (RFC 3339), com to depois de from e no máximo 93 dias")
		return
	}
	loc := time.UTC
	if p := s.mapCfg.Profile; p != nil && p.Location() != nil {
		loc = p.Location()
	}
	_, off := from.In(loc).Zone()
	days, err := a.ActivityDays(r.Context(), from, to, time.Duration(off)*time.Second)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	out := activityJSON{Items: make([]vehicleDaysJSON, 0, len(days)), TimeZone: loc.String(),
		LoggedSince: wire.NewTime(s.now().Add(-s.batchRetention))}
	for _, d := range days {
		out.Items = append(out.Items, vehicleDaysJSON{Vehicle: d.Vehicle, Days: d.Days})
	}
	s.writeJSON(w, r, http.StatusOK, out)
}
