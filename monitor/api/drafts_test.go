package api_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/wire"
)

var _ api.Drafts = (*store.DB)(nil)

// sealDraft stores a draft sealed by key at the head of the chain.
func sealDraft(t *testing.T, db *store.DB, key ed25519.PrivateKey, id string, fine float64) {
	t.Helper()
	ctx := context.Background()
	now := wire.NewTime(time.Now())
	d := drafts.Draft{ID: id, EpisodeIDs: []string{id + ".ep"}, Vehicle: "PIU-001", Rules: []string{"speed"},
		Articles: []string{"Art. 23"}, Penalty: "Art. 46, X", FineUFMP: fine, Start: now, End: now, CreatedAt: now,
		Licensee: "L1", Registry: &drafts.Registered{Licensee: "L1", RazaoSocial: "Trenzinho Alegria da Orla Ltda",
			CNPJ: "11222333000181", Address: "Avenida Beira-Mar, 1000, Centro, Piúma-ES", Plate: "ABC1D23"}}
	b, err := json.Marshal(drafts.Bundle{Format: drafts.BundleFormat, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	seq, prev, err := db.ChainHead(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := db.InsertDraft(ctx, drafts.Seal(id, seq+1, b, prev, key), &d); err != nil {
		t.Fatal(err)
	}
}

// confirmedPiuma is the Piúma profile with its UFMP value confirmed, as issuing requires.
func confirmedPiuma() *profile.Profile {
	return testenv.ConfirmedProfile(profile.Piuma())
}

// Without the legal profile no auto is issued: the penalty calculus is part of every auto.
func TestIssueNeedsTheProfile(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	f := newFixture(t, func(c *api.Config) {
		c.Drafts = c.Episodes.(*store.DB)
		c.DraftKey = key.Public().(ed25519.PublicKey)
	})
	if _, err := f.db.CreateUser(context.Background(), "joao", "senha-do-joao", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	setAgent(t, f.db, "joao", "João Batista Moreira", "FP-0042", "Agente de Fiscalização de Posturas")
	sealDraft(t, f.db, key, "D1", 400)
	_, fiscal := f.login("joao", "senha-do-joao")
	code, body, _ := f.do("POST", "/api/v1/drafts/D1/decision", map[string]string{"decision": "issue"}, session{bearer: fiscal})
	if code != http.StatusConflict || !strings.Contains(errorMessage(t, body), "cálculo da penalidade") {
		t.Errorf("issued without the profile: %d %s", code, body)
	}
	if d, err := f.db.DraftByID(context.Background(), "D1"); err != nil || d.Status != "draft" || d.Notice != "" {
		t.Errorf("the refused draft: %+v %v", d, err)
	}
}

func TestDraftsIssueAndTamper(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	var dbPath string
	f := newFixture(t, func(c *api.Config) {
		c.Drafts = c.Episodes.(*store.DB)
		c.DraftKey = key.Public().(ed25519.PublicKey)
		dbPath = c.Drafts.(*store.DB).Path()
		c.Cases = &api.CasesConfig{Store: c.Episodes.(*store.DB), Profile: confirmedPiuma()}
	})
	if _, err := f.db.CreateUser(context.Background(), "joao", "senha-do-joao", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	setAgent(t, f.db, "joao", "João Batista Moreira", "FP-0042", "Agente de Fiscalização de Posturas")
	sealDraft(t, f.db, key, "D1", 400)
	sealDraft(t, f.db, key, "D2", 400)
	sealDraft(t, f.db, key, "D3", 400)
	_, viewer := f.login("maria", viewerPassword)
	_, fiscal := f.login("joao", "senha-do-joao")

	var list struct{ Items []view.DraftSummary }
	code, body, _ := f.do("GET", "/api/v1/drafts?status=draft", nil, session{bearer: viewer})
	if code != http.StatusOK || json.Unmarshal(body, &list) != nil || len(list.Items) != 3 {
		t.Fatalf("list: %d %s", code, body)
	}
	for _, it := range list.Items {
		if it.Integrity != "ok" {
			t.Fatalf("%s integrity %q", it.ID, it.Integrity)
		}
	}
	// A viewer may not decide; a fiscal may, and dismissing needs a reason.
	if code, _, _ := f.do("POST", "/api/v1/drafts/D1/decision", map[string]string{"decision": "issue"}, session{bearer: viewer}); code != http.StatusForbidden {
		t.Errorf("viewer decided: %d", code)
	}
	if code, _, _ := f.do("POST", "/api/v1/drafts/D1/decision", map[string]string{"decision": "dismiss"}, session{bearer: fiscal}); code != http.StatusBadRequest {
		t.Errorf("dismiss without a reason: %d", code)
	}
	code, body, _ = f.do("POST", "/api/v1/drafts/D1/decision", map[string]string{"decision": "issue"}, session{bearer: fiscal})
	var issued view.DraftSummary
	if code != http.StatusOK || json.Unmarshal(body, &issued) != nil || issued.Status != drafts.StatusIssued || issued.Notice != "AI-"+time.Now().Format("2006")+"/0001" {
		t.Fatalf("issue: %d %s", code, body)
	}
	if code, _, _ := f.do("POST", "/api/v1/drafts/D1/decision", map[string]string{"decision": "issue"}, session{bearer: fiscal}); code != http.StatusConflict {
		t.Errorf("issued twice: %d", code)
	}
	entries, _, err := f.db.ListAudit(context.Background(), store.AuditFilter{Action: "draft.issue"}, 10, "")
	if err != nil || len(entries) != 1 || entries[0].User != "joao" || entries[0].Object != "draft:D1" {
		t.Fatalf("audit: %+v %v", entries, err)
	}

	// Someone edits the database behind the monitor's back.
	raw, err := sql.Open("sqlite", dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	if _, err := raw.Exec(`UPDATE drafts SET doc = replace(doc, '"fine_ufmp":400', '"fine_ufmp":40') WHERE id = 'D2'`); err != nil {
		t.Fatal(err)
	}
	if _, err := raw.Exec(`UPDATE drafts SET bundle = CAST(replace(CAST(bundle AS TEXT), '"fine_ufmp":400', '"fine_ufmp":40') AS BLOB) WHERE id = 'D3'`); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"D2", "D3"} {
		var v api.DraftView
		code, body, _ = f.do("GET", "/api/v1/drafts/"+id, nil, session{bearer: fiscal})
		if code != http.StatusOK || json.Unmarshal(body, &v) != nil || v.Integrity == "ok" {
			t.Errorf("%s edited in the database, integrity %q (%d)", id, v.Integrity, code)
		}
		code, body, _ = f.do("POST", "/api/v1/drafts/"+id+"/decision", map[string]string{"decision": "issue"}, session{bearer: fiscal})
		// The edit also makes the fine contradict the law: the refusal says both.
		if code != http.StatusConflict || !strings.Contains(string(body), `"code":"integrity_broken"`) {
			t.Errorf("%s edited and issued: %d %s", id, code, body)
		}
	}
}

// A draft may name its driver (personal data): a viewer lists drafts but may not read one nor
// its PDF; a fiscal reads them, and every read is audited.
func TestDraftDriverIsPersonalData(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	f := newFixture(t, func(c *api.Config) {
		c.Drafts = c.Episodes.(*store.DB)
		c.DraftKey = key.Public().(ed25519.PublicKey)
	})
	ctx := context.Background()
	if _, err := f.db.CreateUser(ctx, "joao", "senha-do-joao", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	now := wire.NewTime(time.Now())
	d := drafts.Draft{ID: "DRV", EpisodeIDs: []string{"DRV.ep"}, Vehicle: "PIU-001", Rules: []string{"speed"},
		Articles: []string{"Art. 23"}, Penalty: "Art. 46, X", FineUFMP: 400, Start: now, End: now, CreatedAt: now,
		Warnings: []string{"Cartão do tacógrafo 0000000099Z999 não cadastrado."},
		Driver: &drafts.Driver{ID: "D1", Name: "Maria Aparecida dos Santos", CNHNumber: "02650306461", Card: "0000000086H101",
			IdentifiedBy: drafts.DriverByCard, Identification: "cartão do tacógrafo nº 0000000086H101"}}
	b, err := json.Marshal(drafts.Bundle{Format: drafts.BundleFormat, Draft: d, Batches: []drafts.RawBatch{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.InsertDraft(ctx, drafts.Seal("DRV", 1, b, "", key), &d); err != nil {
		t.Fatal(err)
	}
	_, viewer := f.login("maria", viewerPassword)
	_, fiscal := f.login("joao", "senha-do-joao")

	code, body, _ := f.do("GET", "/api/v1/drafts", nil, session{bearer: viewer})
	if code != http.StatusOK || !strings.Contains(string(body), `"id":"DRV"`) {
		t.Fatalf("viewer's list: %d %s", code, body)
	}
	for _, secret := range []string{"Maria Aparecida", "02650306461", "0000000086H101", "0000000099Z999"} {
		if strings.Contains(string(body), secret) {
			t.Errorf("the list holds %q", secret)
		}
	}
	for _, path := range []string{"/api/v1/drafts/DRV", "/api/v1/drafts/DRV/pdf", "/api/v1/drafts/DRV/export"} {
		if code, _, _ := f.do("GET", path, nil, session{bearer: viewer}); code != http.StatusForbidden {
			t.Errorf("viewer got %s: %d", path, code)
		}
	}
	if n := auditCount(t, f, "draft.read"); n != 0 {
		t.Errorf("%d reads audited before any", n)
	}

	code, body, _ = f.do("GET", "/api/v1/drafts/DRV", nil, session{bearer: fiscal})
	if code != http.StatusOK || !strings.Contains(string(body), "Maria Aparecida dos Santos") {
		t.Fatalf("fiscal: %d %s", code, body)
	}
	entries, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: "draft.read"}, 10, "")
	if err != nil || len(entries) != 1 || entries[0].User != "joao" || entries[0].Object != "draft:DRV" {
		t.Errorf("audit of the fiscal's read: %+v %v", entries, err)
	}
}

func auditCount(t *testing.T, f *fixture, action string) int {
	t.Helper()
	entries, _, err := f.db.ListAudit(context.Background(), store.AuditFilter{Action: action}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}
