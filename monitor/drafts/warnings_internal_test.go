package drafts

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// TestWarningFacts: a fact states the warnings of its rule and site timed by an evidence clock
// from WarningWindow before its start to its end, worded as the licensee's device's record; it
// states no other.
func TestWarningFacts(t *testing.T) {
	p := profile.Piuma()
	start := time.Date(2026, 11, 27, 18, 5, 0, 0, time.UTC) // 15:05 in Piúma
	end := wire.NewTime(start.Add(time.Minute))
	ep := rules.Episode{ID: "e", Vehicle: "PIU-001", Rule: rules.RuleSensitiveZoneSound, Start: wire.NewTime(start), End: &end,
		Peak: 80, Unit: "dB(A)", Site: &rules.Site{ID: "hospital-1", Name: "Hospital X", Category: "hospital", DistanceM: 40}}
	f := func(v float64) *float64 { return &v }
	w := func(at time.Duration, kind wire.WarningKind, rule, site string, clock wire.Clock) Warning {
		return Warning{Warning: wire.Warning{T: wire.NewTime(start.Add(at)), Kind: kind, Rule: rule, Site: site,
			DistanceM: f(290), Value: f(78.5), Limit: f(65)}, Clock: clock}
	}
	ws := []Warning{
		w(-170*time.Second, wire.WarningSiteSound, rules.RuleSensitiveZoneSound, "hospital-1", wire.ClockGPS), // stated
		w(-11*time.Minute, wire.WarningSiteSound, rules.RuleSensitiveZoneSound, "hospital-1", wire.ClockGPS),  // too early
		w(-time.Minute, wire.WarningSiteSound, rules.RuleSensitiveZoneSound, "school-2", wire.ClockGPS),       // another site
		w(-time.Minute, wire.WarningSpeedNear, rules.RuleSpeed, "", wire.ClockGPS),                            // another rule
		w(-time.Minute, wire.WarningSiteSound, rules.RuleSensitiveZoneSound, "hospital-1", wire.ClockSystem),  // not evidence
		w(2*time.Minute, wire.WarningSiteSound, rules.RuleSensitiveZoneSound, "hospital-1", wire.ClockGPS),    // after the end
		w(30*time.Second, wire.WarningSiteSound, rules.RuleSensitiveZoneSound, "", wire.ClockRTC),             // stated, during
	}
	got := fact(p, &ep, nil, ws)
	if len(got.Warnings) != 2 || got.Warnings[0] != ws[0] || got.Warnings[1] != ws[6] {
		t.Fatalf("stated warnings %+v", got.Warnings)
	}
	for _, want := range []string{
		"Segundo registro do próprio sistema embarcado do veículo (equipamento do licenciado), transmitido com a telemetria, " +
			`o condutor foi alertado pelo sistema embarcado às 15:02:10, a 290 m de hospital "Hospital X", com nível sonoro de 78,5 dB(A) para o limiar de 65 dB(A), antes do início do fato.`,
		"o condutor foi alertado pelo sistema embarcado às 15:05:30, a 290 m do local, com nível sonoro de 78,5 dB(A) para o limiar de 65 dB(A), durante o fato.",
	} {
		if !strings.Contains(got.Description, want) {
			t.Errorf("the description lacks %q:\n%s", want, got.Description)
		}
	}
	if n := strings.Count(got.Description, "alertado"); n != 2 {
		t.Errorf("%d warnings in the description:\n%s", n, got.Description)
	}
	// An open episode: every later warning of its rule is stated; a fact without warnings says none.
	open := ep
	open.End = nil
	if !Stated(&ws[5], &open) {
		t.Error("a warning during an open episode is not stated")
	}
	if plain := fact(p, &ep, nil, nil); len(plain.Warnings) != 0 || strings.Contains(plain.Description, "alertado") {
		t.Errorf("fact without warnings: %+v", plain)
	}
}

// TestWarningTextKinds: the values of each kind are named in their unit; a warning of another day
// gives its date.
func TestWarningTextKinds(t *testing.T) {
	p := profile.Piuma()
	start := time.Date(2026, 11, 27, 3, 0, 0, 0, time.UTC) // 00:00 in Piúma
	ep := rules.Episode{Rule: rules.RuleSpeed, Start: wire.NewTime(start)}
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		w    wire.Warning
		want string
	}{
		{wire.Warning{T: wire.NewTime(start.Add(-time.Minute)), Kind: wire.WarningSpeedOver, Rule: rules.RuleSpeed, Value: f(31.5), Limit: f(30)},
			"às 23:59:00 de 26/11/2026, a 31,5 km/h para o limite de 30 km/h, antes do início do fato."},
		{wire.Warning{T: wire.NewTime(start.Add(-5 * time.Minute)), Kind: wire.WarningHoursEnd, Rule: "hours", Value: f(5)},
			"a 5 min do fim do horário permitido"},
		{wire.Warning{T: wire.NewTime(start), Kind: wire.WarningDocument, Rule: "document_expired", Value: f(3)},
			"às 00:00:00, a 3 dia(s) do vencimento do documento, no início do fato."},
	} {
		if got := warningText(p, &Warning{Warning: c.w, Clock: wire.ClockGPS}, &ep); !strings.Contains(got, c.want) {
			t.Errorf("%s: %s, want %q", c.w.Kind, got, c.want)
		}
	}
}

// TestWarningTextAtTheStart: a warning is "antes do início do fato" only in a second before the
// one the fact began in (the times are stated to the second); in that very second it is "no
// início do fato", whatever its fraction; after it, "durante o fato".
func TestWarningTextAtTheStart(t *testing.T) {
	p := profile.Piuma()
	start := time.Date(2026, 11, 27, 18, 5, 0, 300_000_000, time.UTC) // 15:05:00.3 in Piúma
	ep := rules.Episode{Rule: rules.RuleSpeed, Start: wire.NewTime(start)}
	f := func(v float64) *float64 { return &v }
	for _, c := range []struct {
		at   time.Duration
		want string
	}{
		{-1 * time.Second, "às 15:04:59, a 31,5 km/h para o limite de 30 km/h, antes do início do fato."},
		{-300 * time.Millisecond, "às 15:05:00, a 31,5 km/h para o limite de 30 km/h, no início do fato."},
		{0, "às 15:05:00, a 31,5 km/h para o limite de 30 km/h, no início do fato."},
		{600 * time.Millisecond, "às 15:05:00, a 31,5 km/h para o limite de 30 km/h, no início do fato."},
		{700 * time.Millisecond, "às 15:05:01, a 31,5 km/h para o limite de 30 km/h, durante o fato."},
		{time.Minute, "às 15:06:00, a 31,5 km/h para o limite de 30 km/h, durante o fato."},
	} {
		w := &Warning{Warning: wire.Warning{T: wire.NewTime(start.Add(c.at)), Kind: wire.WarningSpeedOver, Rule: rules.RuleSpeed,
			Value: f(31.5), Limit: f(30)}, Clock: wire.ClockGPS}
		if got := warningText(p, w, &ep); !strings.HasSuffix(got, c.want) {
			t.Errorf("warning at start%+v: %s\nwant the end %q", c.at, got, c.want)
		}
	}
}
