package api_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// The agent's NBR 10151 measurement must prove the excess: the limit is the NBR table's for the
// episode's area and the period at the measurement's time (no typed limit counts), the level is
// corrected for the residual sound, and the measurement lies within the episode's window. A
// measurement above the limit only before the correction, or of another time, is refused with a
// 409 and why; one above it after the correction, with the agent's confirmation of music (Art.
// 45, VII), grounds the draft, which cites it.
func TestNBRMeasurementMustProveTheExcess(t *testing.T) {
	p := profile.Piuma()
	f := newFixture(t, func(c *api.Config) { c.Map.Profile = p })
	ctx := context.Background()
	if _, err := f.db.CreateUser(ctx, "joao", "senha-do-joao", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	_, fiscal := f.login("joao", "senha-do-joao")
	ep := testEpisode("PIU-001", rules.RuleNoiseLimit, t0, false) // 12:00 in Piúma: day period
	ep.Unit, ep.Article, ep.Penalty, ep.Peak, ep.Limit, ep.Tolerance = "dB(A)", "Art. 27", "Art. 45, VII", 61.2, 55, 2
	area := "mixed_residential" // NBR 10151: 55 dB(A) by day, 50 by night
	ep.Area, ep.Estimate, ep.Needs = &area, true, rules.VerifyNBR10151
	if err := f.db.UpsertEpisode(ctx, ep, testEvidence(2)); err != nil {
		t.Fatal(err)
	}
	measure := func(laeq, residual, typedLimit float64, at time.Time, music ...bool) (int, string) {
		t.Helper()
		form := map[string]any{"kind": rules.VerifyNBR10151, "measurement": map[string]any{
			"meter": "Brüel & Kjær 2250 nº 3012345", "class": 1, "calibration": "RBC 1234/2026, 10/03/2026",
			"position": "calçada da Rua X, 1,2 m de altura, 2 m da fachada", "laeq_db": laeq, "residual_db": residual,
			"limit_db": typedLimit, "date": at.Format(time.RFC3339)}}
		if len(music) > 0 {
			form["music_audible"] = music[0]
		}
		code, b, _ := f.do("POST", "/api/v1/episodes/"+ep.ID+"/verification", form, session{bearer: fiscal})
		return code, string(b)
	}
	// 58 dB(A) over a residual of 55: the specific sound is 55.0 dB(A), not above the limit —
	// whatever limit the agent would have typed.
	if code, b := measure(58, 55, 40, t0.Add(time.Minute)); code != http.StatusConflict ||
		!strings.Contains(b, "nível corrigido pelo som residual de 55,0 dB(A) não excede o limite de 55 dB(A)") {
		t.Fatalf("below the limit after the residual correction: %d %s", code, b)
	}
	// Above the limit, but measured two hours after the episode: another fact.
	if code, b := measure(68.4, 51.2, 0, t0.Add(2*time.Hour)); code != http.StatusConflict || !strings.Contains(b, "fora do período do episódio") {
		t.Fatalf("outside the window: %d %s", code, b)
	}
	if p, _ := f.db.UndraftedEpisodes(ctx, []drafts.Kind{{Rule: rules.RuleNoiseLimit}}); len(p) != 1 || p[0].Episode.Verification != nil {
		t.Fatalf("a refused measurement was recorded: %+v", p)
	}
	// 68.4 over 51.2 (more than 10 dB apart: no correction), within the window: recorded with
	// the computed limit. Art. 45, VII fines "executar músicas": without the agent's
	// confirmation of music no draft is made; with it, the draft cites the measurement.
	if code, b := measure(68.4, 51.2, 90, t0.Add(time.Minute)); code != http.StatusOK || !strings.Contains(b, `"limit_db":55`) {
		t.Fatalf("above the limit: %d %s", code, b)
	}
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	d := drafts.NewDrafter(drafts.Config{Store: f.db, Profile: p, ProfileYAML: profile.PiumaYAML(), Key: key, Software: "test"})
	if made, err := d.Run(ctx, time.Now().Add(48*time.Hour)); err != nil || len(made) != 0 {
		t.Fatalf("an Art. 45, VII draft without the music confirmation: %d %v", len(made), err)
	}
	if code, b := measure(68.4, 51.2, 0, t0.Add(time.Minute), true); code != http.StatusOK {
		t.Fatalf("above the limit, music confirmed: %d %s", code, b)
	}
	made, err := d.Run(ctx, time.Now().Add(48*time.Hour))
	if err != nil || len(made) != 1 {
		t.Fatalf("drafts %d: %v", len(made), err)
	}
	fact := made[0].Draft.Facts[0]
	for _, want := range []string{"Medição conforme a ABNT NBR 10151", "L_Aeq de 68,4 dB(A)", "nível de som residual de 51,2 dB(A)",
		"limite de 55 dB(A) da norma para a área e o período", "Brüel & Kjær 2250 nº 3012345",
		"música executada pelo sistema de som, audível, confirmada pelo agente"} {
		if !strings.Contains(fact.Description, want) {
			t.Errorf("the draft's fact lacks %q: %s", want, fact.Description)
		}
	}
}
