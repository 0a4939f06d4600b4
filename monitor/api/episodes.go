package api

import (
	"encoding/base64"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// handleVehicles serves GET /api/v1/vehicles?limit=&cursor=: the fleet by id, a page at a time
// like every list (the cursor is the last id of the previous page).
func (s *Server) handleVehicles(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit, ok := s.limitParam(w, r, q)
	if !ok {
		return
	}
	after := ""
	if c := q.Get("cursor"); c != "" {
		b, err := base64.RawURLEncoding.DecodeString(c)
		if err != nil || !wire.ValidVehicle(string(b)) {
			s.writeError(w, r, http.StatusBadRequest, "parâmetro cursor inválido")
			return
		}
		after = string(b)
	}
	var vs []view.Vehicle
	if s.fleet != nil {
		var err error
		if vs, err = s.fleet.Vehicles(r.Context()); err != nil {
			s.internalError(w, r, err)
			return
		}
	}
	byID := func(a, b view.Vehicle) int { return strings.Compare(a.ID, b.ID) }
	if !slices.IsSortedFunc(vs, byID) { // Fleet sorts them, as a rule
		vs = slices.Clone(vs)
		slices.SortFunc(vs, byID)
	}
	start, _ := slices.BinarySearchFunc(vs, after, func(v view.Vehicle, id string) int { return strings.Compare(v.ID, id) })
	if start < len(vs) && after != "" && vs[start].ID == after {
		start++
	}
	vs = vs[start:]
	next := ""
	if len(vs) > limit {
		vs = vs[:limit]
		next = base64.RawURLEncoding.EncodeToString([]byte(vs[limit-1].ID))
	}
	for i := range vs {
		if vs[i].OpenEpisodes == nil {
			vs[i].OpenEpisodes = []string{}
		}
	}
	s.writeJSON(w, r, http.StatusOK, newList(vs, next))
}

// ruleRE is what a rule id looks like (docs/rules.md).
var ruleRE = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)

// handleEpisodes serves GET /api/v1/episodes?vehicle=&rule=&from=&to=&open=&triage=&assignee=&limit=&cursor=.
func (s *Server) handleEpisodes(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	var f store.EpisodeFilter
	if f.Vehicle = q.Get("vehicle"); f.Vehicle != "" && !wire.ValidVehicle(f.Vehicle) {
		s.writeError(w, r, http.StatusBadRequest, "parâmetro vehicle inválido")
		return
	}
	if f.Rule = q.Get("rule"); f.Rule != "" && !ruleRE.MatchString(f.Rule) {
		s.writeError(w, r, http.StatusBadRequest, "parâmetro rule inválido")
		return
	}
	var ok bool
	if f.From, ok = s.timeParam(w, r, q, "from"); !ok {
		return
	}
	if f.To, ok = s.timeParam(w, r, q, "to"); !ok {
		return
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		s.writeError(w, r, http.StatusBadRequest, "from deve ser anterior a to")
		return
	}
	if v := q.Get("open"); v != "" {
		open, err := strconv.ParseBool(v)
		if err != nil {
			s.writeError(w, r, http.StatusBadRequest, "parâmetro open inválido: use true ou false")
			return
		}
		f.Open = &open
	}
	if v := q.Get("triage"); v != "" {
		if f.Triage = store.TriageState(v); s.triage == nil || !f.Triage.Valid() {
			s.writeError(w, r, http.StatusBadRequest, "parâmetro triage inválido: use novo, reconhecido, atribuido ou encerrado")
			return
		}
	}
	if v := q.Get("assignee"); v != "" {
		if s.triage == nil || len(v) > 64 {
			s.writeError(w, r, http.StatusBadRequest, "parâmetro assignee inválido")
			return
		}
		if f.Assignee = v; v == "me" {
			f.Assignee = userFrom(r.Context()).Name
		}
	}
	limit, ok := s.limitParam(w, r, q)
	if !ok {
		return
	}
	eps, next, err := s.episodes.Episodes(r.Context(), f, limit, q.Get("cursor"))
	if err != nil {
		s.fail(w, r, err, "episódio")
		return
	}
	if s.triage == nil {
		s.writeJSON(w, r, http.StatusOK, newList(eps, next))
		return
	}
	// With triage, each episode carries its triage state (without its history).
	ids := make([]string, len(eps))
	for i := range eps {
		ids[i] = eps[i].ID
	}
	sums, err := s.triageSummaries(r.Context(), ids)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	type withTriage struct {
		rules.Episode
		Triage triageJSON `json:"triage"`
	}
	items := make([]withTriage, len(eps))
	for i := range eps {
		items[i] = withTriage{Episode: eps[i], Triage: sums[eps[i].ID]}
	}
	s.writeJSON(w, r, http.StatusOK, newList(items, next))
}

// handleEpisode serves GET /api/v1/episodes/{id}: the episode with its readings.
func (s *Server) handleEpisode(w http.ResponseWriter, r *http.Request) {
	e, err := s.episodes.Episode(r.Context(), r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err, "episódio")
		return
	}
	// readings is always present here, [] when none: rules.Episode omits it when empty.
	// warnings (always present, [] when none) are the vehicle's warnings of the driver's coach
	// from drafts.WarningWindow before the start to the end: the timeline's.
	type withReadings struct {
		*rules.Episode
		Readings []rules.Evidence `json:"readings"`
		Warnings []episodeWarning `json:"warnings"`
	}
	ws, err := s.episodeWarnings(r.Context(), e)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	out := withReadings{Episode: e, Readings: e.Readings, Warnings: ws}
	if out.Readings == nil {
		out.Readings = []rules.Evidence{}
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

// timeParam parses the RFC 3339 time of query parameter name (any offset, any precision); it
// answers 400 and reports false when the value is not one.
func (s *Server) timeParam(w http.ResponseWriter, r *http.Request, q url.Values, name string) (time.Time, bool) {
	v := q.Get(name)
	if v == "" {
		return time.Time{}, true
	}
	t, err := time.Parse(time.RFC3339Nano, v)
	if err != nil {
		s.writeError(w, r, http.StatusBadRequest, "parâmetro "+name+" inválido: use RFC 3339, como 2026-11-29T15:00:00Z")
		return time.Time{}, false
	}
	return t, true
}

// limitParam parses the limit query parameter: default store.DefaultLimit, at most
// store.MaxLimit (a larger one is cut), at least 1.
func (s *Server) limitParam(w http.ResponseWriter, r *http.Request, q url.Values) (int, bool) {
	v := q.Get("limit")
	if v == "" {
		return store.DefaultLimit, true
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		s.writeError(w, r, http.StatusBadRequest, "parâmetro limit inválido: use um inteiro de 1 a "+strconv.Itoa(store.MaxLimit))
		return 0, false
	}
	return min(n, store.MaxLimit), true
}
