package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// The licensee's portal (docs/api.md, "Portal"): the routes under /api/v1/portal/, open only to
// users of the role licensee and each scoped, server-side, to the user's own licensee. Nothing
// here trusts an id from the request: every vehicle, episode, draft, case and filing is looked
// up and then checked against the user's licensee; another licensee's is answered 404, exactly
// as one that does not exist. A licensee's user gets 403 from every other route of the API:
// requireRole admits no licensee (store.Role.AtLeast).

// PortalStore is what the portal needs of the store beyond the cases (store.DB implements it).
type PortalStore interface {
	Filings(ctx context.Context, caseID int64) ([]store.Filing, error)
	Filing(ctx context.Context, id int64, withData bool) (*store.Filing, error)
}

// PortalConfig is the licensee's portal. It needs Config.Cases for the autos and Config.
// RegistryStore for the vehicles.
type PortalConfig struct {
	Store PortalStore
	// MaxFileBytes bounds each attachment of a filing (default 10 MiB), MaxFiles their number
	// (default 5); the text is at most 50,000 characters.
	MaxFileBytes int64
	MaxFiles     int
	// ScanCommand, when set, is run for each attachment with the path of a temporary copy as
	// its last argument (e.g. ["clamdscan", "--no-summary"]): exit status 0 accepts the file,
	// 1 refuses it as infected, anything else fails the filing (TRENZINHO_UPLOAD_SCAN).
	ScanCommand []string
	// ScanTimeout bounds each scan (default 60 s).
	ScanTimeout time.Duration
}

// Portal limits.
const (
	defaultPortalFileBytes = 10 << 20
	defaultPortalFiles     = 5
	maxFilingText          = 50_000
	portalEpisodesPerPage  = 200
	// portalFilingsAtOnce bounds the filings read at once: each may hold MaxFiles ×
	// MaxFileBytes in memory (50 MiB by default).
	portalFilingsAtOnce = 4
)

// portalFileTypes are the attachments the portal accepts, by their sniffed content type.
var portalFileTypes = []string{"application/pdf", "image/jpeg", "image/png"}

// portalRoutes registers the portal's routes.
func (s *Server) portalRoutes(a *http.ServeMux) {
	if s.portal == nil {
		return
	}
	a.Handle("GET /api/v1/portal/me", s.requireLicensee(s.handlePortalMe))
	a.Handle("GET /api/v1/portal/vehicles", s.requireLicensee(s.handlePortalVehicles))
	a.Handle("GET /api/v1/portal/episodes", s.requireLicensee(s.handlePortalEpisodes))
	a.Handle("GET /api/v1/portal/episodes/{id}", s.requireLicensee(s.handlePortalEpisode))
	a.Handle("GET /api/v1/portal/stream", s.requireLicensee(s.handlePortalStream))
	if s.drafts != nil {
		a.Handle("GET /api/v1/portal/drafts", s.requireLicensee(s.handlePortalDrafts))
		a.Handle("GET /api/v1/portal/drafts/{id}", s.requireLicensee(s.handlePortalDraft))
	}
	if s.casesOn() {
		a.Handle("GET /api/v1/portal/cases", s.requireLicensee(s.handlePortalCases))
		a.Handle("GET /api/v1/portal/cases/{id}", s.requireLicensee(s.handlePortalCase))
		a.Handle("GET /api/v1/portal/cases/{id}/pdf", s.requireLicensee(s.handlePortalCasePDF))
		a.Handle("GET /api/v1/portal/cases/{id}/bundle", s.requireLicensee(s.handlePortalCaseBundle))
		a.Handle("POST /api/v1/portal/cases/{id}/filings", s.requireLicensee(s.handlePortalFiling))
		a.Handle("POST /api/v1/portal/cases/{id}/ciencia", s.requireLicensee(s.handlePortalCiencia))
		a.Handle("GET /api/v1/portal/filings/{id}/receipt", s.requireLicensee(s.handlePortalReceipt))
		a.Handle("GET /api/v1/portal/cases/{id}/decisions/{seq}/pdf", s.requireLicensee(s.handlePortalDecisionPDF))
		// The control room reads what was filed, to decide on it (audited: it may name people).
		a.Handle("GET /api/v1/cases/{id}/filings", s.requireRole(store.RoleFiscal, s.handleCaseFilings))
		a.Handle("GET /api/v1/filings/{id}/files/{n}", s.requireRole(store.RoleFiscal, s.handleFilingFile))
	}
}

// handleCaseFilings serves GET /api/v1/cases/{id}/filings (fiscal and above): the defences and
// appeals filed online on the case, with their text and attachments' names, types, sizes and
// SHA-256. Audited as case.filings.read.
func (s *Server) handleCaseFilings(w http.ResponseWriter, r *http.Request) {
	c, ok := s.loadCase(w, r)
	if !ok {
		return
	}
	fs, err := s.portal.Store.Filings(r.Context(), c.ID)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: "case.filings.read", Object: "case:" + c.Notice})
	s.writeJSON(w, r, http.StatusOK, newList(fs, ""))
}

// handleFilingFile serves GET /api/v1/filings/{id}/files/{n} (fiscal and above): an attachment
// as it was filed, with its SHA-256 in the X-Content-SHA256 header. Audited.
func (s *Server) handleFilingFile(w http.ResponseWriter, r *http.Request) {
	id, err1 := strconv.ParseInt(r.PathValue("id"), 10, 64)
	n, err2 := strconv.Atoi(r.PathValue("n"))
	if err1 != nil || err2 != nil || id <= 0 || n <= 0 {
		s.writeError(w, r, http.StatusNotFound, "anexo não encontrado")
		return
	}
	f, err := s.portal.Store.Filing(r.Context(), id, true)
	if err != nil {
		s.fail(w, r, err, "anexo")
		return
	}
	i := slices.IndexFunc(f.Files, func(ff store.FilingFile) bool { return ff.N == n })
	if i < 0 {
		s.writeError(w, r, http.StatusNotFound, "anexo não encontrado")
		return
	}
	ff := f.Files[i]
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: "case.filing.file", Object: fmt.Sprintf("filing:%s#%d", f.Protocolo, n)})
	h := w.Header()
	h.Set("Content-Type", ff.ContentType) // one of portalFileTypes, sniffed at filing
	h.Set("Content-Disposition", `attachment; filename="`+ff.Name+`"`)
	h.Set("X-Content-SHA256", ff.SHA256)
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'; sandbox")
	w.Write(ff.Data)
}

func (s *Server) casesOn() bool {
	return s.cases != nil && s.cases.Store != nil && s.cases.Profile != nil
}

// requireLicensee lets a request through to h only with the session of a licensee's user bound
// to a licensee: 401 without a session, 403 for every other user.
func (s *Server) requireLicensee(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.authenticate(r)
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		if u == nil {
			s.writeError(w, r, http.StatusUnauthorized, "não autenticado")
			return
		}
		if u.Role != store.RoleLicensee || u.Licensee == "" {
			s.writeError(w, r, http.StatusForbidden, "área do portal do permissionário")
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	})
}

// requireUser lets any signed-in user through (the logout).
func (s *Server) requireUser(h http.HandlerFunc) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u, err := s.authenticate(r)
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		if u == nil {
			s.writeError(w, r, http.StatusUnauthorized, "não autenticado")
			return
		}
		h(w, r.WithContext(context.WithValue(r.Context(), userKey{}, u)))
	})
}

// licenseeOf is the licensee id of the request's user.
func licenseeOf(r *http.Request) string { return userFrom(r.Context()).Licensee }

// portalVehicles are the registry's vehicles the licensee has or had (current link or history).
func (s *Server) portalVehicles(licensee string) []registry.Vehicle {
	if s.reg == nil {
		return nil
	}
	var out []registry.Vehicle
	for _, v := range s.reg.Vehicles() {
		ok := v.Licensee == licensee
		for _, l := range v.LicenseeHistory {
			ok = ok || l.Licensee == licensee
		}
		if ok {
			out = append(out, v)
		}
	}
	return out
}

// currentVehicle reports whether the vehicle id is the licensee's now.
func (s *Server) currentVehicle(licensee, id string) bool {
	if s.reg == nil {
		return false
	}
	v, ok := s.reg.Vehicle(id)
	return ok && v.Licensee == licensee
}

// episodeIsLicensees reports whether the episode is of a vehicle that was the licensee's on the
// day the episode began.
func (s *Server) episodeIsLicensees(licensee string, e *rules.Episode) bool {
	if s.reg == nil {
		return false
	}
	v, ok := s.reg.Vehicle(e.Vehicle)
	if !ok {
		return false
	}
	loc := s.reg.Location()
	if loc == nil {
		loc = time.UTC
	}
	return v.LicenseeOn(registry.DateOf(e.Start.Time.In(loc))) == licensee
}

// PortalMe is the answer of GET /api/v1/portal/me.
type PortalMe struct {
	User         string `json:"user"`
	Licensee     string `json:"licensee"`
	RazaoSocial  string `json:"razao_social,omitempty"`
	CNPJ         string `json:"cnpj,omitempty"`
	TimeZone     string `json:"time_zone,omitempty"`
	Municipality string `json:"municipality,omitempty"`
	// Electronic says whether the municipality notifies autos in the portal, by which act, and
	// for how many days an auto waits for its ciência.
	Electronic     bool   `json:"electronic"`
	ElectronicAct  string `json:"electronic_act,omitempty"`
	ElectronicDays int    `json:"electronic_days,omitempty"`
	// Verify are the instructions to check an auto's evidence bundle offline.
	Verify VerifyInstructions `json:"verify"`
	// Whatif: the portal's what-if replay of the licensee's itinerary is served, on these
	// vehicles (the licensee's now).
	Whatif         bool     `json:"whatif"`
	WhatifVehicles []string `json:"whatif_vehicles,omitempty"`
}

// VerifyInstructions tell how to check a downloaded evidence bundle offline.
type VerifyInstructions struct {
	KeyHex  string   `json:"public_key_hex,omitempty"`
	Command string   `json:"command"`
	Steps   []string `json:"steps"`
}

func (s *Server) verifyInstructions(file string) VerifyInstructions {
	key := hex.EncodeToString(s.draftKey)
	cmd := "monitor verify --key " + key + " " + file
	if key == "" {
		cmd = "monitor verify " + file
	}
	return VerifyInstructions{KeyHex: key, Command: cmd, Steps: []string{
		"Baixe o pacote de evidências do auto (arquivo .json): ele contém as leituras originais dos equipamentos, o resumo SHA-256 e a assinatura do monitor.",
		"Obtenha o programa monitor (código aberto, mesmo do servidor) e execute o comando abaixo em qualquer computador, sem acesso à internet.",
		"O resultado \"íntegro\" (código de saída 0) confirma que o pacote não foi alterado desde a emissão e que foi assinado pela chave pública do município indicada.",
	}}
}

// handlePortalMe serves GET /api/v1/portal/me.
func (s *Server) handlePortalMe(w http.ResponseWriter, r *http.Request) {
	u := userFrom(r.Context())
	me := PortalMe{User: u.Name, Licensee: u.Licensee, Verify: s.verifyInstructions("AUTO.json")}
	if s.reg != nil {
		if l, ok := s.reg.Licensee(u.Licensee); ok {
			me.RazaoSocial, me.CNPJ = l.RazaoSocial, registry.FormatCNPJ(l.CNPJ)
		}
	}
	if s.casesOn() {
		p := s.cases.Profile
		me.TimeZone = p.Location().String()
		me.Municipality = strings.TrimSpace(p.Municipality + "-" + p.State)
		if p.Notification.Electronic {
			me.Electronic, me.ElectronicAct, me.ElectronicDays = true, p.Notification.ElectronicAct, p.Notification.ElectronicWindow()
		}
	}
	if s.whatifOn() {
		me.Whatif, me.WhatifVehicles = true, s.licenseeVehicleIDs(u.Licensee)
	}
	s.writeJSON(w, r, http.StatusOK, me)
}

// PortalVehicle is one of the licensee's vehicles, live.
type PortalVehicle struct {
	ID           string    `json:"id"`
	Plate        string    `json:"plate"`
	Online       *bool     `json:"online,omitempty"`
	LastSeen     wire.Time `json:"last_seen,omitzero"`
	Lat          *float64  `json:"lat,omitempty"`
	Lon          *float64  `json:"lon,omitempty"`
	SpeedKmh     *float64  `json:"speed_kmh,omitempty"`
	LAeqDB       *float64  `json:"laeq_db,omitempty"`
	InService    *bool     `json:"in_service,omitempty"`
	SpoolDepth   *int64    `json:"spool_depth,omitempty"`
	OpenEpisodes []string  `json:"open_episodes"`
}

// handlePortalVehicles serves GET /api/v1/portal/vehicles: the licensee's vehicles now, live.
func (s *Server) handlePortalVehicles(w http.ResponseWriter, r *http.Request) {
	lic := licenseeOf(r)
	live := map[string]view.Vehicle{}
	if s.fleet != nil {
		vs, err := s.fleet.Vehicles(r.Context())
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		for _, v := range vs {
			live[v.ID] = v
		}
	}
	out := []PortalVehicle{}
	for _, rv := range s.portalVehicles(lic) {
		if rv.Licensee != lic {
			continue // a past vehicle: its episodes stay in the list, its live state is not theirs
		}
		pv := PortalVehicle{ID: rv.ID, Plate: registry.FormatPlate(rv.Plate), OpenEpisodes: []string{}}
		if v, ok := live[rv.ID]; ok {
			pv.Online, pv.LastSeen, pv.Lat, pv.Lon, pv.SpeedKmh, pv.LAeqDB, pv.InService, pv.SpoolDepth =
				v.Online, v.LastSeen, v.Lat, v.Lon, v.SpeedKmh, v.LAeqDB, v.InService, v.SpoolDepth
			if v.OpenEpisodes != nil {
				pv.OpenEpisodes = v.OpenEpisodes
			}
		}
		out = append(out, pv)
	}
	s.writeJSON(w, r, http.StatusOK, newList(out, ""))
}

// portalEpisode is an episode as the portal shows it: without the agents' verification (the
// inspectors' own work) and without the readings, which the episode's page asks for.
func portalEpisode(e rules.Episode) rules.Episode {
	e.Verification = nil
	return e
}

// handlePortalEpisodes serves GET /api/v1/portal/episodes?open=: the latest 200 episodes of the
// licensee's vehicles (of the days each vehicle was theirs), newest first.
func (s *Server) handlePortalEpisodes(w http.ResponseWriter, r *http.Request) {
	lic := licenseeOf(r)
	var f store.EpisodeFilter
	if v := r.URL.Query().Get("open"); v != "" {
		open, err := strconv.ParseBool(v)
		if err != nil {
			s.writeError(w, r, http.StatusBadRequest, "parâmetro open inválido: use true ou false")
			return
		}
		f.Open = &open
	}
	var all []rules.Episode
	for _, v := range s.portalVehicles(lic) {
		f.Vehicle = v.ID
		eps, _, err := s.episodes.Episodes(r.Context(), f, portalEpisodesPerPage, "")
		if err != nil {
			s.fail(w, r, err, "episódio")
			return
		}
		for _, e := range eps {
			if s.episodeIsLicensees(lic, &e) {
				e.Readings = nil
				all = append(all, portalEpisode(e))
			}
		}
	}
	slices.SortFunc(all, func(a, b rules.Episode) int { return b.Start.Time.Compare(a.Start.Time) })
	if len(all) > portalEpisodesPerPage {
		all = all[:portalEpisodesPerPage]
	}
	s.writeJSON(w, r, http.StatusOK, newList(all, ""))
}

// handlePortalEpisode serves GET /api/v1/portal/episodes/{id}: one of the licensee's episodes
// with its readings.
func (s *Server) handlePortalEpisode(w http.ResponseWriter, r *http.Request) {
	e, err := s.episodes.Episode(r.Context(), r.PathValue("id"))
	if err == nil && !s.episodeIsLicensees(licenseeOf(r), e) {
		err = store.ErrNotFound
	}
	if err != nil {
		s.fail(w, r, err, "episódio")
		return
	}
	out := portalEpisode(*e)
	if out.Readings == nil {
		out.Readings = []rules.Evidence{}
	}
	s.writeJSON(w, r, http.StatusOK, struct {
		rules.Episode
		Readings []rules.Evidence `json:"readings"`
	}{out, out.Readings})
}

// handlePortalStream serves GET /api/v1/portal/stream: the live positions, episodes and status
// events of the licensee's vehicles only — filtered by the hub, server-side, before they are
// written — without the agents' verifications and never a draft.
func (s *Server) handlePortalStream(w http.ResponseWriter, r *http.Request) {
	lic := licenseeOf(r)
	scope := &streamScope{
		Events:  []string{EventPosition, EventEpisode, EventStatus},
		Vehicle: func(id string) bool { return s.currentVehicle(lic, id) },
		Redact:  []string{"verification", "readings"},
	}
	s.serveStream(w, r, scope)
}

// PortalDraft is what the licensee learns of a draft: its outcome once an agent decided it.
type PortalDraft struct {
	ID        string     `json:"id"`
	Vehicle   string     `json:"vehicle"`
	Status    string     `json:"status"` // issued or dismissed
	Outcome   string     `json:"outcome"`
	Notice    string     `json:"notice,omitempty"`
	DecidedAt *wire.Time `json:"decided_at,omitempty"`
}

func portalDraft(d *store.DraftRecord) PortalDraft {
	out := PortalDraft{ID: d.Sealed.ID, Vehicle: d.Doc.Vehicle, Status: d.Status, Notice: d.Notice, DecidedAt: d.DecidedAt}
	switch d.Status {
	case drafts.StatusIssued:
		out.Outcome = "Auto de infração " + d.Notice + " emitido"
	case drafts.StatusDismissed:
		out.Outcome = "Arquivada pelo agente: nenhum auto emitido"
	}
	return out
}

// decidedFor reports whether the draft is the licensee's and decided: a draft under review is
// nobody's business outside the control room.
func decidedFor(d *store.DraftRecord, licensee string) bool {
	return d.Doc.Licensee == licensee && (d.Status == drafts.StatusIssued || d.Status == drafts.StatusDismissed)
}

// handlePortalDrafts serves GET /api/v1/portal/drafts: the outcome of the licensee's decided
// drafts (never one under review), newest first, the latest 1000 of each outcome.
func (s *Server) handlePortalDrafts(w http.ResponseWriter, r *http.Request) {
	lic := licenseeOf(r)
	out := []PortalDraft{}
	for _, status := range []string{drafts.StatusIssued, drafts.StatusDismissed} {
		ds, _, err := s.drafts.Drafts(r.Context(), status, 1000, "")
		if err != nil {
			s.fail(w, r, err, "minuta")
			return
		}
		for i := range ds {
			if decidedFor(&ds[i], lic) {
				out = append(out, portalDraft(&ds[i]))
			}
		}
	}
	slices.SortFunc(out, func(a, b PortalDraft) int { return strings.Compare(b.ID, a.ID) })
	s.writeJSON(w, r, http.StatusOK, newList(out, ""))
}

// handlePortalDraft serves GET /api/v1/portal/drafts/{id}: one decided draft's outcome.
func (s *Server) handlePortalDraft(w http.ResponseWriter, r *http.Request) {
	d, err := s.drafts.DraftByID(r.Context(), r.PathValue("id"))
	if err == nil && !decidedFor(d, licenseeOf(r)) {
		err = store.ErrNotFound
	}
	if err != nil {
		s.fail(w, r, err, "minuta")
		return
	}
	s.writeJSON(w, r, http.StatusOK, portalDraft(d))
}

// PortalCase is an auto and its process as the licensee sees it.
type PortalCase struct {
	ID        int64     `json:"id"`
	Notice    string    `json:"notice"`
	Vehicle   string    `json:"vehicle,omitempty"`
	IssuedAt  wire.Time `json:"issued_at"`
	State     string    `json:"state"`
	StateText string    `json:"state_text"`
	// Opened: the auto was opened in the portal (recorded; it delivers nothing). Until then a
	// list shows no more than its number, vehicle, issue and state.
	Opened bool `json:"opened"`
	// AwaitingCiencia: the auto waits in the portal for the ciência that delivers it: the
	// representative's "Declaro ciência" (POST /api/v1/portal/cases/{id}/ciencia) after the
	// PDF was downloaded.
	AwaitingCiencia bool `json:"awaiting_ciencia"`
	// AdhesionTerm is the licensee's term of adhesion to the electronic notice ("" when none:
	// the auto is delivered by the other means), and Representative whether the user is one
	// the term names — only they may declare ciência. Set on the auto opened, while it waits.
	AdhesionTerm   string `json:"adhesion_term,omitempty"`
	Representative bool   `json:"representative,omitempty"`
	// The rest is shown once opened.
	Articles        []string             `json:"articles,omitempty"`
	Penalty         string               `json:"penalty,omitempty"`
	OffenceAt       *wire.Time           `json:"offence_at,omitempty"`
	FineUFMP        *float64             `json:"fine_ufmp,omitempty"`
	Notified        string               `json:"notified,omitempty"`
	Mode            string               `json:"mode,omitempty"`
	Deadline        *DeadlineView        `json:"deadline,omitempty"`
	DefenceFiled    string               `json:"defence_filed,omitempty"`
	Decided         string               `json:"decided,omitempty"`
	Outcome         string               `json:"outcome,omitempty"`
	DecisionText    string               `json:"decision_text,omitempty"`
	AppealDeadline  string               `json:"appeal_deadline,omitempty"`
	Appealed        string               `json:"appealed,omitempty"`
	PaymentDeadline string               `json:"payment_deadline,omitempty"`
	FineSuspended   *FineSuspendedView   `json:"fine_suspended,omitempty"`
	Electronic      *cases.Electronic    `json:"electronic,omitempty"`
	CanFile         string               `json:"can_file,omitempty"` // defence, appeal or ""
	HasPDF          bool                 `json:"has_pdf"`
	HasBundle       bool                 `json:"has_bundle"`
	Verify          *VerifyInstructions  `json:"verify,omitempty"`
	Filings         []store.Filing       `json:"filings,omitempty"`
	Manual          *store.ManualDetails `json:"manual,omitempty"`
	// Decisions are the decisions on the defence and the appeal, each with its document.
	Decisions []DecisionView `json:"decisions,omitempty"`
}

func (s *Server) portalCase(c *store.Case, full bool) PortalCase {
	p := s.cases.Profile
	now := s.casesNow()
	pc := c
	v := PortalCase{ID: c.ID, Notice: c.Notice, Vehicle: c.Vehicle, IssuedAt: wire.NewTime(c.Issued), State: string(c.State),
		StateText: store.StateText(c.State), Opened: c.Opening != nil}
	v.AwaitingCiencia = pc.AwaitsCiencia(p, now)
	if e, ok := pc.ElectronicNotice(p, c.Opening, now); ok {
		e.Opening = nil // who opened it, from where: the audit's and the control room's
		v.Electronic = &e
	}
	if !full {
		return v
	}
	v.Articles, v.Penalty, v.Manual = c.Articles, c.Penalty, c.Manual
	v.Decisions = decisionViews(c, fmt.Sprint("/api/v1/portal/cases/", c.ID))
	off := wire.NewTime(c.Offence)
	v.OffenceAt = &off
	if c.Assessment != nil {
		f := c.Assessment.TotalUFMP
		v.FineUFMP = &f
	}
	v.Notified, v.Mode, v.DefenceFiled, v.Decided, v.Outcome, v.DecisionText, v.Appealed =
		c.Notified, c.Mode, c.DefenceFiled, c.Decided, c.Outcome, c.DecisionText, c.Appealed
	if c.Notified != "" || c.Published != "" {
		deadline, why := c.DefenceDeadline(p)
		v.Deadline = &DeadlineView{Explanation: why}
		if !deadline.IsZero() {
			v.Deadline.Date = deadline.Format(time.DateOnly)
		}
	}
	v.AppealDeadline, _ = pc.AppealDeadline(p)
	v.PaymentDeadline, _ = pc.PaymentDeadline(p)
	if c.Origin != store.OriginImport {
		fs := FineSuspendedView{}
		fs.Suspended, fs.Explanation = pc.Suspended(p, cases.DayOf(now, p.Location()))
		v.FineSuspended = &fs
	}
	v.CanFile = c.Fileable()
	if c.DraftID != "" && s.drafts != nil {
		v.HasBundle = true
		v.HasPDF = s.renderPDF != nil
		vi := s.verifyInstructions(bundleName(c) + ".json")
		v.Verify = &vi
	}
	return v
}

func bundleName(c *store.Case) string {
	return strings.NewReplacer("/", "-", `\`, "-", `"`, "").Replace(c.Notice)
}

// portalCaseOf loads the case {id} of the request when it is the user's licensee's; 404
// otherwise (and for an imported paper notice with no licensee).
func (s *Server) portalCaseOf(w http.ResponseWriter, r *http.Request) (*store.Case, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, http.StatusNotFound, "auto não encontrado")
		return nil, false
	}
	c, err := s.cases.Store.CaseByID(r.Context(), id)
	if err == nil && (c.Licensee == "" || c.Licensee != licenseeOf(r)) {
		err = store.ErrNotFound
	}
	if err != nil {
		s.fail(w, r, err, "auto")
		return nil, false
	}
	return c, true
}

// handlePortalCases serves GET /api/v1/portal/cases: the licensee's autos, newest first.
func (s *Server) handlePortalCases(w http.ResponseWriter, r *http.Request) {
	limit, ok := s.limitParam(w, r, r.URL.Query())
	if !ok {
		return
	}
	cs, next, err := s.cases.Store.Cases(r.Context(), store.CaseFilter{Licensee: licenseeOf(r)}, limit, r.URL.Query().Get("cursor"))
	if err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	out := make([]PortalCase, 0, len(cs))
	for _, c := range cs {
		out = append(out, s.portalCase(c, c.Opening != nil))
	}
	s.writeJSON(w, r, http.StatusOK, newList(out, next))
}

// open records the opening of the case's auto in the portal and returns the case as it is
// after.
func (s *Server) open(r *http.Request, c *store.Case) (*store.Case, error) {
	if c.Opening != nil {
		return c, nil
	}
	return s.office().Open(r.Context(), c.ID, actor(r))
}

// handlePortalCase serves GET /api/v1/portal/cases/{id}: the auto, its process and deadlines,
// and the filings made online. The first opening by the licensee's user is recorded; it
// delivers nothing (the ciência is POST …/ciencia, docs/process.md).
func (s *Server) handlePortalCase(w http.ResponseWriter, r *http.Request) {
	c, ok := s.portalCaseOf(w, r)
	if !ok {
		return
	}
	c, err := s.open(r, c)
	if err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	v := s.portalCase(c, true)
	if find := s.office().AdhesionOnFile; find != nil && v.AwaitingCiencia && c.Licensee != "" {
		if ad, ok := find(r.Context(), c.Licensee); ok {
			v.AdhesionTerm, v.Representative = ad.Term, ad.Represents(userFrom(r.Context()).Name)
		}
	}
	fs, err := s.portal.Store.Filings(r.Context(), c.ID)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	v.Filings = fs
	s.writeJSON(w, r, http.StatusOK, v)
}

// portalDraftOf is the sealed draft of a case issued from one, re-verified.
func (s *Server) portalDraftOf(w http.ResponseWriter, r *http.Request, c *store.Case) (*store.DraftRecord, bool) {
	if c.DraftID == "" || s.drafts == nil {
		s.writeError(w, r, http.StatusNotFound, "este auto não tem pacote de evidências do monitor")
		return nil, false
	}
	d, err := s.drafts.DraftByID(r.Context(), c.DraftID)
	if err != nil {
		s.fail(w, r, err, "auto")
		return nil, false
	}
	if status := s.verify(r.Context(), d); status != "ok" {
		s.writeError(w, r, http.StatusConflict, "integridade do auto violada: "+status)
		return nil, false
	}
	return d, true
}

// handlePortalCasePDF serves GET /api/v1/portal/cases/{id}/pdf: the issued auto as a PDF. Like
// the case's page, its first opening is recorded; and the serving, with the hash of the bytes
// sent, which a ciência requires (cases.Office.Ciencia).
func (s *Server) handlePortalCasePDF(w http.ResponseWriter, r *http.Request) {
	c, ok := s.portalCaseOf(w, r)
	if !ok {
		return
	}
	if s.renderPDF == nil {
		s.writeError(w, r, http.StatusNotFound, "PDF indisponível")
		return
	}
	d, ok := s.portalDraftOf(w, r, c)
	if !ok {
		return
	}
	pdf, sum, err := s.documentPDF(r.Context(), d)
	if errors.Is(err, notice.ErrFineContradictsLaw) {
		s.fail(w, r, err, "auto")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	if _, err := s.open(r, c); err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	// The serving, with the hash of the very bytes sent, is what a ciência refers to (and
	// its audit entry, case.pdf_served).
	served := sha256.Sum256(pdf)
	if err := s.office().ServePDF(r.Context(), c.ID, hex.EncodeToString(served[:]), actor(r)); err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	w.Header().Set("Content-Type", "application/pdf")
	w.Header().Set("Content-Disposition", `attachment; filename="`+bundleName(c)+`.pdf"`)
	if sum != "" {
		w.Header().Set(HeaderPDFSHA256, sum)
	}
	w.Write(pdf)
}

// CienciaRequest is the body of POST /api/v1/portal/cases/{id}/ciencia.
type CienciaRequest struct {
	// Declaro must be true: the representative's explicit declaration.
	Declaro bool `json:"declaro"`
}

// handlePortalCiencia serves POST /api/v1/portal/cases/{id}/ciencia: the licensee's
// representative declares ciência of the auto ("Declaro ciência"), the electronic notice's
// delivery (cases.Office.Ciencia); 400 without {"declaro": true}; 403 (not_a_representative)
// or 409 with the reason otherwise refused. It answers the case as the portal shows it.
func (s *Server) handlePortalCiencia(w http.ResponseWriter, r *http.Request) {
	c, ok := s.portalCaseOf(w, r)
	if !ok {
		return
	}
	var req CienciaRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if !req.Declaro {
		s.writeError(w, r, http.StatusBadRequest, `a ciência é uma declaração expressa: envie {"declaro": true}`)
		return
	}
	c, err := s.office().Ciencia(r.Context(), c.ID, actor(r))
	if err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	s.writeJSON(w, r, http.StatusOK, s.portalCase(c, true))
}

// handlePortalCaseBundle serves GET /api/v1/portal/cases/{id}/bundle: the auto's sealed evidence
// bundle, as `monitor verify` checks it offline (GET /api/v1/drafts/{id}/export).
func (s *Server) handlePortalCaseBundle(w http.ResponseWriter, r *http.Request) {
	c, ok := s.portalCaseOf(w, r)
	if !ok {
		return
	}
	d, ok := s.portalDraftOf(w, r, c)
	if !ok {
		return
	}
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: "portal.bundle", Object: "case:" + c.Notice})
	w.Header().Set("Content-Disposition", `attachment; filename="`+bundleName(c)+`.json"`)
	s.writeJSON(w, r, http.StatusOK, d.Sealed)
}

// errScanRefused: the virus scan refused an attachment.
var errScanRefused = errors.New("anexo recusado pela verificação antivírus")

// scan runs the scan hook on data; nil when none is configured or it accepts the file.
func (s *Server) scan(ctx context.Context, data []byte) error {
	cmdline := s.portal.ScanCommand
	if len(cmdline) == 0 {
		return nil
	}
	dir, err := os.MkdirTemp("", "trenzinho-scan-")
	if err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "anexo")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		return fmt.Errorf("scan: %w", err)
	}
	timeout := s.portal.ScanTimeout
	if timeout <= 0 {
		timeout = time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, cmdline[0], append(slices.Clone(cmdline[1:]), path)...)
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &exit) && exit.ExitCode() == 1:
		return errScanRefused
	}
	return fmt.Errorf("scan %s: %w: %.200s", cmdline[0], err, out)
}

// handlePortalFiling serves POST /api/v1/portal/cases/{id}/filings, a multipart form: kind
// (defence or appeal), text, and up to MaxFiles attachments "files" (PDF, JPEG or PNG, by their
// content, each up to MaxFileBytes). The filing is the case act of the day (the server's
// time): the case moves to defence_filed (appeal_filed); the answer is the filing with its
// protocolo and the SHA-256 of each attachment, and the receipt's URL.
func (s *Server) handlePortalFiling(w http.ResponseWriter, r *http.Request) {
	c, ok := s.portalCaseOf(w, r)
	if !ok {
		return
	}
	maxFile, maxFiles := s.portal.MaxFileBytes, s.portal.MaxFiles
	if maxFile <= 0 {
		maxFile = defaultPortalFileBytes
	}
	if maxFiles <= 0 {
		maxFiles = defaultPortalFiles
	}
	select {
	case s.portalFilings <- struct{}{}:
		defer func() { <-s.portalFilings }()
	case <-r.Context().Done():
		return
	}
	r.Body = http.MaxBytesReader(w, r.Body, int64(maxFiles)*maxFile+4*maxFilingText+(1<<20))
	mr, err := r.MultipartReader()
	if err != nil {
		s.writeError(w, r, http.StatusBadRequest, "envie um formulário multipart/form-data com kind, text e files")
		return
	}
	var kind, text string
	var files []store.FilingFile
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			s.filingBodyError(w, r, err)
			return
		}
		switch part.FormName() {
		case "kind", "text":
			b, err := io.ReadAll(io.LimitReader(part, 4*maxFilingText+1))
			if err != nil {
				s.filingBodyError(w, r, err)
				return
			}
			if part.FormName() == "kind" {
				kind = strings.TrimSpace(string(b))
			} else {
				text = strings.TrimSpace(string(b))
			}
		case "files":
			if len(files) == maxFiles {
				s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("no máximo %d anexos", maxFiles))
				return
			}
			f, msg, err := readAttachment(part, maxFile)
			if err != nil {
				s.filingBodyError(w, r, err)
				return
			}
			if msg != "" {
				s.writeError(w, r, http.StatusBadRequest, msg)
				return
			}
			if err := s.scan(r.Context(), f.Data); errors.Is(err, errScanRefused) {
				s.writeError(w, r, http.StatusUnprocessableEntity, "o anexo "+f.Name+" foi recusado pela verificação antivírus")
				return
			} else if err != nil {
				s.internalError(w, r, err)
				return
			}
			files = append(files, f)
		default:
			s.writeError(w, r, http.StatusBadRequest, "campo desconhecido "+strconv.Quote(part.FormName()))
			return
		}
	}
	switch {
	case kind != store.FilingDefence && kind != store.FilingAppeal:
		s.writeError(w, r, http.StatusBadRequest, "kind deve ser defence (defesa) ou appeal (recurso)")
		return
	case text == "":
		s.writeError(w, r, http.StatusBadRequest, "escreva o texto da "+map[string]string{store.FilingDefence: "defesa", store.FilingAppeal: "peça de recurso"}[kind])
		return
	case utf8.RuneCountInString(text) > maxFilingText || !utf8.ValidString(text):
		s.writeError(w, r, http.StatusBadRequest, fmt.Sprintf("o texto deve ter até %d caracteres UTF-8", maxFilingText))
		return
	}
	f, _, err := s.office().File(r.Context(), c.ID, kind, text, files, actor(r))
	if err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	// The receipt is made, and frozen, at the filing: the document the licensee keeps.
	if _, _, err := s.receiptPDF(r.Context(), c, f); err != nil {
		s.log.Warn("filing receipt", "protocolo", f.Protocolo, "err", err)
	}
	s.writeJSON(w, r, http.StatusCreated, struct {
		*store.Filing
		Receipt string `json:"receipt"`
	}{f, "/api/v1/portal/filings/" + strconv.FormatInt(f.ID, 10) + "/receipt"})
}

func (s *Server) filingBodyError(w http.ResponseWriter, r *http.Request, err error) {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		s.writeError(w, r, http.StatusRequestEntityTooLarge, "envio grande demais")
		return
	}
	s.writeError(w, r, http.StatusBadRequest, "formulário inválido")
}

// readAttachment reads one attachment of up to max bytes and sniffs its type; msg says (pt-BR)
// why it is refused.
func readAttachment(part *multipart.Part, max int64) (f store.FilingFile, msg string, err error) {
	name := filepath.Base(strings.ReplaceAll(part.FileName(), `\`, "/"))
	if name == "" || name == "." || name == "/" {
		name = "anexo"
	}
	if r := []rune(name); len(r) > 120 {
		name = string(r[:120])
	}
	name = strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || r == '"' {
			return '_'
		}
		return r
	}, name)
	data, err := io.ReadAll(io.LimitReader(part, max+1))
	if err != nil {
		return f, "", err
	}
	if int64(len(data)) > max {
		return f, fmt.Sprintf("o anexo %s passa de %d MiB", name, max>>20), nil
	}
	if len(data) == 0 {
		return f, "o anexo " + name + " está vazio", nil
	}
	ct := http.DetectContentType(data)
	ct, _, _ = strings.Cut(ct, ";")
	if !slices.Contains(portalFileTypes, ct) {
		return f, "o anexo " + name + " não é PDF, JPEG nem PNG (pelo conteúdo do arquivo)", nil
	}
	return store.FilingFile{Name: name, ContentType: ct, Data: data}, "", nil
}

// handlePortalReceipt serves GET /api/v1/portal/filings/{id}/receipt: the receipt (protocolo)
// of a filing of the licensee's, as a PDF, frozen as first made (at the filing).
func (s *Server) handlePortalReceipt(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, http.StatusNotFound, "protocolo não encontrado")
		return
	}
	f, err := s.portal.Store.Filing(r.Context(), id, false)
	var c *store.Case
	if err == nil {
		c, err = s.cases.Store.CaseByID(r.Context(), f.CaseID)
	}
	if err == nil && (c.Licensee == "" || c.Licensee != licenseeOf(r)) {
		err = store.ErrNotFound
	}
	if err != nil {
		s.fail(w, r, err, "protocolo")
		return
	}
	pdf, sum, err := s.receiptPDF(r.Context(), c, f)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.servePDF(w, pdf, sum, strings.ReplaceAll(f.Protocolo, "/", "-"))
}
