package notify

import (
	"fmt"
	"html"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/rules"
)

// Severity orders alerts for the users' "minimum severity". The rules have no severity of their
// own: DefaultSeverity gives one per rule, and the server configuration may override it.
type Severity int

// Severities, lowest first.
const (
	Low Severity = iota + 1
	Medium
	High
)

// ParseSeverity reads "baixa"/"low", "media"/"medium", "alta"/"high".
func ParseSeverity(s string) (Severity, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "low", "baixa":
		return Low, nil
	case "medium", "media", "média":
		return Medium, nil
	case "high", "alta":
		return High, nil
	}
	return 0, fmt.Errorf("severity %q: want low, medium or high", s)
}

func (s Severity) String() string {
	switch s {
	case Low:
		return "low"
	case Medium:
		return "medium"
	case High:
		return "high"
	}
	return "severity(" + strconv.Itoa(int(s)) + ")"
}

// DefaultSeverity is the severity of a rule's alert when the configuration gives none: high for
// what harms people now and needs an agent on the spot (speeding, sound near a hospital or
// school), medium for the other violations of the law, low for what can wait for office hours
// (a device fault, an expired document, a parked vehicle). An unknown rule is medium.
func DefaultSeverity(rule string) Severity {
	switch rule {
	case "speed", "sensitive_zone_sound":
		return High
	case "parked_public_road", "telemetry_fault", "document_expired":
		return Low
	}
	return Medium
}

// RuleCodes are the codes of the rules the engine applies (rules.Table), sorted.
func RuleCodes() []string {
	out := make([]string, 0, len(rules.Table))
	for _, r := range rules.Table {
		out = append(out, r.ID)
	}
	slices.Sort(out)
	return out
}

// RuleName is a rule's name in Portuguese as the dashboard and the notices show it
// (rules.Table); the code itself when unknown.
func RuleName(rule string) string {
	if r, ok := rules.Info(rule); ok {
		return r.Name
	}
	return rule
}

// Alert is what a notification says about one episode. It holds no personal data: the
// licensee is there to match the users' preferences and is never printed.
type Alert struct {
	EpisodeID string
	Rule      string
	Vehicle   string
	Licensee  string // registry id; for matching only
	Severity  Severity
	Start     time.Time
	Peak      float64
	Limit     float64
	Unit      string
	Estimate  bool
	Lat, Lon  float64
	Place     string // the sensitive site or the area, when the episode names one
	DistanceM float64
	// Unacknowledged is, in an escalation (Escalator), how long the alert has waited without
	// anyone acknowledging it; zero in the first notification.
	Unacknowledged time.Duration `json:",omitempty"`
}

// FromEpisode is the alert of an episode. Of the episode it takes only the rule, the vehicle,
// the values, the place and the time: an expired document's number or holder stays out.
func FromEpisode(e *rules.Episode, licensee string, sev Severity) Alert {
	a := Alert{
		EpisodeID: e.ID, Rule: e.Rule, Vehicle: e.Vehicle, Licensee: licensee, Severity: sev,
		Start: e.Start.Time, Peak: e.Peak, Limit: e.Limit, Unit: e.Unit, Estimate: e.Estimate,
		Lat: e.Lat, Lon: e.Lon,
	}
	if a.Severity == 0 {
		a.Severity = DefaultSeverity(e.Rule)
	}
	switch {
	case e.Site != nil && e.Site.Name != "":
		a.Place, a.DistanceM = e.Site.Name, e.Site.DistanceM
	case e.Area != nil:
		a.Place = *e.Area
	}
	return a
}

// Composer builds the messages: the dashboard's address for the links, and the municipality's
// time zone for the times.
type Composer struct {
	// BaseURL is the dashboard's public address, "https://monitor.piuma.es.gov.br"; the link
	// is BaseURL + "/#/episodio/" + id (the dashboard's route). No link when empty.
	BaseURL string
	// Location is the time zone of the times in messages; America/Sao_Paulo when nil.
	Location *time.Location
}

// Link is the dashboard's page of an episode.
func (c Composer) Link(episodeID string) string {
	if c.BaseURL == "" || episodeID == "" {
		return ""
	}
	return strings.TrimRight(c.BaseURL, "/") + "/#/episodio/" + url.PathEscape(episodeID)
}

func (c Composer) loc() *time.Location {
	if c.Location != nil {
		return c.Location
	}
	return saoPaulo
}

// maxListed bounds the alerts a grouped message lists one by one; the rest are counted.
const maxListed = 10

// Compose is the message of the first alert of as, with the others (and more, alerts not kept)
// listed after it as "e mais N alertas".
func (c Composer) Compose(as []Alert, more int) Message {
	if len(as) == 0 {
		return Message{}
	}
	a := as[0]
	others := len(as) - 1 + more
	loc := c.loc()
	start := a.Start.In(loc)
	m := Message{
		Link: c.Link(a.EpisodeID), Tag: a.EpisodeID, Count: 1 + others,
		Lat: a.Lat, Lon: a.Lon, HasPlace: a.Lat != 0 || a.Lon != 0,
	}
	m.Subject = fmt.Sprintf("[Trenzinho] %s — %s às %s", RuleName(a.Rule), a.Vehicle, start.Format("15:04"))
	escalated := ""
	if a.Unacknowledged > 0 {
		escalated = fmt.Sprintf("Sem reconhecimento há %d min: ninguém reconheceu este alerta no painel.", int(a.Unacknowledged.Minutes()))
		m.Subject = fmt.Sprintf("[Trenzinho] Sem reconhecimento há %d min: %s — %s às %s", int(a.Unacknowledged.Minutes()),
			RuleName(a.Rule), a.Vehicle, start.Format("15:04"))
	}
	if others > 0 {
		m.Subject += fmt.Sprintf(" (e mais %d %s)", others, plural(others, "alerta", "alertas"))
	}

	type field struct{ k, v string }
	fields := []field{{"Veículo", a.Vehicle}}
	if v := c.value(a); v != "" {
		fields = append(fields, field{"Medido", v})
	}
	fields = append(fields, field{"Local", c.place(a)})
	fields = append(fields, field{"Início", start.Format("02/01/2006 15:04:05") + " (" + zoneName(loc, start) + ")"})

	var t, h strings.Builder
	fmt.Fprintf(&t, "Alerta: %s\n", RuleName(a.Rule))
	fmt.Fprintf(&h, "<p><strong>Alerta: %s</strong></p>\n", html.EscapeString(RuleName(a.Rule)))
	if escalated != "" {
		fmt.Fprintf(&t, "%s\n", escalated)
		fmt.Fprintf(&h, "<p>%s</p>\n", html.EscapeString(escalated))
	}
	h.WriteString("<table>\n")
	for _, f := range fields {
		fmt.Fprintf(&t, "%s: %s\n", f.k, f.v)
		fmt.Fprintf(&h, "<tr><th align=\"left\">%s</th><td>%s</td></tr>\n", html.EscapeString(f.k), html.EscapeString(f.v))
	}
	h.WriteString("</table>\n")
	if m.Link != "" {
		fmt.Fprintf(&t, "Ver o episódio: %s\n", m.Link)
		fmt.Fprintf(&h, "<p><a href=\"%s\">Ver o episódio no painel</a></p>\n", html.EscapeString(m.Link))
	}
	if others > 0 {
		head := fmt.Sprintf("e mais %d %s", others, plural(others, "alerta", "alertas"))
		fmt.Fprintf(&t, "\n%s:\n", head)
		fmt.Fprintf(&h, "<p>%s:</p>\n<ul>\n", head)
		listed := as[1:]
		if len(listed) > maxListed {
			listed = listed[:maxListed]
		}
		for _, o := range listed {
			line := fmt.Sprintf("%s %s — %s", o.Start.In(loc).Format("15:04:05"), RuleName(o.Rule), o.Vehicle)
			fmt.Fprintf(&t, "- %s", line)
			fmt.Fprintf(&h, "<li>%s", html.EscapeString(line))
			if l := c.Link(o.EpisodeID); l != "" {
				fmt.Fprintf(&t, " %s", l)
				fmt.Fprintf(&h, " (<a href=\"%s\">ver</a>)", html.EscapeString(l))
			}
			t.WriteString("\n")
			h.WriteString("</li>\n")
		}
		if n := others - len(listed); n > 0 {
			fmt.Fprintf(&t, "- … e outros %d no painel\n", n)
			fmt.Fprintf(&h, "<li>… e outros %d no painel</li>\n", n)
		}
		h.WriteString("</ul>\n")
	}
	t.WriteString("\nMensagem automática do monitor do trenzinho. Os dados pessoais ficam no painel.\n")
	h.WriteString("<p><small>Mensagem automática do monitor do trenzinho. Os dados pessoais ficam no painel.</small></p>\n")
	m.Text, m.HTML = t.String(), h.String()
	return m
}

// value: "32,4 km/h (limite 20 km/h)"; empty for rules without a measured value.
func (c Composer) value(a Alert) string {
	if a.Unit == "" {
		return ""
	}
	s := decimal(a.Peak, 1) + " " + a.Unit
	if a.Estimate {
		s += " (estimado)"
	}
	// A rule's threshold that is no limit of the law (rules.RuleInfo.NoLimit) is not shown as one.
	if info, _ := rules.Info(a.Rule); a.Limit != 0 && !info.NoLimit {
		s += " (limite " + decimal(a.Limit, 1) + " " + a.Unit + ")"
	}
	return s
}

// place: "Escola Municipal X, a 85 m · -20,84123, -40,72345" (coordinates as a map reads them).
func (c Composer) place(a Alert) string {
	coords := ""
	if a.Lat != 0 || a.Lon != 0 {
		coords = strconv.FormatFloat(a.Lat, 'f', 5, 64) + ", " + strconv.FormatFloat(a.Lon, 'f', 5, 64)
	}
	switch {
	case a.Place != "" && coords != "":
		p := a.Place
		if a.DistanceM > 0 {
			p += ", a " + decimal(a.DistanceM, 0) + " m"
		}
		return p + " · " + coords
	case a.Place != "":
		return a.Place
	case coords != "":
		return coords
	}
	return "desconhecido"
}

// decimal writes v with a decimal comma.
func decimal(v float64, digits int) string {
	return strings.Replace(strconv.FormatFloat(v, 'f', digits, 64), ".", ",", 1)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// zoneName: "horário de Brasília" for America/Sao_Paulo, else the zone's abbreviation.
func zoneName(loc *time.Location, t time.Time) string {
	if loc.String() == "America/Sao_Paulo" {
		return "horário de Brasília"
	}
	name, _ := t.Zone()
	return name
}
