package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/mail"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/wire"
)

// Who gets what (docs/api.md, "Notification preferences" and "On-duty schedule"): each user
// reads and saves their own notification preferences (GET/PUT /api/v1/me/notifications), a
// supervisor edits the on-duty schedule and a fiscal reads it
// (/api/v1/notifications/schedule). Every change is audited.

// NotifyDirectory keeps the preferences and the schedule and hands them to the dispatcher;
// *notifyconfig.Directory implements it.
type NotifyDirectory interface {
	// Channels are the channels the server sends on.
	Channels() []string
	// Severities is each rule's alert severity ("low", "medium", "high").
	Severities() map[string]string
	// Prefs are the preferences in force for user and their source: "saved", "file", "none".
	Prefs(ctx context.Context, user string) (store.NotifyPrefs, string, error)
	// SetPrefs saves them; the dispatcher uses them from the next alert on.
	SetPrefs(ctx context.Context, p store.NotifyPrefs) error
	// Shifts lists the shifts overlapping [from, to) (to zero: no end); ID 0 is the file's.
	Shifts(ctx context.Context, from, to time.Time) ([]store.NotifyShift, error)
	AddShift(ctx context.Context, s store.NotifyShift) (store.NotifyShift, error)
	DeleteShift(ctx context.Context, id int64) (store.NotifyShift, error)
}

// NotifyConfig serves the preferences and the schedule.
type NotifyConfig struct {
	Directory NotifyDirectory
	// Location is the municipality's time zone: quiet hours and a shift's times written
	// without an offset are read in it. America/Sao_Paulo when nil.
	Location *time.Location
}

// Audit actions.
const (
	auditNotifyPrefs   = "notify.prefs.set"
	auditShiftAdd      = "notify.shift.add"
	auditShiftDelete   = "notify.shift.delete"
	maxPrefsListItems  = 100 // rules, vehicles, licensees: a user follows a handful
	maxPrefsItemLen    = 64
	maxShiftLength     = 7 * 24 * time.Hour
	maxShiftAhead      = 366 * 24 * time.Hour
	defaultShiftsAhead = 62 * 24 * time.Hour
)

func (s *Server) notifyRoutes(a *http.ServeMux) {
	if s.notify == nil || s.notify.Directory == nil {
		return
	}
	a.Handle("GET /api/v1/me/notifications", s.requireRole(store.RoleViewer, s.handleGetPrefs))
	a.Handle("PUT /api/v1/me/notifications", s.requireRole(store.RoleViewer, s.handlePutPrefs))
	a.Handle("GET /api/v1/notifications/schedule", s.requireRole(store.RoleFiscal, s.handleSchedule))
	a.Handle("POST /api/v1/notifications/schedule", s.requireRole(store.RoleSupervisor, s.handleAddShift))
	a.Handle("DELETE /api/v1/notifications/schedule/{id}", s.requireRole(store.RoleSupervisor, s.handleDeleteShift))
	s.pushRoutes(a)
}

func (s *Server) notifyLoc() *time.Location {
	if s.notify.Location != nil {
		return s.notify.Location
	}
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		return time.UTC
	}
	return loc
}

// prefsJSON is the body of PUT /api/v1/me/notifications and the "prefs" of its answer.
type prefsJSON struct {
	Email       string   `json:"email"`
	Telegram    string   `json:"telegram"`
	Rules       []string `json:"rules"`
	Vehicles    []string `json:"vehicles"`
	Licensees   []string `json:"licensees"`
	MinSeverity string   `json:"min_severity"`
	Channels    []string `json:"channels"`
	QuietHours  string   `json:"quiet_hours"`
	OnDutyOnly  bool     `json:"on_duty_only"`
}

type prefsAnswer struct {
	User   string `json:"user"`
	Source string `json:"source"` // saved, file, none
	// Channels are the channels the server sends on (the others cannot be chosen).
	Channels   []string          `json:"channels"`
	Severities map[string]string `json:"severities"`
	TimeZone   string            `json:"time_zone"`
	Prefs      prefsJSON         `json:"prefs"`
	UpdatedAt  wire.Time         `json:"updated_at,omitzero"`
	// Push is the Web Push key and the user's devices; absent when the server sends no Web Push.
	Push *pushAnswer `json:"push,omitempty"`
}

func toPrefsJSON(p store.NotifyPrefs) prefsJSON {
	nz := func(v []string) []string {
		if v == nil {
			return []string{}
		}
		return v
	}
	return prefsJSON{Email: p.Email, Telegram: p.Telegram, Rules: nz(p.Rules), Vehicles: nz(p.Vehicles), Licensees: nz(p.Licensees),
		MinSeverity: p.MinSeverity, Channels: nz(p.Channels), QuietHours: p.QuietHours, OnDutyOnly: p.OnDutyOnly}
}

func (s *Server) writePrefs(w http.ResponseWriter, r *http.Request, user string) {
	p, source, err := s.notify.Directory.Prefs(r.Context(), user)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	ans := prefsAnswer{User: user, Source: source, Channels: s.notify.Directory.Channels(), Severities: s.notify.Directory.Severities(),
		TimeZone: s.notifyLoc().String(), Prefs: toPrefsJSON(p)}
	if ans.Push, err = s.pushInfo(r.Context(), user); err != nil {
		s.internalError(w, r, err)
		return
	}
	if ans.Channels == nil {
		ans.Channels = []string{}
	}
	if !p.UpdatedAt.IsZero() {
		ans.UpdatedAt = wire.NewTime(p.UpdatedAt)
	}
	s.writeJSON(w, r, http.StatusOK, ans)
}

func (s *Server) handleGetPrefs(w http.ResponseWriter, r *http.Request) {
	s.writePrefs(w, r, userFrom(r.Context()).Name)
}

var (
	ruleCodeRE  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,63}$`)
	idRE        = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._\-]{0,63}$`)
	chatIDRE    = regexp.MustCompile(`^(-?[0-9]{1,20}|@[A-Za-z][A-Za-z0-9_]{4,31})$`)
	channelList = []string{"email", "telegram", "webpush"}
)

// checkPrefs checks a body and returns the preferences to store, or the problems found.
func checkPrefs(in prefsJSON, user string) (store.NotifyPrefs, []fieldProblem) {
	var probs []fieldProblem
	bad := func(path, msg string) { probs = append(probs, fieldProblem{Path: path, Message: msg}) }
	p := store.NotifyPrefs{User: user, Email: strings.TrimSpace(in.Email), Telegram: strings.TrimSpace(in.Telegram),
		MinSeverity: in.MinSeverity, QuietHours: strings.TrimSpace(in.QuietHours), OnDutyOnly: in.OnDutyOnly}
	if p.Email != "" {
		a, err := mail.ParseAddress(p.Email)
		if err != nil || a.Address != p.Email || a.Name != "" || len(p.Email) > 254 {
			bad("email", "endereço de e-mail inválido")
		}
	}
	if p.Telegram != "" && !chatIDRE.MatchString(p.Telegram) {
		bad("telegram", "chat do Telegram inválido: use o número do chat (ex.: 123456789) ou @canal")
	}
	if p.MinSeverity != "" {
		sev, err := notify.ParseSeverity(p.MinSeverity)
		if err != nil {
			bad("min_severity", "gravidade mínima inválida: use low, medium ou high")
		} else {
			p.MinSeverity = sev.String()
		}
	}
	if p.QuietHours != "" {
		q, err := notify.ParseQuietHours(p.QuietHours)
		if err != nil || q.From >= 24*time.Hour || q.To > 24*time.Hour {
			bad("quiet_hours", "horário de silêncio inválido: use HH:MM-HH:MM (ex.: 22:00-07:00)")
		} else {
			p.QuietHours = fmt.Sprintf("%02d:%02d-%02d:%02d", int(q.From.Hours()), int(q.From.Minutes())%60, int(q.To.Hours()), int(q.To.Minutes())%60)
		}
	}
	list := func(path string, in []string, re *regexp.Regexp, what string) []string {
		if len(in) > maxPrefsListItems {
			bad(path, fmt.Sprintf("no máximo %d itens", maxPrefsListItems))
			return nil
		}
		var out []string
		for i, v := range in {
			v = strings.TrimSpace(v)
			if len(v) > maxPrefsItemLen || !utf8.ValidString(v) || !re.MatchString(v) {
				bad(fmt.Sprintf("%s[%d]", path, i), what+" inválido")
				continue
			}
			if !slices.Contains(out, v) {
				out = append(out, v)
			}
		}
		return out
	}
	p.Rules = list("rules", in.Rules, ruleCodeRE, "código de regra")
	for i, r := range p.Rules {
		if !slices.Contains(notify.RuleCodes(), r) {
			bad(fmt.Sprintf("rules[%d]", i), "regra desconhecida: "+r)
		}
	}
	p.Vehicles = list("vehicles", in.Vehicles, idRE, "veículo")
	p.Licensees = list("licensees", in.Licensees, idRE, "permissionário")
	for i, c := range in.Channels {
		if !slices.Contains(channelList, c) {
			bad(fmt.Sprintf("channels[%d]", i), "canal desconhecido: use email, telegram ou webpush")
		} else if !slices.Contains(p.Channels, c) {
			p.Channels = append(p.Channels, c)
		}
	}
	return p, probs
}

func (s *Server) handlePutPrefs(w http.ResponseWriter, r *http.Request) {
	var in prefsJSON
	if !s.decodeBody(w, r, &in) {
		return
	}
	u := userFrom(r.Context())
	p, probs := checkPrefs(in, u.Name)
	if len(probs) > 0 {
		s.writeJSON(w, r, http.StatusUnprocessableEntity, invalidRegistry{
			Error: fmt.Sprintf("preferências inválidas: %d problema(s)", len(probs)), Fields: probs})
		return
	}
	before, _, err := s.notify.Directory.Prefs(r.Context(), u.Name)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	if err := s.notify.Directory.SetPrefs(r.Context(), p); err != nil {
		s.fail(w, r, err, "usuário")
		return
	}
	s.record(r, store.AuditEntry{User: u.Name, Action: auditNotifyPrefs, Object: "user:" + u.Name,
		Before: mustJSON(toPrefsJSON(before)), After: mustJSON(toPrefsJSON(p))})
	s.writePrefs(w, r, u.Name)
}

// shiftJSON is a shift as the API shows it: the instants, and the same in the municipality's
// local time ("2026-12-05T18:00") as the dashboard's form takes them.
type shiftJSON struct {
	ID        int64     `json:"id"` // 0: from the notifications file, read-only
	User      string    `json:"user"`
	From      wire.Time `json:"from"`
	To        wire.Time `json:"to"`
	FromLocal string    `json:"from_local"`
	ToLocal   string    `json:"to_local"`
	Source    string    `json:"source"` // "file" or "dashboard"
	CreatedBy string    `json:"created_by,omitempty"`
	CreatedAt wire.Time `json:"created_at,omitzero"`
	OnDuty    bool      `json:"on_duty"` // the shift covers now
}

const localLayout = "2006-01-02T15:04"

func (s *Server) toShiftJSON(sh store.NotifyShift, now time.Time) shiftJSON {
	loc := s.notifyLoc()
	out := shiftJSON{ID: sh.ID, User: sh.User, From: wire.NewTime(sh.From), To: wire.NewTime(sh.To),
		FromLocal: sh.From.In(loc).Format(localLayout), ToLocal: sh.To.In(loc).Format(localLayout),
		Source: "dashboard", CreatedBy: sh.CreatedBy, OnDuty: !now.Before(sh.From) && now.Before(sh.To)}
	if sh.ID == 0 {
		out.Source = "file"
	}
	if !sh.CreatedAt.IsZero() {
		out.CreatedAt = wire.NewTime(sh.CreatedAt)
	}
	return out
}

// parseShiftTime reads RFC 3339, or "2006-01-02T15:04" in the municipality's time.
func (s *Server) parseShiftTime(v string) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339, v); err == nil {
		return t, nil
	}
	return time.ParseInLocation(localLayout, v, s.notifyLoc())
}

func (s *Server) handleSchedule(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	now := s.now()
	from, to := now.Add(-24*time.Hour), time.Time{}
	for name, dst := range map[string]*time.Time{"from": &from, "to": &to} {
		if v := q.Get(name); v != "" {
			t, err := s.parseShiftTime(v)
			if err != nil {
				s.writeError(w, r, http.StatusBadRequest, "parâmetro "+name+" inválido: use RFC 3339 ou AAAA-MM-DDTHH:MM")
				return
			}
			*dst = t
		}
	}
	shifts, err := s.notify.Directory.Shifts(r.Context(), from, to)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	items := make([]shiftJSON, len(shifts))
	for i, sh := range shifts {
		items[i] = s.toShiftJSON(sh, now)
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"items": items, "time_zone": s.notifyLoc().String()})
}

func (s *Server) handleAddShift(w http.ResponseWriter, r *http.Request) {
	var in struct {
		User string `json:"user"`
		From string `json:"from"`
		To   string `json:"to"`
	}
	if !s.decodeBody(w, r, &in) {
		return
	}
	var probs []fieldProblem
	bad := func(path, msg string) { probs = append(probs, fieldProblem{Path: path, Message: msg}) }
	in.User = strings.TrimSpace(in.User)
	if in.User == "" || len(in.User) > 64 {
		bad("user", "informe o usuário de plantão")
	}
	from, errF := s.parseShiftTime(in.From)
	if errF != nil {
		bad("from", "início inválido: use AAAA-MM-DDTHH:MM (horário local) ou RFC 3339")
	}
	to, errT := s.parseShiftTime(in.To)
	if errT != nil {
		bad("to", "fim inválido: use AAAA-MM-DDTHH:MM (horário local) ou RFC 3339")
	}
	now := s.now()
	if errF == nil && errT == nil {
		switch {
		case !to.After(from):
			bad("to", "o fim deve ser depois do início")
		case to.Sub(from) > maxShiftLength:
			bad("to", "um turno dura no máximo 7 dias")
		case !to.After(now):
			bad("to", "o turno já terminou")
		case from.After(now.Add(maxShiftAhead)):
			bad("from", "o turno começa mais de um ano adiante")
		}
	}
	if len(probs) > 0 {
		s.writeJSON(w, r, http.StatusUnprocessableEntity, invalidRegistry{
			Error: fmt.Sprintf("turno inválido: %d problema(s)", len(probs)), Fields: probs})
		return
	}
	me := userFrom(r.Context()).Name
	sh, err := s.notify.Directory.AddShift(r.Context(), store.NotifyShift{User: in.User, From: from, To: to, CreatedBy: me})
	switch {
	case errors.Is(err, store.ErrNotFound):
		s.writeJSON(w, r, http.StatusUnprocessableEntity, invalidRegistry{Error: "turno inválido: 1 problema(s)",
			Fields: []fieldProblem{{Path: "user", Message: "usuário inexistente ou desativado: " + in.User}}})
		return
	case errors.Is(err, store.ErrTooMany):
		s.writeError(w, r, http.StatusConflict, fmt.Sprintf("a escala já tem %d turnos por vir", store.MaxNotifyShifts))
		return
	case err != nil:
		s.fail(w, r, err, "turno")
		return
	}
	out := s.toShiftJSON(sh, now)
	s.record(r, store.AuditEntry{User: me, Action: auditShiftAdd, Object: "shift:" + strconv.FormatInt(sh.ID, 10), After: mustJSON(out)})
	s.writeJSON(w, r, http.StatusCreated, out)
}

func (s *Server) handleDeleteShift(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil || id <= 0 {
		s.writeError(w, r, http.StatusNotFound, "turno não encontrado")
		return
	}
	sh, err := s.notify.Directory.DeleteShift(r.Context(), id)
	if err != nil {
		s.fail(w, r, err, "turno")
		return
	}
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: auditShiftDelete, Object: "shift:" + strconv.FormatInt(id, 10),
		Before: mustJSON(s.toShiftJSON(sh, s.now()))})
	w.WriteHeader(http.StatusNoContent)
}
