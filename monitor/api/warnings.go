package api

import (
	"context"
	"net/http"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Warnings reads the stored warnings of the bridges' driver's coach (docs/protocol.md §2.7).
type Warnings interface {
	Warnings(ctx context.Context, f store.WarningFilter, limit int) ([]store.Warning, error)
	WarningSummary(ctx context.Context, from, to, now time.Time, within time.Duration) ([]store.LicenseeWarnings, error)
}

// episodeWarning is a warning on an episode's timeline: Stated says whether the episode's draft
// states it in its facts (drafts.Stated).
type episodeWarning struct {
	store.Warning
	Stated bool `json:"stated"`
}

// episodeWarnings returns the warnings of e's vehicle from drafts.WarningWindow before its start
// to its end (now while it is open).
func (s *Server) episodeWarnings(ctx context.Context, e *rules.Episode) ([]episodeWarning, error) {
	out := []episodeWarning{}
	if s.warnings == nil {
		return out, nil
	}
	to := s.now()
	if e.End != nil {
		to = e.End.Time
	}
	ws, err := s.warnings.Warnings(ctx, store.WarningFilter{Vehicle: e.Vehicle, From: e.Start.Add(-drafts.WarningWindow), To: to}, store.MaxLimit)
	if err != nil {
		return nil, err
	}
	for _, w := range ws {
		out = append(out, episodeWarning{Warning: w, Stated: drafts.Stated(&w.Warning, e)})
	}
	return out, nil
}

// handleWarnings serves GET /api/v1/warnings?vehicle=&licensee=&from=&to=&limit=: the warnings
// of the driver's coach, oldest first.
func (s *Server) handleWarnings(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var f store.WarningFilter
	if f.Vehicle = q.Get("vehicle"); f.Vehicle != "" && !wire.ValidVehicle(f.Vehicle) {
		s.writeError(w, r, http.StatusBadRequest, "parâmetro vehicle inválido")
		return
	}
	if f.Licensee = q.Get("licensee"); len(f.Licensee) > 64 {
		s.writeError(w, r, http.StatusBadRequest, "parâmetro licensee inválido")
		return
	}
	var ok bool
	if f.From, ok = s.timeParam(w, r, q, "from"); !ok {
		return
	}
	if f.To, ok = s.timeParam(w, r, q, "to"); !ok {
		return
	}
	limit, ok := s.limitParam(w, r, q)
	if !ok {
		return
	}
	var ws []store.Warning
	if s.warnings != nil {
		var err error
		if ws, err = s.warnings.Warnings(r.Context(), f, limit); err != nil {
			s.internalError(w, r, err)
			return
		}
	}
	s.writeJSON(w, r, http.StatusOK, newList(ws, ""))
}

// warningSummary is the body of GET /api/v1/warnings/summary.
type warningSummary struct {
	From      *wire.Time               `json:"from,omitempty"`
	To        *wire.Time               `json:"to,omitempty"`
	WindowMin float64                  `json:"window_min"`
	Licensees []store.LicenseeWarnings `json:"licensees"`
}

// handleWarningSummary serves GET /api/v1/warnings/summary?from=&to=: per licensee, the
// warnings of the period heeded, followed by an episode of their rule within
// drafts.WarningWindow, and still pending (docs/api.md).
func (s *Server) handleWarningSummary(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	from, ok := s.timeParam(w, r, q, "from")
	if !ok {
		return
	}
	to, ok := s.timeParam(w, r, q, "to")
	if !ok {
		return
	}
	if !from.IsZero() && !to.IsZero() && !from.Before(to) {
		s.writeError(w, r, http.StatusBadRequest, "from deve ser anterior a to")
		return
	}
	out := warningSummary{WindowMin: drafts.WarningWindow.Minutes(), Licensees: []store.LicenseeWarnings{}}
	if !from.IsZero() {
		t := wire.NewTime(from)
		out.From = &t
	}
	if !to.IsZero() {
		t := wire.NewTime(to)
		out.To = &t
	}
	if s.warnings != nil {
		ls, err := s.warnings.WarningSummary(r.Context(), from, to, s.now(), drafts.WarningWindow)
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		if ls != nil {
			out.Licensees = ls
		}
	}
	s.writeJSON(w, r, http.StatusOK, out)
}
