package api

// The public transparency report (Lei de Acesso à Informação, Lei 12.527/2011): per licensee and
// month, the hours the monitor observed each licensee's vehicles in service, the share of
// observed time without an offence and the autos by outcome (confirmed, by article, or
// annulled); the alerts (episodes by rule), the autos in process and the notificações
// preliminares only in aggregate, without a licensee's name.
// docs/transparency.md says what each figure is and why nothing personal is in it.

import (
	"context"
	"encoding/csv"
	"fmt"
	"maps"
	"math"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/registry"
)

// TransparencyStore gathers the raw material of the transparency report; *store.DB implements it.
type TransparencyStore interface {
	Transparency(ctx context.Context, from, to time.Time, loc *time.Location) (*store.Transparency, error)
}

// Public rate limit: anonymous requests to the transparency routes per client address and
// window. A person reading the page makes two (the page and its data); a script downloading
// every month of a few years fits too.
const (
	publicRequests = 60
	publicWindow   = time.Minute
)

// transparencyRoutes registers the public report: the JSON and the CSV under /api/v1/public/
// and the page (a static file of the dashboard) at /transparencia. Without a registry (which
// says whose each vehicle is) or the store, there is no report.
func (s *Server) transparencyRoutes(a, root *http.ServeMux, static http.Handler) {
	if s.transparency == nil || s.reg == nil {
		return
	}
	s.transparencyLimit = newThrottle(publicRequests, publicWindow, time.Now)
	a.Handle("GET /api/v1/public/transparency", s.rateLimited(http.HandlerFunc(s.handleTransparency)))
	a.Handle("GET /api/v1/public/transparency.csv", s.rateLimited(http.HandlerFunc(s.handleTransparencyCSV)))
	if static != nil {
		root.Handle("GET /transparencia", s.rateLimited(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/transparencia.html"
			static.ServeHTTP(w, r2)
		})))
	}
}

// rateLimited admits at most publicRequests per client address and publicWindow: the login
// throttle, counting every request.
func (s *Server) rateLimited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ip := remoteIP(r)
		if left, ok := s.transparencyLimit.admit(ip); !ok {
			w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(max(left, time.Second).Seconds()))))
			s.writeError(w, r, http.StatusTooManyRequests, "muitas requisições: tente de novo em instantes")
			return
		}
		s.transparencyLimit.done(ip, true)
		next.ServeHTTP(w, r)
	})
}

// TransparencyReport is the answer of GET /api/v1/public/transparency.
type TransparencyReport struct {
	Month    string `json:"month"` // YYYY-MM
	TimeZone string `json:"time_zone"`
	// TelemetrySince is the first reading whose service time the monitor keeps (the batch log
	// and the spans kept of pruned batches): no hours before it are counted. Null: none.
	TelemetrySince *time.Time `json:"telemetry_since"`
	// Partial: the month starts before TelemetrySince, so its hours are a lower bound.
	Partial     bool                  `json:"partial"`
	GeneratedAt time.Time             `json:"generated_at"`
	Licensees   []TransparencyLicense `json:"licensees"`
	// AlertsByRule are the month's episodes by rule, of every licensee together: an episode is
	// the monitor's alert, not a finding against anyone, so it is published only in aggregate
	// (LGPD; the presumption of innocence). AutosPending are the autos still in process and
	// Warnings the notificações preliminares, in aggregate too.
	AlertsByRule map[string]int `json:"alerts_by_rule"`
	AutosPending int            `json:"autos_pending"`
	Warnings     int            `json:"warnings"`
}

// Outcomes of an auto as the transparency report publishes it.
const (
	OutcomeConfirmed = "confirmed" // the fine is final: confirmed, paid or in dívida ativa
	OutcomeAnnulled  = "annulled"  // without effect: annulled, dismissed, defence or appeal accepted
	OutcomePending   = "pending"   // still in process: published only in aggregate
)

// publicOutcome is the outcome of an auto in the state state.
func publicOutcome(state string) string {
	switch penalty.Status(state) {
	case penalty.StatusConfirmed, penalty.StatusPaid, penalty.StatusDividaAtiva:
		return OutcomeConfirmed
	case penalty.StatusAnnulled, penalty.StatusDismissed, penalty.StatusDefenceAccepted, penalty.StatusAppealAccepted:
		return OutcomeAnnulled
	}
	return OutcomePending
}

// TransparencyLicense is one licensee's month.
type TransparencyLicense struct {
	Licensee    string `json:"licensee"`     // the registry's id; "" for vehicles not registered
	RazaoSocial string `json:"razao_social"` // public data of the concession
	Vehicles    int    `json:"vehicles"`     // vehicles observed in service in the month
	// HoursInService are the hours with telemetry (store.ServiceDay.TelemetryS).
	HoursInService float64 `json:"hours_in_service"`
	// HoursInOffence are the hours of those during an offence episode (store.ServiceDay.OffenceS).
	HoursInOffence float64 `json:"hours_in_offence"`
	// ShareCompliant is 1 − HoursInOffence/HoursInService; null without service hours.
	ShareCompliant *float64 `json:"share_compliant"`
	// AutosConfirmed are the licensee's autos of the month whose fine is final, AutosByArticle
	// them by article; AutosAnnulled those without effect. An auto still in process is not
	// published under the licensee's name (TransparencyReport.AutosPending).
	AutosConfirmed int             `json:"autos_confirmed"`
	AutosAnnulled  int             `json:"autos_annulled"`
	AutosByArticle map[string]int  `json:"autos_by_article"`
	offenceS       float64         // exact sums, rounded for the answer
	serviceS       float64         //
	vehicles       map[string]bool //
}

// parseMonth reads ?month=YYYY-MM (default: the current month in loc) and returns its bounds.
func parseMonth(r *http.Request, loc *time.Location, now time.Time) (from, to time.Time, ok bool) {
	m := r.URL.Query().Get("month")
	if m == "" {
		m = now.In(loc).Format("2006-01")
	}
	t, err := time.ParseInLocation("2006-01", m, loc)
	if err != nil || t.Year() < 2000 || t.After(now) {
		return time.Time{}, time.Time{}, false
	}
	return t, t.AddDate(0, 1, 0), true
}

func (s *Server) transparencyReport(w http.ResponseWriter, r *http.Request) (*TransparencyReport, bool) {
	loc := s.reg.Location()
	now := s.now()
	from, to, ok := parseMonth(r, loc, now)
	if !ok {
		s.writeError(w, r, http.StatusBadRequest, "mês inválido: use AAAA-MM, até o mês corrente")
		return nil, false
	}
	raw, err := s.transparency.Transparency(r.Context(), from, to, loc)
	if err != nil {
		s.internalError(w, r, fmt.Errorf("transparency: %w", err))
		return nil, false
	}
	rep := &TransparencyReport{Month: from.Format("2006-01"), TimeZone: loc.String(), GeneratedAt: now.UTC().Truncate(time.Second),
		Licensees: []TransparencyLicense{}, AlertsByRule: map[string]int{}}
	if !raw.TelemetrySince.IsZero() {
		since := raw.TelemetrySince
		rep.TelemetrySince = &since
		rep.Partial = from.Before(since)
	} else {
		rep.Partial = true
	}
	reg := s.reg.Snapshot()
	byID := map[string]*TransparencyLicense{}
	licensee := func(id string) *TransparencyLicense {
		if l, ok := byID[id]; ok {
			return l
		}
		l := &TransparencyLicense{Licensee: id, RazaoSocial: "veículos não cadastrados",
			AutosByArticle: map[string]int{}, vehicles: map[string]bool{}}
		for _, rl := range reg.Licensees {
			if rl.ID == id && id != "" {
				l.RazaoSocial = rl.RazaoSocial
			}
		}
		byID[id] = l
		return l
	}
	vehicles := map[string]registry.Vehicle{}
	for _, v := range reg.Vehicles {
		vehicles[v.ID] = v
	}
	for _, d := range raw.Days {
		id := ""
		if v, ok := vehicles[d.Vehicle]; ok {
			if day, err := registry.ParseDate(d.Day); err == nil {
				id = v.LicenseeOn(day) // whose the vehicle was on that day
			}
		}
		l := licensee(id)
		if d.TelemetryS > 0 {
			l.vehicles[d.Vehicle] = true
		}
		l.serviceS += d.TelemetryS
		l.offenceS += d.OffenceS
		for rule, n := range d.Episodes {
			rep.AlertsByRule[rule] += n
		}
	}
	for _, n := range raw.Issued {
		if n.Warning {
			rep.Warnings++
			continue
		}
		switch publicOutcome(n.State) {
		case OutcomeConfirmed:
			l := licensee(n.Licensee)
			l.AutosConfirmed++
			for _, a := range n.Articles {
				l.AutosByArticle[a]++
			}
		case OutcomeAnnulled:
			licensee(n.Licensee).AutosAnnulled++
		default:
			rep.AutosPending++
		}
	}
	for _, id := range slices.Sorted(maps.Keys(byID)) {
		l := byID[id]
		l.Vehicles = len(l.vehicles)
		l.HoursInService = round(l.serviceS/3600, 2)
		l.HoursInOffence = round(l.offenceS/3600, 2)
		if l.serviceS > 0 {
			share := round(1-l.offenceS/l.serviceS, 4)
			l.ShareCompliant = &share
		}
		rep.Licensees = append(rep.Licensees, *l)
	}
	return rep, true
}

func round(x float64, places int) float64 {
	p := math.Pow(10, float64(places))
	return math.Round(x*p) / p
}

// handleTransparency serves GET /api/v1/public/transparency?month=YYYY-MM.
func (s *Server) handleTransparency(w http.ResponseWriter, r *http.Request) {
	if rep, ok := s.transparencyReport(w, r); ok {
		s.writeJSON(w, r, http.StatusOK, rep)
	}
}

// handleTransparencyCSV serves GET /api/v1/public/transparency.csv?month=YYYY-MM: the report in
// long form, one figure a line (mes, licenciado, razao_social, indicador, chave, valor), so
// that a spreadsheet can pivot it whatever rules and articles a month has.
func (s *Server) handleTransparencyCSV(w http.ResponseWriter, r *http.Request) {
	rep, ok := s.transparencyReport(w, r)
	if !ok {
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/csv; charset=utf-8")
	h.Set("Content-Disposition", `attachment; filename="transparencia-`+rep.Month+`.csv"`)
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; frame-ancestors 'none'")
	cw := csv.NewWriter(w)
	_ = cw.Write([]string{"mes", "licenciado", "razao_social", "indicador", "chave", "valor"})
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }
	for _, l := range rep.Licensees {
		row := func(indicator, key, value string) {
			_ = cw.Write([]string{rep.Month, l.Licensee, csvSafe(l.RazaoSocial), indicator, csvSafe(key), value})
		}
		row("veiculos_em_servico", "", strconv.Itoa(l.Vehicles))
		row("horas_em_servico", "", f(l.HoursInService))
		row("horas_em_infracao", "", f(l.HoursInOffence))
		if l.ShareCompliant != nil {
			row("parcela_do_tempo_em_conformidade", "", f(*l.ShareCompliant))
		}
		row("autos_confirmados", "", strconv.Itoa(l.AutosConfirmed))
		row("autos_anulados", "", strconv.Itoa(l.AutosAnnulled))
		for _, k := range slices.Sorted(maps.Keys(l.AutosByArticle)) {
			row("autos_confirmados_por_artigo", k, strconv.Itoa(l.AutosByArticle[k]))
		}
	}
	// What is published only in aggregate, without a licensee.
	all := func(indicator, key, value string) {
		_ = cw.Write([]string{rep.Month, "", "todos os permissionários", indicator, csvSafe(key), value})
	}
	for _, k := range slices.Sorted(maps.Keys(rep.AlertsByRule)) {
		all("alertas", k, strconv.Itoa(rep.AlertsByRule[k]))
	}
	all("autos_em_andamento", "", strconv.Itoa(rep.AutosPending))
	all("notificacoes_preliminares", "", strconv.Itoa(rep.Warnings))
	cw.Flush()
}

// csvSafe keeps a spreadsheet from reading a cell as a formula (CSV injection): a value that
// starts with =, +, - or @ gets a leading apostrophe.
func csvSafe(v string) string {
	if v != "" && (v[0] == '=' || v[0] == '+' || v[0] == '-' || v[0] == '@') {
		return "'" + v
	}
	return v
}
