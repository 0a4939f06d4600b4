package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// An episode whose only missing ground is the agent's NBR 10151 measurement: a fiscal records
// it on the episode (a viewer may not), the audit log keeps it, the engine's later update of the
// episode keeps it, and the store then offers the episode to the drafter.
func TestVerificationMakesEpisodeDraftable(t *testing.T) {
	f := newFixture(t, func(c *api.Config) { c.Map.Profile = profile.Piuma() })
	ctx := context.Background()
	if _, err := f.db.CreateUser(ctx, "joao", "senha-do-joao", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	ep := testEpisode("PIU-001", rules.RuleNoiseLimit, t0, false)
	ep.Unit, ep.Article, ep.Penalty = "dB(A)", "Art. 27", "Art. 45, VII"
	area := "mixed_residential"
	ep.Area = &area
	ep.Needs, ep.GroundsNote = rules.VerifyNBR10151, "estimativa no receptor, não medição conforme a NBR 10151"
	if err := f.db.UpsertEpisode(ctx, ep, testEvidence(2)); err != nil {
		t.Fatal(err)
	}
	kinds := []drafts.Kind{{Rule: rules.RuleNoiseLimit}}
	if p, err := f.db.UndraftedEpisodes(ctx, kinds); err != nil || len(p) != 1 || p[0].Episode.Draftable() {
		t.Fatalf("before the verification: %+v %v", p, err)
	}

	// grounds_auto is always in the JSON, false included.
	_, viewer := f.login("maria", viewerPassword)
	code, b, _ := f.do("GET", "/api/v1/episodes/"+ep.ID, nil, session{bearer: viewer})
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); code != 200 || err != nil {
		t.Fatalf("episode: %d %s", code, b)
	}
	if g, ok := raw["grounds_auto"]; !ok || g != false || raw["grounds_note"] == "" {
		t.Fatalf("grounds_auto %v (present %v), note %v", g, ok, raw["grounds_note"])
	}

	form := map[string]any{"kind": rules.VerifyNBR10151, "music_audible": true, "measurement": map[string]any{
		"meter": "Brüel & Kjær 2250 nº 3012345", "class": 1, "calibration": "RBC 1234/2026, 10/03/2026",
		"position": "calçada da Rua X, 1,2 m de altura, 2 m da fachada", "laeq_db": 68.4, "residual_db": 51.2,
		"date": t0.Add(10 * time.Second).Format(time.RFC3339),
	}}
	if code, b, _ := f.do("POST", "/api/v1/episodes/"+ep.ID+"/verification", form, session{bearer: viewer}); code != http.StatusForbidden {
		t.Fatalf("a viewer records a verification: %d %s", code, b)
	}
	_, fiscal := f.login("joao", "senha-do-joao")
	bad := map[string]any{"kind": rules.VerifyNBR10151, "measurement": map[string]any{"meter": "x", "class": 3}}
	if code, b, _ := f.do("POST", "/api/v1/episodes/"+ep.ID+"/verification", bad, session{bearer: fiscal}); code != http.StatusBadRequest {
		t.Fatalf("an incomplete form: %d %s", code, b)
	}
	music := map[string]any{"kind": rules.VerifyMusic, "note": "ouvi música alta no sistema de som"}
	speed := testEpisode("PIU-001", rules.RuleSpeed, t0.Add(time.Hour), false)
	if err := f.db.UpsertEpisode(ctx, speed, nil); err != nil {
		t.Fatal(err)
	}
	if code, b, _ := f.do("POST", "/api/v1/episodes/"+speed.ID+"/verification", music, session{bearer: fiscal}); code != http.StatusConflict {
		t.Fatalf("music confirmed on a speed episode: %d %s", code, b)
	}
	code, b, _ = f.do("POST", "/api/v1/episodes/"+ep.ID+"/verification", form, session{bearer: fiscal})
	if code != http.StatusOK {
		t.Fatalf("verification: %d %s", code, b)
	}
	var got rules.Episode
	if err := json.Unmarshal(b, &got); err != nil || got.Verification == nil || got.Verification.By != "joao" ||
		got.Verification.Measurement.LAeqDB != 68.4 || got.Verification.Measurement.LimitDB != 55 || !got.Draftable() {
		t.Fatalf("answer %+v %v", got.Verification, err)
	}

	// The engine updates the episode again (data resumed): the verification stays.
	ep.Evidence = 3
	if err := f.db.UpsertEpisode(ctx, ep, nil); err != nil {
		t.Fatal(err)
	}
	p, err := f.db.UndraftedEpisodes(ctx, kinds)
	if err != nil || len(p) != 1 || p[0].Episode.Verification == nil || p[0].Episode.Verification.Measurement.ResidualDB != 51.2 {
		t.Fatalf("after the verification: %+v %v", p, err)
	}
	audit, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: "episode.verify"}, 0, "")
	if err != nil || len(audit) != 1 || audit[0].User != "joao" || audit[0].Object != "episode:"+ep.ID {
		t.Fatalf("audit %+v %v", audit, err)
	}
}
