package api

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/monitor/profile"
	"github.com/trenzinho/trenzinho/monitor/registry"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/wire"
)

// Cases is the store of the notices and their process after issue (store.DB implements it).
type Cases interface {
	IssueDraft(ctx context.Context, id, reason string, p *profile.Profile, at time.Time, actor store.Actor) (*store.Case, error)
	IssueManual(ctx context.Context, m store.ManualNotice, p *profile.Profile, at time.Time, actor store.Actor) (*store.Case, error)
	ImportNotices(ctx context.Context, ns []store.ImportedNotice, at time.Time, actor store.Actor) ([]*store.Case, error)
	CaseAct(ctx context.Context, id int64, a store.CaseAction, p *profile.Profile, now time.Time, actor store.Actor) (before, after *store.Case, err error)
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
	// Registry finds the licensee of a vehicle and licensees by id or CNPJ; nil: none is known
	// (the calculus then says recidivism cannot be checked).
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
}

// Limits of the import.
const (
	maxImportBytes = 4 << 20
	maxImportRows  = 5000
)

// caseRoutes registers the case routes when the server has a case store.
func (s *Server) caseRoutes(a *http.ServeMux) {
	if s.cases == nil || s.cases.Store == nil || s.cases.Profile == nil {
		return
	}
	a.Handle("GET /api/v1/cases", s.requireRole(store.RoleViewer, s.handleCases))
	a.Handle("GET /api/v1/cases/{id}", s.requireRole(store.RoleViewer, s.handleCase))
	a.Handle("POST /api/v1/cases/{id}/actions", s.requireRole(store.RoleFiscal, s.handleCaseAction))
	a.Handle("POST /api/v1/drafts/{id}/case", s.requireRole(store.RoleFiscal, s.handleDraftCaseAction))
	a.Handle("GET /api/v1/notices", s.requireRole(store.RoleViewer, s.handleNotices))
	a.Handle("POST /api/v1/notices", s.requireRole(store.RoleFiscal, s.handleManualNotice))
	a.Handle("POST /api/v1/notices/import", s.requireRole(store.RoleSupervisor, s.handleImportNotices))
}

func (s *Server) casesNow() time.Time {
	if s.cases != nil && s.cases.Now != nil {
		return s.cases.Now()
	}
	return time.Now()
}

func actor(r *http.Request) store.Actor {
	u := userFrom(r.Context())
	return store.Actor{User: u.Name, RemoteAddr: remoteIP(r), Agent: u.Agent}
}

// decide records an agent's decision on a draft. With a case store, issuing also opens the
// draft's case and makes the penalty calculus, audited as case.issue; without one, the draft is
// only numbered.
func (s *Server) decide(r *http.Request, d *store.DraftRecord, decision, reason, user string) (string, error) {
	if s.cases == nil || s.cases.Store == nil || s.cases.Profile == nil || decision != drafts.StatusIssued {
		return s.drafts.DecideDraft(r.Context(), d.Sealed.ID, decision, reason, user, s.casesNow())
	}
	c, err := s.cases.Store.IssueDraft(r.Context(), d.Sealed.ID, reason, s.cases.Profile, s.casesNow(), actor(r))
	if err != nil {
		return "", err
	}
	return c.Notice, nil
}

// caseError answers an error of the case store and reports whether err was one.
func (s *Server) caseError(w http.ResponseWriter, r *http.Request, err error) bool {
	var ce *store.CaseError
	switch {
	case err == nil:
		return false
	case errors.As(err, &ce) && ce.Conflict:
		s.writeError(w, r, http.StatusConflict, ce.Msg)
	case errors.As(err, &ce):
		s.writeError(w, r, http.StatusBadRequest, ce.Msg)
	default:
		return false
	}
	return true
}

// DecisionAnswer is the answer of POST /api/v1/drafts/{id}/decision: the draft, and the case
// with the penalty calculus when it was issued.
type DecisionAnswer struct {
	DraftSummary
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
	// Assessment is the penalty calculus made at issue; AssessmentNote says why there is none.
	Assessment     *penalty.Result `json:"assessment,omitempty"`
	AssessmentNote string          `json:"assessment_note,omitempty"`
	Allowed        []string        `json:"allowed_actions"`
	Events         []CaseEventView `json:"events"`
	UpdatedAt      wire.Time       `json:"updated_at"`
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
		Manual: c.Manual, CaseStatus: c.CaseStatus, StateText: store.StateText(c.State), Assessment: c.Assessment,
		Allowed: c.Allowed(p), UpdatedAt: wire.NewTime(c.UpdatedAt)}
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
	pc := c.Process()
	if c.Origin == store.OriginImport {
		v.FineSuspended.Suspended, v.FineSuspended.Explanation = penalty.FineSuspended(p, c.PenaltyNotice(p), s.casesNow())
	} else {
		v.FineSuspended.Suspended, v.FineSuspended.Explanation = pc.Suspended(p, cases.DayOf(s.casesNow(), p.Location()))
	}
	v.AppealDeadline, _ = pc.AppealDeadline(p)
	v.PaymentDeadline, _ = pc.PaymentDeadline(p)
	v.Next = pc.Next(p, s.casesNow())
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
	if errors.Is(err, store.ErrBadCursor) {
		s.writeError(w, r, http.StatusBadRequest, "parâmetro cursor inválido")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
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
	if errors.Is(err, store.ErrNotFound) {
		s.writeError(w, r, http.StatusNotFound, "auto não encontrado")
		return nil, false
	}
	if err != nil {
		s.internalError(w, r, err)
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
	// The acts that decide on an auto are the competent authority's (the appeal's, the
	// superior authority's), never its issuer's nor, for the appeal, who decided the defence.
	u := userFrom(r.Context())
	if !u.Role.AtLeast(store.Role(cases.RoleFor(s.cases.Profile, a.Action))) {
		s.writeError(w, r, http.StatusForbidden, cases.RoleRequired(s.cases.Profile, a.Action))
		return
	}
	if msg := c.Process().Impediment(a.Action, u.Name); msg != "" {
		s.writeError(w, r, http.StatusConflict, msg)
		return
	}
	_, after, err := s.cases.Store.CaseAct(r.Context(), c.ID, a, s.cases.Profile, s.casesNow(), actor(r))
	if s.caseError(w, r, err) {
		return
	}
	if errors.Is(err, store.ErrNotFound) {
		s.writeError(w, r, http.StatusNotFound, "auto não encontrado")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
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
		m.Licensee, m.LicenseeName, m.LicenseeCNPJ = l.ID, l.RazaoSocial, l.CNPJ
	case s.cases.Registry != nil:
		if v, ok := s.cases.Registry.Vehicle(req.Vehicle); ok {
			m.Licensee = v.Licensee
			if l, ok := s.cases.Registry.Licensee(v.Licensee); ok {
				m.LicenseeName, m.LicenseeCNPJ = l.RazaoSocial, l.CNPJ
			}
		}
	}
	c, err := s.cases.Store.IssueManual(r.Context(), m, s.cases.Profile, now, actor(r))
	if s.caseError(w, r, err) {
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, s.caseView(c))
}

// importRow is one earlier paper notice as POST /api/v1/notices/import receives it (JSON, or a
// CSV row with these names as the header; articles separated by ";").
type importRow struct {
	Number          string   `json:"number"`
	OffenceDate     string   `json:"offence_date"`
	IssueDate       string   `json:"issue_date"`
	Licensee        string   `json:"licensee"`
	LicenseeCNPJ    string   `json:"licensee_cnpj"`
	LicenseeName    string   `json:"licensee_name"`
	Vehicle         string   `json:"vehicle"`
	Articles        []string `json:"articles"`
	Penalty         string   `json:"penalty"`
	Warning         bool     `json:"warning"`
	Status          string   `json:"status"`
	NotifiedDate    string   `json:"notified_date"`
	NotifiedMode    string   `json:"notified_mode"`
	PublishedDate   string   `json:"published_date"`
	RefusedToSign   bool     `json:"refused_to_sign"`
	DefenceDate     string   `json:"defence_date"`
	DecisionDate    string   `json:"decision_date"`
	PaidDate        string   `json:"paid_date"`
	DividaAtivaDate string   `json:"divida_ativa_date"`
	FinalDate       string   `json:"final_date"`
	SuspensionFrom  string   `json:"suspension_from"`
	SuspensionDays  int      `json:"suspension_days"`
	Note            string   `json:"note"`
}

// handleImportNotices serves POST /api/v1/notices/import: earlier paper notices, all or none.
func (s *Server) handleImportNotices(w http.ResponseWriter, r *http.Request) {
	rows, ok := s.readImport(w, r)
	if !ok {
		return
	}
	if len(rows) == 0 {
		s.writeError(w, r, http.StatusBadRequest, "nenhum auto para importar")
		return
	}
	if len(rows) > maxImportRows {
		s.writeError(w, r, http.StatusRequestEntityTooLarge, fmt.Sprintf("no máximo %d autos por importação", maxImportRows))
		return
	}
	ns := make([]store.ImportedNotice, len(rows))
	seen := map[string]int{}
	for i, row := range rows {
		n, err := s.importNotice(row)
		if err == nil {
			if j, dup := seen[n.Number]; dup {
				err = fmt.Errorf("número repetido (também no auto %d)", j+1)
			}
			seen[n.Number] = i
		}
		if err != nil {
			what := fmt.Sprintf("auto %d", i+1)
			if num := strings.TrimSpace(row.Number); num != "" {
				what += " (" + num + ")"
			}
			s.writeError(w, r, http.StatusBadRequest, what+": "+err.Error())
			return
		}
		ns[i] = n
	}
	cs, err := s.cases.Store.ImportNotices(r.Context(), ns, s.casesNow(), actor(r))
	if s.caseError(w, r, err) {
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusCreated, newList(s.caseViews(cs), ""))
}

// readImport reads the rows of an import: CSV (text/csv) or JSON (a list, or {"notices":[…]}).
func (s *Server) readImport(w http.ResponseWriter, r *http.Request) ([]importRow, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxImportBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			s.writeError(w, r, http.StatusRequestEntityTooLarge, "corpo da requisição grande demais")
		} else {
			s.writeError(w, r, http.StatusBadRequest, "corpo da requisição ilegível")
		}
		return nil, false
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt == "text/csv" {
		rows, err := parseImportCSV(body)
		if err != nil {
			s.writeError(w, r, http.StatusBadRequest, "CSV inválido: "+err.Error())
			return nil, false
		}
		return rows, true
	}
	var rows []importRow
	dec := func(v any) error {
		d := json.NewDecoder(strings.NewReader(string(body)))
		d.DisallowUnknownFields()
		if err := d.Decode(v); err != nil {
			return err
		}
		if _, err := d.Token(); err != io.EOF {
			return errors.New("trailing data")
		}
		return nil
	}
	trimmed := strings.TrimSpace(string(body))
	if strings.HasPrefix(trimmed, "[") {
		err = dec(&rows)
	} else {
		var wrap struct {
			Notices []importRow `json:"notices"`
		}
		err = dec(&wrap)
		rows = wrap.Notices
	}
	if err != nil {
		s.writeError(w, r, http.StatusBadRequest, "corpo da requisição inválido: "+jsonProblem(err))
		return nil, false
	}
	return rows, true
}

// importAliases are the Portuguese names a CSV header may give the importRow fields (matched
// without accents, case or the difference between spaces, hyphens and underscores), besides
// their JSON names.
var importAliases = map[string]string{
	"numero": "number", "numero_do_auto": "number", "auto": "number",
	"data_fato": "offence_date", "data_do_fato": "offence_date", "data_infracao": "offence_date", "data_da_infracao": "offence_date",
	"data_emissao": "issue_date", "data_da_emissao": "issue_date",
	"permissionario": "licensee", "cnpj": "licensee_cnpj", "cnpj_permissionario": "licensee_cnpj", "razao_social": "licensee_name",
	"veiculo": "vehicle", "artigos": "articles", "penalidade": "penalty", "notificacao_preliminar": "warning",
	"situacao": "status", "data_notificacao": "notified_date", "forma_notificacao": "notified_mode",
	"data_edital": "published_date", "data_publicacao": "published_date", "recusa_assinatura": "refused_to_sign",
	"data_defesa": "defence_date", "data_decisao": "decision_date", "data_pagamento": "paid_date",
	"data_divida_ativa": "divida_ativa_date", "data_definitiva": "final_date",
	"suspensao_inicio": "suspension_from", "suspensao_dias": "suspension_days", "observacao": "note", "obs": "note",
}

var unaccent = strings.NewReplacer("á", "a", "à", "a", "â", "a", "ã", "a", "é", "e", "ê", "e", "í", "i", "ó", "o", "ô", "o",
	"õ", "o", "ú", "u", "ü", "u", "ç", "c", " ", "_", "-", "_")

// headerKey is a header cell as importAliases keys it: "Data da infração" → "data_da_infracao".
func headerKey(h string) string { return unaccent.Replace(strings.ToLower(strings.TrimSpace(h))) }

// parseImportCSV reads a CSV whose header names the importRow fields (by their JSON names or
// their Portuguese aliases; comma or semicolon separated).
func parseImportCSV(b []byte) ([]importRow, error) {
	text := strings.TrimPrefix(string(b), "\ufeff")
	first, _, _ := strings.Cut(text, "\n")
	cr := csv.NewReader(strings.NewReader(text))
	if strings.Count(first, ";") > strings.Count(first, ",") {
		cr.Comma = ';'
	}
	cr.TrimLeadingSpace = true
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, nil
	}
	header := recs[0]
	known := map[string]bool{}
	for _, f := range []string{"number", "offence_date", "issue_date", "licensee", "licensee_cnpj", "licensee_name", "vehicle",
		"articles", "penalty", "warning", "status", "notified_date", "notified_mode", "published_date", "refused_to_sign",
		"defence_date", "decision_date", "paid_date", "divida_ativa_date", "final_date", "suspension_from", "suspension_days", "note"} {
		known[f] = true
	}
	for i, h := range header {
		header[i] = strings.ToLower(strings.TrimSpace(h))
		if f, ok := importAliases[headerKey(header[i])]; ok {
			header[i] = f
		}
		if !known[header[i]] {
			return nil, fmt.Errorf("coluna desconhecida %q", h)
		}
	}
	var rows []importRow
	for li, rec := range recs[1:] {
		var row importRow
		for i, v := range rec {
			v = strings.TrimSpace(v)
			if i >= len(header) || v == "" {
				continue
			}
			var err error
			switch header[i] {
			case "number":
				row.Number = v
			case "offence_date":
				row.OffenceDate = v
			case "issue_date":
				row.IssueDate = v
			case "licensee":
				row.Licensee = v
			case "licensee_cnpj":
				row.LicenseeCNPJ = v
			case "licensee_name":
				row.LicenseeName = v
			case "vehicle":
				row.Vehicle = v
			case "articles":
				for a := range strings.SplitSeq(v, ";") {
					if a = strings.TrimSpace(a); a != "" {
						row.Articles = append(row.Articles, a)
					}
				}
			case "penalty":
				row.Penalty = v
			case "warning":
				row.Warning, err = csvBool(v)
			case "status":
				row.Status = v
			case "notified_date":
				row.NotifiedDate = v
			case "notified_mode":
				row.NotifiedMode = v
			case "published_date":
				row.PublishedDate = v
			case "refused_to_sign":
				row.RefusedToSign, err = csvBool(v)
			case "defence_date":
				row.DefenceDate = v
			case "decision_date":
				row.DecisionDate = v
			case "paid_date":
				row.PaidDate = v
			case "divida_ativa_date":
				row.DividaAtivaDate = v
			case "final_date":
				row.FinalDate = v
			case "suspension_from":
				row.SuspensionFrom = v
			case "suspension_days":
				row.SuspensionDays, err = strconv.Atoi(v)
			case "note":
				row.Note = v
			}
			if err != nil {
				return nil, fmt.Errorf("linha %d, coluna %s: valor inválido %q", li+2, header[i], v)
			}
		}
		rows = append(rows, row)
	}
	return rows, nil
}

func csvBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "true", "1", "sim", "s", "yes":
		return true, nil
	case "false", "0", "não", "nao", "n", "no":
		return false, nil
	}
	return false, errors.New("not a boolean")
}

// importNotice validates a row and turns it into the stored record: the licensee resolved in
// the registry (it is the key of recidivism), days checked and ordered, none in the future.
func (s *Server) importNotice(row importRow) (store.ImportedNotice, error) {
	p := s.cases.Profile
	loc := p.Location()
	today := s.casesNow().In(loc).Format(time.DateOnly)
	n := store.ImportedNotice{Number: strings.TrimSpace(row.Number), Vehicle: strings.TrimSpace(row.Vehicle),
		Penalty: strings.TrimSpace(row.Penalty), Warning: row.Warning, Status: penalty.Status(strings.TrimSpace(row.Status)),
		Mode: strings.TrimSpace(row.NotifiedMode), RefusedToSign: row.RefusedToSign, LicenseeName: strings.TrimSpace(row.LicenseeName),
		Note: strings.TrimSpace(row.Note)}
	if n.Number == "" || len(n.Number) > 64 {
		return n, errors.New("número do auto (number) obrigatório, até 64 caracteres")
	}
	for _, a := range row.Articles {
		if a = strings.TrimSpace(a); a != "" {
			n.Articles = append(n.Articles, a)
		}
	}
	if len(n.Articles) == 0 {
		return n, errors.New("informe os artigos infringidos (articles)")
	}
	if n.Penalty == "" {
		return n, errors.New("informe o artigo da penalidade (penalty)")
	}
	if !slices.Contains(caseStates, n.Status) {
		return n, fmt.Errorf("situação (status) inválida %q: use issued, notified, defence_filed, defence_rejected, defence_accepted, confirmed, paid, dividaativa, dismissed ou annulled", row.Status)
	}
	if n.Mode != "" && n.Mode != penalty.ModeInPerson && n.Mode != penalty.ModeMail && n.Mode != penalty.ModeEdital {
		return n, fmt.Errorf("forma de notificação (notified_mode) inválida %q: use in_person, mail ou edital", n.Mode)
	}
	day := func(v, what string, required bool) (string, error) {
		if strings.TrimSpace(v) == "" {
			if required {
				return "", fmt.Errorf("informe a data %s", what)
			}
			return "", nil
		}
		d, ok := store.ParseDay(v, loc)
		if !ok {
			return "", fmt.Errorf("data %s inválida %q (use AAAA-MM-DD)", what, v)
		}
		if d > today {
			f, _ := time.Parse(time.DateOnly, d)
			return "", fmt.Errorf("a data %s (%s) é futura", what, f.Format("02/01/2006"))
		}
		return d, nil
	}
	var err error
	var offence, issued string
	if offence, err = day(row.OffenceDate, "da infração (offence_date)", true); err != nil {
		return n, err
	}
	if issued, err = day(row.IssueDate, "de emissão (issue_date)", true); err != nil {
		return n, err
	}
	fields := []struct {
		v    string
		dst  *string
		what string
	}{
		{row.NotifiedDate, &n.Notified, "da notificação (notified_date)"}, {row.PublishedDate, &n.Published, "de publicação do edital (published_date)"},
		{row.DefenceDate, &n.DefenceFiled, "da defesa (defence_date)"}, {row.DecisionDate, &n.Decided, "da decisão (decision_date)"},
		{row.PaidDate, &n.Paid, "do pagamento (paid_date)"}, {row.DividaAtivaDate, &n.DividaAtiva, "da inscrição em dívida ativa (divida_ativa_date)"},
		{row.FinalDate, &n.Final, "em que a multa se tornou definitiva (final_date)"},
	}
	for _, f := range fields {
		if *f.dst, err = day(f.v, f.what, false); err != nil {
			return n, err
		}
	}
	order := []struct{ a, b, what string }{
		{offence, issued, "a emissão é anterior à infração"},
		{issued, n.Notified, "a notificação é anterior à emissão"},
		{issued, n.Published, "a publicação do edital é anterior à emissão"},
		{n.Notified, n.DefenceFiled, "a defesa é anterior à notificação"},
		{n.DefenceFiled, n.Decided, "a decisão é anterior à defesa"},
		{issued, n.Paid, "o pagamento é anterior à emissão"},
		{issued, n.DividaAtiva, "a inscrição em dívida ativa é anterior à emissão"},
	}
	for _, o := range order {
		if o.a != "" && o.b != "" && o.b < o.a {
			return n, errors.New(o.what)
		}
	}
	if n.Mode == penalty.ModeEdital && n.Published == "" {
		return n, errors.New("notificação por edital sem a data de publicação (published_date)")
	}
	if n.RefusedToSign && n.Mode != penalty.ModeInPerson {
		return n, errors.New("a recusa em assinar (refused_to_sign) só se registra na entrega em mãos")
	}
	if row.SuspensionFrom != "" || row.SuspensionDays != 0 {
		from, err := day(row.SuspensionFrom, "de início da suspensão (suspension_from)", true)
		if err != nil {
			return n, err
		}
		if row.SuspensionDays <= 0 {
			return n, errors.New("informe os dias de suspensão (suspension_days)")
		}
		f, _ := time.Parse(time.DateOnly, from)
		n.Suspension = &store.AppliedSuspension{From: from, Days: row.SuspensionDays,
			To: f.AddDate(0, 0, row.SuspensionDays-1).Format(time.DateOnly)}
	}
	// The licensee is the key of recidivism: it must be the registry's.
	switch {
	case strings.TrimSpace(row.Licensee) != "" || strings.TrimSpace(row.LicenseeCNPJ) != "":
		key := strings.TrimSpace(row.Licensee)
		if key == "" {
			cnpj, err := registry.ParseCNPJ(row.LicenseeCNPJ)
			if err != nil {
				return n, err
			}
			key = cnpj
		}
		if s.cases.Registry == nil {
			if strings.TrimSpace(row.Licensee) == "" {
				return n, errors.New("sem cadastro de licenciados no monitor, informe o licenciado pelo seu id (licensee)")
			}
			n.Licensee = key
			break
		}
		l, ok := s.licensee(key)
		if !ok {
			return n, fmt.Errorf("licenciado %s não encontrado no cadastro: sem ele o auto não contaria para a reincidência", key)
		}
		n.Licensee, n.LicenseeCNPJ = l.ID, l.CNPJ
		if n.LicenseeName == "" {
			n.LicenseeName = l.RazaoSocial
		}
	default:
		return n, errors.New("informe o licenciado (licensee ou licensee_cnpj)")
	}
	if t, err := time.Parse(time.RFC3339, strings.TrimSpace(row.OffenceDate)); err == nil {
		n.Offence = t.UTC().Truncate(time.Millisecond)
	} else {
		d, _ := time.Parse(time.DateOnly, offence)
		n.Offence = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, loc).UTC()
	}
	d, _ := time.Parse(time.DateOnly, issued)
	n.Issued = time.Date(d.Year(), d.Month(), d.Day(), 12, 0, 0, 0, loc).UTC()
	return n, nil
}
