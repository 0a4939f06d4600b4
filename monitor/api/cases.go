package api

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/wire"
)

// Cases is the store of the notices and their process after issue (store.DB implements it): the
// ledger the office of the auto runs its acts in (cases.Ledger), and what the API reads.
type Cases interface {
	cases.Ledger
	ImportNotices(ctx context.Context, ns []store.ImportedNotice, at time.Time, actor store.Actor) ([]*store.Case, error)
	CaseByID(ctx context.Context, id int64) (*store.Case, error)
	CaseByDraft(ctx context.Context, draftID string) (*store.Case, error)
	Cases(ctx context.Context, f store.CaseFilter, limit int, cursor string) ([]*store.Case, string, error)
}

// CasesConfig is the case workflow: issuing a draft opens its case with the penalty calculus;
// the routes under /api/v1/cases and /api/v1/notices follow it, write manual notices and import
// paper ones.
type CasesConfig struct {
	Store   Cases
	Profile *profile.Profile // required: the calculus, the deadlines, the time zone
	// Registry finds the licensee of a vehicle and licensees by id or CNPJ for manual notices;
	// nil: none is known. The issue of a draft reads the registry's record sealed in the draft,
	// as its auto prints it.
	Registry *registry.Store
	Now      func() time.Time // default time.Now
	// LicenseeAtFact finds the licensee responsible for a draft's facts (Art. 48, § 2º) on the
	// day of the facts, for the issue check (licensee_unidentified). nil: the licensee as the
	// drafter recorded it (the draft's registry snapshot, else Registry's record of
	// draft.Licensee). Hook for the registry's validity periods.
	LicenseeAtFact func(ctx context.Context, d *drafts.Draft) (cases.Licensee, bool)
	// GroundsMissing says, in Portuguese, which episodes of a draft do not ground an auto by
	// themselves (grounds_auto: false), one text each, for the issue check (grounds_missing).
	// nil: none is checked. Hook for the episodes' grounds.
	GroundsMissing func(ctx context.Context, d *drafts.Draft) []string
	// InstrumentOnFile is the registry's current record of a measuring instrument, for the
	// issue check (instrument_unverified); nil: Registry's, else the record sealed in the
	// draft.
	InstrumentOnFile cases.InstrumentOnFile
}

// caseRoutes registers the case routes when the server has a case store.
func (s *Server) caseRoutes(a *http.ServeMux) {
	if s.cases == nil || s.cases.Store == nil || s.cases.Profile == nil {
		return
	}
	a.Handle("GET /api/v1/cases", s.requireRole(store.RoleViewer, s.handleCases))
	a.Handle("GET /api/v1/cases/{id}", s.requireRole(store.RoleViewer, s.handleCase))
	a.Handle("POST /api/v1/cases/{id}/actions", s.requireRole(store.RoleFiscal, s.handleCaseAction))
	a.Handle("GET /api/v1/cases/{id}/decisions/{seq}/pdf", s.requireRole(store.RoleViewer, s.handleCaseDecisionPDF))
	a.Handle("POST /api/v1/drafts/{id}/case", s.requireRole(store.RoleFiscal, s.handleDraftCaseAction))
	a.Handle("GET /api/v1/notices", s.requireRole(store.RoleViewer, s.handleNotices))
	a.Handle("POST /api/v1/notices", s.requireRole(store.RoleFiscal, s.handleManualNotice))
	a.Handle("POST /api/v1/notices/import", s.requireRole(store.RoleSupervisor, s.handleImportNotices))
}

func (s *Server) casesNow() time.Time {
	if s.cases != nil && s.cases.Now != nil {
		return s.cases.Now()
	}
	return s.now()
}

func actor(r *http.Request) store.Actor {
	u := userFrom(r.Context())
	return store.Actor{User: u.Name, RemoteAddr: remoteIP(r), Role: u.Role, Agent: u.Agent}
}

// DecisionAnswer is the answer of POST /api/v1/drafts/{id}/decision: the draft, and the case
// with the penalty calculus when it was issued.
type DecisionAnswer struct {
	view.DraftSummary
	Case *CaseView `json:"case,omitempty"`
}

func (s *Server) decisionAnswer(ctx context.Context, d *store.DraftRecord) DecisionAnswer {
	return DecisionAnswer{DraftSummary: s.summary(ctx, d), Case: s.draftCase(ctx, d.Sealed.ID)}
}

// draftCase is the view of a draft's case; nil when it has none (or cases are not served).
func (s *Server) draftCase(ctx context.Context, draftID string) *CaseView {
	if s.cases == nil || s.cases.Store == nil || s.cases.Profile == nil {
		return nil
	}
	c, err := s.cases.Store.CaseByDraft(ctx, draftID)
	if err != nil {
		if !errors.Is(err, store.ErrNotFound) {
			s.log.Error("case of draft", "draft", draftID, "err", err)
		}
		return nil
	}
	v := s.caseView(c)
	return &v
}

// CaseView is a notice and its process, as the API shows it.
type CaseView struct {
	ID           int64                `json:"id"`
	Notice       string               `json:"notice"`
	Origin       string               `json:"origin"`
	DraftID      string               `json:"draft_id,omitempty"`
	Vehicle      string               `json:"vehicle,omitempty"`
	Licensee     string               `json:"licensee,omitempty"`
	LicenseeName string               `json:"licensee_name,omitempty"`
	LicenseeCNPJ string               `json:"licensee_cnpj,omitempty"`
	Rules        []string             `json:"rules,omitempty"`
	Articles     []string             `json:"articles"`
	Penalty      string               `json:"penalty"`
	Warning      bool                 `json:"warning,omitempty"`
	OffenceAt    wire.Time            `json:"offence_at"`
	IssuedAt     wire.Time            `json:"issued_at"`
	IssuedBy     string               `json:"issued_by,omitempty"`
	Manual       *store.ManualDetails `json:"manual,omitempty"`
	store.CaseStatus
	StateText string `json:"state_text"` // pt-BR
	// Deadline is the defence deadline (Art. 55) once the notice is delivered.
	Deadline *DeadlineView `json:"deadline,omitempty"`
	// DefenceTimely says whether a filed defence was filed on or before the deadline.
	DefenceTimely *bool `json:"defence_timely,omitempty"`
	// FineSuspended says whether, today, a timely defence (Art. 57) or a timely appeal
	// suspends the fine.
	FineSuspended FineSuspendedView `json:"fine_suspended"`
	// AppealDeadline and PaymentDeadline are the last days to appeal and to pay
	// ("YYYY-MM-DD"), once the decision is notified.
	AppealDeadline  string `json:"appeal_deadline,omitempty"`
	PaymentDeadline string `json:"payment_deadline,omitempty"`
	// Next is where the process stands today: the next deadline and who may act.
	Next cases.Next `json:"next"`
	// Electronic is where the electronic notice in the licensee's portal stands (when the
	// profile enables it): available since, the last day of its window, the first opening
	// (ciência) and whether the process fell back to the other means (docs/process.md).
	Electronic *cases.Electronic `json:"electronic,omitempty"`
	// Assessment is the penalty calculus made at issue; AssessmentNote says why there is none.
	Assessment     *penalty.Result `json:"assessment,omitempty"`
	AssessmentNote string          `json:"assessment_note,omitempty"`
	Allowed        []string        `json:"allowed_actions"`
	Events         []CaseEventView `json:"events"`
	// Decisions are the decisions on the defence and the appeal, each with its document.
	Decisions []DecisionView `json:"decisions,omitempty"`
	UpdatedAt wire.Time      `json:"updated_at"`
}

// DeadlineView is the last day to defend and how it was counted (pt-BR).
type DeadlineView struct {
	Date        string `json:"date,omitempty"` // YYYY-MM-DD; absent when it cannot be computed
	Explanation string `json:"explanation"`
}

// FineSuspendedView is whether the fine is suspended and why (pt-BR).
type FineSuspendedView struct {
	Suspended   bool   `json:"suspended"`
	Explanation string `json:"explanation"`
}

// CaseEventView is one event of a case.
type CaseEventView struct {
	Seq        int             `json:"seq"`
	Action     string          `json:"action"`
	Date       string          `json:"date,omitempty"`
	RecordedAt wire.Time       `json:"recorded_at"`
	User       string          `json:"user"`
	Data       json.RawMessage `json:"data"`
}

func (s *Server) caseView(c *store.Case) CaseView {
	p := s.cases.Profile
	v := CaseView{ID: c.ID, Notice: c.Notice, Origin: c.Origin, DraftID: c.DraftID, Vehicle: c.Vehicle, Licensee: c.Licensee,
		LicenseeName: c.LicenseeName, LicenseeCNPJ: c.LicenseeCNPJ, Rules: c.Rules, Articles: c.Articles, Penalty: c.Penalty,
		Warning: c.Warning, OffenceAt: wire.NewTime(c.Offence), IssuedAt: wire.NewTime(c.Issued), IssuedBy: c.IssuedBy,
		Manual: c.Manual, CaseStatus: c.Status, StateText: store.StateText(c.State), Assessment: c.Assessment,
		Allowed: c.Allowed(), UpdatedAt: wire.NewTime(c.UpdatedAt), Decisions: decisionViews(c, fmt.Sprint("/api/v1/cases/", c.ID))}
	if v.Articles == nil {
		v.Articles = []string{}
	}
	if v.Allowed == nil {
		v.Allowed = []string{}
	}
	if c.Assessment == nil {
		switch c.Origin {
		case store.OriginImport:
			v.AssessmentNote = "Auto em papel importado: a penalidade é a que nele consta; o cálculo não foi refeito."
		default:
			v.AssessmentNote = "Auto emitido antes do registro do cálculo da penalidade na emissão."
		}
	}
	if c.Notified != "" || c.Published != "" {
		deadline, why := c.DefenceDeadline(p)
		v.Deadline = &DeadlineView{Explanation: why}
		if !deadline.IsZero() {
			v.Deadline.Date = deadline.Format(time.DateOnly)
			if c.DefenceFiled != "" {
				timely := penalty.DefenceTimely(deadline, c.PenaltyNotice(p).DefenceFiled)
				v.DefenceTimely = &timely
			}
		}
	}
	pc := c
	if c.Origin == store.OriginImport {
		v.FineSuspended.Suspended, v.FineSuspended.Explanation = penalty.FineSuspended(p, c.PenaltyNotice(p), s.casesNow())
	} else {
		v.FineSuspended.Suspended, v.FineSuspended.Explanation = pc.Suspended(p, cases.DayOf(s.casesNow(), p.Location()))
	}
	v.AppealDeadline, _ = pc.AppealDeadline(p)
	v.PaymentDeadline, _ = pc.PaymentDeadline(p)
	v.Next = pc.Next(p, s.casesNow())
	if e, ok := pc.ElectronicNotice(p, c.Opening, s.casesNow()); ok {
		v.Electronic = &e
	}
	for _, e := range c.Events {
		v.Events = append(v.Events, CaseEventView{Seq: e.Seq, Action: e.Action, Date: e.Date, RecordedAt: wire.NewTime(e.At), User: e.User, Data: e.Data})
	}
	if v.Events == nil {
		v.Events = []CaseEventView{}
	}
	return v
}

func (s *Server) caseViews(cs []*store.Case) []CaseView {
	out := make([]CaseView, len(cs))
	for i, c := range cs {
		out[i] = s.caseView(c)
	}
	return out
}

var caseStates = []penalty.Status{penalty.StatusIssued, penalty.StatusNotified, penalty.StatusDefenceFiled,
	penalty.StatusDefenceRejected, penalty.StatusDefenceAccepted, penalty.StatusConfirmed, penalty.StatusPaid,
	penalty.StatusDividaAtiva, penalty.StatusDismissed, penalty.StatusAnnulled, penalty.StatusAppealFiled, penalty.StatusAppealAccepted}

// listCases answers a list of cases for the filter of the request.
func (s *Server) listCases(w http.ResponseWriter, r *http.Request, origins []string) {
	q := r.URL.Query()
	f := store.CaseFilter{State: q.Get("state"), Licensee: q.Get("licensee"), Origins: origins}
	if f.State != "" && !slices.Contains(caseStates, penalty.Status(f.State)) {
		s.writeError(w, r, http.StatusBadRequest, "parâmetro state inválido")
		return
	}
	if o := q.Get("origin"); o != "" {
		allowed := origins
		if allowed == nil {
			allowed = []string{store.OriginDraft, store.OriginManual, store.OriginImport}
		}
		if !slices.Contains(allowed, o) {
			s.writeError(w, r, http.StatusBadRequest, "parâmetro origin inválido")
			return
		}
		f.Origins = []string{o}
	}
	limit, ok := s.limitParam(w, r, q)
	if !ok {
		return
	}
	cs, next, err := s.cases.Store.Cases(r.Context(), f, limit, q.Get("cursor"))
	if err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	s.writeJSON(w, r, http.StatusOK, newList(s.caseViews(cs), next))
}

// handleCases serves GET /api/v1/cases?state=&origin=&licensee=: every notice.
func (s *Server) handleCases(w http.ResponseWriter, r *http.Request) { s.listCases(w, r, nil) }

// handleNotices serves GET /api/v1/notices?origin=&state=&licensee=: the manual and imported
// notices.
func (s *Server) handleNotices(w http.ResponseWriter, r *http.Request) {
	s.listCases(w, r, []string{store.OriginManual, store.OriginImport})
}

func (s *Server) loadCase(w http.ResponseWriter, r *http.Request) (*store.Case, bool) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, http.StatusNotFound, "auto não encontrado")
		return nil, false
	}
	c, err := s.cases.Store.CaseByID(r.Context(), id)
	if err != nil {
		s.fail(w, r, err, "auto")
		return nil, false
	}
	return c, true
}

// handleCase serves GET /api/v1/cases/{id}.
func (s *Server) handleCase(w http.ResponseWriter, r *http.Request) {
	if c, ok := s.loadCase(w, r); ok {
		s.writeJSON(w, r, http.StatusOK, s.caseView(c))
	}
}

// handleCaseAction serves POST /api/v1/cases/{id}/actions {"action":…}.
func (s *Server) handleCaseAction(w http.ResponseWriter, r *http.Request) {
	var a store.CaseAction
	if !s.decodeBody(w, r, &a) {
		return
	}
	if c, ok := s.loadCase(w, r); ok {
		s.act(w, r, c, a)
	}
}

// handleDraftCaseAction serves POST /api/v1/drafts/{id}/case {"action":…}: an act on the case
// of an issued draft.
func (s *Server) handleDraftCaseAction(w http.ResponseWriter, r *http.Request) {
	var a store.CaseAction
	if !s.decodeBody(w, r, &a) {
		return
	}
	d, ok := s.loadDraft(w, r)
	if !ok {
		return
	}
	c, err := s.cases.Store.CaseByDraft(r.Context(), d.Sealed.ID)
	if errors.Is(err, store.ErrNotFound) {
		msg := "a minuta ainda não foi emitida: emita-a antes de registrar atos do processo"
		if d.Status == drafts.StatusDismissed {
			msg = "a minuta foi arquivada: não há processo"
		}
		s.writeError(w, r, http.StatusConflict, msg)
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.act(w, r, c, a)
}

func (s *Server) act(w http.ResponseWriter, r *http.Request, c *store.Case, a store.CaseAction) {
	_, after, err := s.office().Act(r.Context(), c.ID, a, actor(r))
	if err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	s.makeDecisionDocument(r.Context(), after)
	s.writeJSON(w, r, http.StatusOK, s.caseView(after))
}

// licensee finds a licensee of the registry by id or CNPJ.
func (s *Server) licensee(key string) (registry.Licensee, bool) {
	reg := s.cases.Registry
	key = strings.TrimSpace(key)
	if reg == nil || key == "" {
		return registry.Licensee{}, false
	}
	if l, ok := reg.Licensee(key); ok {
		return l, true
	}
	cnpj, err := registry.ParseCNPJ(key)
	if err != nil {
		return registry.Licensee{}, false
	}
	for _, l := range reg.Licensees() {
		if l.CNPJ == cnpj {
			return l, true
		}
	}
	return registry.Licensee{}, false
}

// manualRequest is the body of POST /api/v1/notices.
type manualRequest struct {
	Vehicle     string   `json:"vehicle"`
	Licensee    string   `json:"licensee"` // registry id or CNPJ; default: the vehicle's
	Infractions []string `json:"infractions"`
	At          string   `json:"at"` // when the facts happened, RFC 3339
	Place       string   `json:"place"`
	Lat         *float64 `json:"lat"`
	Lon         *float64 `json:"lon"`
	Description string   `json:"description"`
	Agent       string   `json:"agent"` // default: the user
}

// handleManualNotice serves POST /api/v1/notices: a notice an agent writes from a street
// observation, issued at once with the next number and the penalty calculus.
func (s *Server) handleManualNotice(w http.ResponseWriter, r *http.Request) {
	var req manualRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	now := s.casesNow()
	bad := func(msg string) { s.writeError(w, r, http.StatusBadRequest, msg) }
	req.Vehicle, req.Place, req.Description = strings.TrimSpace(req.Vehicle), strings.TrimSpace(req.Place), strings.TrimSpace(req.Description)
	at, err := time.Parse(time.RFC3339, req.At)
	switch {
	case req.Vehicle == "":
		bad("informe o veículo (vehicle)")
		return
	case len(req.Infractions) == 0:
		bad("informe ao menos uma infração (infractions) do perfil legal")
		return
	case err != nil:
		bad("data e hora dos fatos (at) inválida: use RFC 3339, como 2026-11-29T15:00:00-03:00")
		return
	case at.After(now):
		bad("a data e hora dos fatos (at) é futura")
		return
	case req.Place == "":
		bad("informe o local dos fatos (place)")
		return
	case len([]rune(req.Description)) < 5:
		bad("descreva os fatos observados (description)")
		return
	case (req.Lat == nil) != (req.Lon == nil) || req.Lat != nil && (*req.Lat < -90 || *req.Lat > 90 || *req.Lon < -180 || *req.Lon > 180):
		bad("coordenadas (lat, lon) inválidas")
		return
	}
	for _, id := range req.Infractions {
		if _, ok := s.cases.Profile.ManualInfractions[id]; !ok {
			bad(fmt.Sprintf("infração %q não consta do perfil legal (manual_infractions)", id))
			return
		}
	}
	m := store.ManualNotice{Vehicle: req.Vehicle, Infractions: req.Infractions, Offence: at.UTC().Truncate(time.Millisecond),
		ManualDetails: store.ManualDetails{Place: req.Place, Lat: req.Lat, Lon: req.Lon, Description: req.Description, Agent: strings.TrimSpace(req.Agent)}}
	if m.Agent == "" {
		m.Agent = userFrom(r.Context()).Name
	}
	switch {
	case strings.TrimSpace(req.Licensee) != "":
		l, ok := s.licensee(req.Licensee)
		if !ok {
			bad("licenciado " + strings.TrimSpace(req.Licensee) + " não encontrado no cadastro")
			return
		}
		m.Licensee, m.LicenseeName, m.LicenseeCNPJ, m.LicenseeAddress = l.ID, l.RazaoSocial, l.CNPJ, l.Address
	case s.cases.Registry != nil:
		if v, ok := s.cases.Registry.Vehicle(req.Vehicle); ok {
			m.Licensee = v.Licensee
			if l, ok := s.cases.Registry.Licensee(v.Licensee); ok {
				m.LicenseeName, m.LicenseeCNPJ, m.LicenseeAddress = l.RazaoSocial, l.CNPJ, l.Address
			}
		}
	}
	c, err := s.office().IssueManual(r.Context(), m, actor(r))
	if err != nil {
		s.fail(w, r, err, "auto")
		return
	}
	s.writeJSON(w, r, http.StatusCreated, s.caseView(c))
}
