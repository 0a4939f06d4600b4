package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

func speedEpisode(id string, at time.Time) *rules.Episode {
	area := "Orla"
	return &rules.Episode{
		ID: id, Vehicle: "TR-01", Rule: "speed", Start: wire.NewTime(at), Peak: 32.44, Unit: "km/h",
		Limit: 20, Lat: -20.84123, Lon: -40.72345, Area: &area,
		Site: &rules.Site{ID: "s1", Name: "Escola Municipal Beira-Mar", DistanceM: 85},
	}
}

func TestComposeSpeeding(t *testing.T) {
	// 17:32 UTC is 14:32 in Piúma (UTC−3, no daylight saving since 2019).
	at := time.Date(2026, 12, 1, 17, 32, 5, 0, time.UTC)
	e := speedEpisode("TR-01/speed/1764610325000", at)
	// A document_expired episode of a driver carries the document; it must never reach a message.
	e.Document = &registry.Expiry{Number: "CNH-0123456789", Detail: "José da Silva, CPF 123.456.789-00"}
	a := FromEpisode(e, "L1", 0)
	if a.Severity != High {
		t.Errorf("severity %v, want high", a.Severity)
	}
	c := Composer{BaseURL: "https://monitor.example/"}
	m := c.Compose([]Alert{a}, 0)

	if want := "[Trenzinho] Excesso de velocidade — TR-01 às 14:32"; m.Subject != want {
		t.Errorf("subject %q, want %q", m.Subject, want)
	}
	link := "https://monitor.example/#/episodio/TR-01%2Fspeed%2F1764610325000"
	if m.Link != link {
		t.Errorf("link %q, want %q", m.Link, link)
	}
	for _, want := range []string{
		"Alerta: Excesso de velocidade\n",
		"Veículo: TR-01\n",
		"Medido: 32,4 km/h (limite 20,0 km/h)\n",
		"Local: Escola Municipal Beira-Mar, a 85 m · -20.84123, -40.72345\n",
		"Início: 01/12/2026 14:32:05 (horário de Brasília)\n",
		"Ver o episódio: " + link + "\n",
	} {
		if !strings.Contains(m.Text, want) {
			t.Errorf("text lacks %q:\n%s", want, m.Text)
		}
	}
	for _, want := range []string{"<th align=\"left\">Veículo</th><td>TR-01</td>", `<a href="` + link + `">`} {
		if !strings.Contains(m.HTML, want) {
			t.Errorf("HTML lacks %q:\n%s", want, m.HTML)
		}
	}
	for _, body := range []string{m.Subject, m.Text, m.HTML} {
		for _, personal := range []string{"CNH", "José", "CPF 123", "L1"} {
			if strings.Contains(body, personal) {
				t.Errorf("message carries personal or registry data %q:\n%s", personal, body)
			}
		}
	}
	if !m.HasPlace || m.Lat != e.Lat || m.Count != 1 || m.Tag != e.ID {
		t.Errorf("message %+v", m)
	}
}

func TestComposeGroupedAndEscaped(t *testing.T) {
	at := time.Date(2026, 12, 1, 23, 0, 0, 0, time.UTC)
	var as []Alert
	for i := range 15 {
		a := FromEpisode(speedEpisode(fmt.Sprintf("e%d", i), at.Add(time.Duration(i)*time.Second)), "", 0)
		a.Vehicle = "<b>TR</b>"
		as = append(as, a)
	}
	m := Composer{}.Compose(as, 5)
	if m.Count != 20 || !strings.HasSuffix(m.Subject, "(e mais 19 alertas)") {
		t.Errorf("count %d subject %q", m.Count, m.Subject)
	}
	if !strings.Contains(m.Text, "e mais 19 alertas:\n") || !strings.Contains(m.Text, "- … e outros 9 no painel") {
		t.Errorf("text:\n%s", m.Text)
	}
	if strings.Contains(m.HTML, "<b>TR</b>") || !strings.Contains(m.HTML, "&lt;b&gt;TR&lt;/b&gt;") {
		t.Errorf("HTML not escaped:\n%s", m.HTML)
	}
	if m.Link != "" || strings.Contains(m.Text, "Ver o episódio") {
		t.Errorf("a link without a base URL: %q", m.Link)
	}
}

func TestClassify(t *testing.T) {
	base := errors.New("boom")
	for _, c := range []struct {
		err       error
		transient bool
		after     time.Duration
	}{
		{Transient(base, 3*time.Second), true, 3 * time.Second},
		{fmt.Errorf("send: %w", Permanent(base)), false, 0},
		{base, true, 0},
		{fmt.Errorf("dial: %w", context.Canceled), false, 0},
	} {
		tr, after := Classify(c.err)
		if tr != c.transient || after != c.after {
			t.Errorf("Classify(%v) = %v, %v; want %v, %v", c.err, tr, after, c.transient, c.after)
		}
	}
	if !errors.Is(Permanent(base), base) {
		t.Error("Permanent does not wrap")
	}
}

// Every rule the engine applies is named in a notification as the dashboard and the notices
// name it: no raw id reaches an inspector's e-mail.
func TestRuleNamesFromTheRulesTable(t *testing.T) {
	for _, r := range rules.Table {
		if got := RuleName(r.ID); got != r.Name || got == r.ID {
			t.Errorf("RuleName(%q) = %q, want the table's %q", r.ID, got, r.Name)
		}
	}
	if got := RuleName(rules.RuleDriverUnregistered); got == rules.RuleDriverUnregistered {
		t.Errorf("driver_unregistered is named by its id")
	}
	if got := RuleName("no_such_rule"); got != "no_such_rule" {
		t.Errorf("an unknown rule is named %q, want its code", got)
	}
}

// A telemetry_fault episode's limit is the speed from which the tachograph must report, no
// limit the driver exceeded (rules.Table's NoLimit): the message gives the GPS speed without it.
func TestComposeTelemetryFaultNamesNoLimit(t *testing.T) {
	e := &rules.Episode{ID: "TR-01/telemetry_fault/1", Vehicle: "TR-01", Rule: rules.RuleTelemetryFault, Detail: "silent",
		Start: wire.NewTime(time.Date(2026, 12, 1, 17, 32, 5, 0, time.UTC)), Peak: 22, Unit: "km/h", Limit: 10}
	m := Composer{BaseURL: "https://monitor.example/"}.Compose([]Alert{FromEpisode(e, "L1", 0)}, 0)
	if !strings.Contains(m.Text, "Medido: 22,0 km/h\n") || strings.Contains(m.Text, "limite") {
		t.Errorf("text:\n%s", m.Text)
	}
}
