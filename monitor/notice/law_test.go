package notice_test

import (
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

// hoursDraft is a sealed draft of rule hours (Art. 29) fined under penalty with fine.
func hoursDraft(t *testing.T, p *profile.Profile, penalty string, fine float64) drafts.Sealed {
	t.Helper()
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	now := wire.NewTime(time.Date(2026, 11, 29, 2, 10, 0, 0, time.UTC))
	d := drafts.Draft{ID: "PIU-002.hours.20261129T021000.000Z", Vehicle: "PIU-002", Rules: []string{"hours"}, Articles: []string{"Art. 29"},
		Penalty: penalty, FineUFMP: fine, FiscalUnit: "UFMP", Start: now, End: now, Municipality: "Piúma-ES", FiscalOrgan: p.FiscalOrgan,
		Law: p.Law.Name, CreatedAt: now, Software: "test", ProfileID: "piuma", ProfileVer: p.Version, Unregistered: true,
		Facts: []drafts.Fact{{EpisodeID: "x", Rule: "hours", Article: "Art. 29", LegalText: p.Rules["hours"].Text, Description: "Veículo em serviço fora do horário.",
			Start: now, End: now, DurationS: 600, Peak: 30, Unit: "min", Limit: 20, Source: "clock"}}}
	raw, err := json.Marshal(drafts.Bundle{Format: 1, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	return drafts.Seal(d.ID, 1, raw, "", key)
}

// The renderer refuses an auto whose penalty contradicts its article (Art. 47: 250 UFMPs; Art.
// 45, parágrafo único: 300), in the draft or in the calculus at issue; the base doubled by
// recidivism (Art. 48) is the law's.
func TestRenderRefusesFineContradictingLaw(t *testing.T) {
	p := profile.Piuma()
	at := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	issued := notice.Decision{Status: drafts.StatusIssued, Notice: "AI-2026/0009", DecidedBy: "Maria", DecidedAt: &at}
	for _, c := range []struct {
		name    string
		penalty string
		fine    float64
		pe      *notice.Penalty
		refused bool
	}{
		{"the law's fine", "Art. 47", 250, nil, false},
		{"a draft of 300 under Art. 47", "Art. 47", 300, nil, true},
		{"issued at the law's fine", "Art. 47", 250, &notice.Penalty{Article: "Art. 47", FineUFMP: 250, BaseUFMP: 250}, false},
		{"issued doubled by recidivism", "Art. 47", 250, &notice.Penalty{Article: "Art. 47", FineUFMP: 500, BaseUFMP: 250}, false},
		{"issued tripled", "Art. 47", 250, &notice.Penalty{Article: "Art. 47", FineUFMP: 750, BaseUFMP: 250}, true},
		{"a repeat under Art. 45, I at 300", "Art. 41, I", 0, &notice.Penalty{Article: "Art. 45, I", FineUFMP: 300, BaseUFMP: 300}, false},
		{"a repeat under Art. 45, I at 250", "Art. 41, I", 0, &notice.Penalty{Article: "Art. 45, I", FineUFMP: 250, BaseUFMP: 250}, true},
		{"a notificação preliminar", "Art. 41, I", 0, &notice.Penalty{Article: "Art. 41, I", Warning: true}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			in := notice.Input{Sealed: hoursDraft(t, p, c.penalty, c.fine), Profile: p}
			if c.pe != nil {
				in.Decision, in.Penalty = issued, c.pe
			}
			err := notice.Render(io.Discard, in)
			if got := errors.Is(err, notice.ErrFineContradictsLaw); got != c.refused {
				t.Errorf("refused %v (%v), want %v", got, err, c.refused)
			}
		})
	}
}

// A repeat is printed as itself: its article and its fine, not the draft's base penalty
// beside it.
func TestRepeatPenaltyPrintsAsItself(t *testing.T) {
	p := profile.Piuma()
	at := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	issued := notice.Decision{Status: drafts.StatusIssued, Notice: "AI-2026/0010", DecidedBy: "Maria", DecidedAt: &at}
	text := render(t, notice.Input{Sealed: hoursDraft(t, p, "Art. 41, I", 0), Profile: p, Decision: issued,
		Penalty: &notice.Penalty{Article: "Art. 45, I", FineUFMP: 300, BaseUFMP: 300, FineBRL: "1260.00", UnitValueBRL: "4.2000", UnitDate: at}}, "notice-repeat-45")
	mustContain(t, text, "Penalidade: Art. 45, I", "multa-base de 300 UFMP (Art. 45, I)", "por repetição de infração já notificada", "Multa (Art. 45, I)")
	mustNotContain(t, text, "Penalidade: Art. 41, I", "multa-base de 0 UFMP")
}

// The issued auto tells the licensee how to obtain and verify the sealed bundle by routes the
// licensee can use — the portal, the public page /v/{code}, the protocol on paper — and names no
// route of the control room.
func TestAutoTellsLicenseeHowToReachTheEvidence(t *testing.T) {
	p := profile.Piuma()
	at := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	issued := notice.Decision{Status: drafts.StatusIssued, Notice: "AI-2026/0011", DecidedBy: "Maria", DecidedAt: &at}
	text := render(t, notice.Input{Sealed: hoursDraft(t, p, "Art. 47", 250), Profile: p, Decision: issued,
		Public:  &notice.Public{Path: "/v/abcdefghijklmnopqrstuvwx"},
		Penalty: &notice.Penalty{Article: "Art. 47", FineUFMP: 250, BaseUFMP: 250, FineBRL: "1050.00", UnitValueBRL: "4.2000", UnitDate: at}}, "notice-evidence-routes")
	flat := strings.Join(strings.Fields(text), " ")
	mustContain(t, flat, "portal do permissionário", "Baixar o pacote de evidências", "protocolo do órgão autuante",
		"página pública de verificação deste auto (/v/abcdefghijklmnopqrstuvwx")
	mustNotContain(t, flat, "/api/v1/drafts/", "/export")
}

// The auto prints the acts of competence it rests on, with the provisions that leave them to
// the Executive quoted verbatim.
func TestAutoPrintsCompetence(t *testing.T) {
	p := testenv.ConfirmedProfile(profile.Piuma())
	at := time.Date(2026, 11, 30, 14, 0, 0, 0, time.UTC)
	issued := notice.Decision{Status: drafts.StatusIssued, Notice: "AI-2026/0012", DecidedBy: "Maria", DecidedAt: &at}
	text := strings.Join(strings.Fields(render(t, notice.Input{Sealed: hoursDraft(t, p, "Art. 47", 250), Profile: p, Decision: issued,
		Penalty: &notice.Penalty{Article: "Art. 47", FineUFMP: 250, BaseUFMP: 250}}, "notice-competence")), " ")
	mustContain(t, text, "designação do órgão fiscalizador e dos seus agentes: Decreto nº 100/2026 (teste)",
		"adoção da telemetria embarcada como meio de prova: Decreto nº 102/2026 (teste)",
		"Art. 34: “A fiscalização será exercida pelo órgão municipal definido pelo Poder Executivo, através de agentes próprios.”",
		"Art. 1, § 2º: “O Poder Executivo definirá o órgão responsável pela fiscalização")
}
