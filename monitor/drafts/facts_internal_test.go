package drafts

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Every rule of rules.Table has its own description in Portuguese (not the generic fallback).
func TestEveryRuleIsDescribed(t *testing.T) {
	p := profile.Piuma()
	start := wire.NewTime(time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC))
	for _, info := range rules.Table {
		ep := rules.Episode{ID: "x", Vehicle: "PIU-001", Rule: info.ID, Start: start, Peak: 1, Unit: "min"}
		got := describe(p, &ep)
		if strings.HasPrefix(got, info.ID+":") {
			t.Errorf("rule %s has no description of its own: %s", info.ID, got)
		}
	}
}

// The warnings about a place's data: a boarding point or a public road grounds an auto whatever
// its source, so a draft relying on one of sample data or unverified says so; a sensitive site
// that is sample data or unverified never grounds an auto (rules.TestSensitiveSiteGrounds), so
// the warnings have no wording for one and a verified one gives none.
func TestPlaceWarnings(t *testing.T) {
	p := profile.Piuma()
	start := wire.NewTime(time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC))
	ep := func(rule string, s *rules.Site) rules.Episode {
		return rules.Episode{ID: "x", Vehicle: "PIU-001", Rule: rule, Start: start, Site: s}
	}
	for _, c := range []struct {
		ep   rules.Episode
		want string
	}{
		{ep(rules.RuleBoardingSound, &rules.Site{ID: "stop-1", Kind: "boarding_point", Name: "Praça", Source: "sample"}), `ponto de embarque "Praça") vem de dados de exemplo`},
		{ep(rules.RuleBoardingOutsidePoints, &rules.Site{ID: "stop-1", Kind: "boarding_point", Source: "osm"}), `ponto de embarque "stop-1", fonte: osm) não verificado`},
		{ep(rules.RuleParkedPublicRoad, &rules.Site{ID: "road-1", Kind: "public_road", Name: "Av. Beira-Mar", Source: "osm"}), `via pública "Av. Beira-Mar", fonte: osm`},
		{ep(rules.RuleBoardingSound, &rules.Site{ID: "stop-1", Kind: "boarding_point", Source: "survey", Verified: true}), ""},
		{ep(rules.RuleSensitiveZoneSound, &rules.Site{ID: "school", Kind: "sensitive", Category: "school", Source: "survey", Verified: true, HoursKnown: true}), ""},
	} {
		w := warnings(p, []rules.Episode{c.ep})
		got := strings.Join(w, "\n")
		if c.want == "" && len(w) != 0 || c.want != "" && (len(w) != 1 || !strings.Contains(got, c.want)) {
			t.Errorf("%s at %+v: warnings %q, want %q", c.ep.Rule, c.ep.Site, got, c.want)
		}
	}
}

// The facts of the door rules state what was observed: the open door, the stop, where; and the
// law's own exception for boarding outside the points.
func TestDoorFacts(t *testing.T) {
	p := profile.Piuma()
	start := wire.NewTime(time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC))
	end := wire.NewTime(start.Add(40 * time.Second))
	outside := rules.Episode{ID: "x", Vehicle: "PIU-001", Rule: rules.RuleBoardingOutsidePoints, Start: start, End: &end,
		Peak: 40, Unit: "s", Source: "door", Detail: `a pelo menos 933 m do ponto de embarque demarcado mais próximo ("Praça Central")`}
	got := describe(p, &outside)
	for _, want := range []string{"porta de passageiros aberta", "por até 40 s fora dos pontos de embarque demarcados", "Praça Central",
		"Salvo para proteção da integridade física da pessoa usuária do transporte."} {
		if !strings.Contains(got, want) {
			t.Errorf("boarding_outside_points: %q lacks %q", got, want)
		}
	}
	board := rules.Episode{ID: "y", Vehicle: "PIU-001", Rule: rules.RuleBoardingSound, Start: start, End: &end,
		Peak: 80, Unit: "dB(A)", Source: "slm", StoppedS: 94, Detail: rules.BoardingDoorOpen}
	if got := describe(p, &board); !strings.Contains(got, "parado por 94 s com a porta de passageiros aberta") || strings.Contains(got, "ponto de embarque") {
		t.Errorf("boarding_sound by the door: %q", got)
	}
	board.Site = &rules.Site{ID: "stop-1", Kind: "boarding_point", Name: "Praça"}
	if got := describe(p, &board); !strings.Contains(got, `por 94 s no ponto de embarque "Praça", com a porta de passageiros aberta`) {
		t.Errorf("boarding_sound at a point with the door open: %q", got)
	}
}
