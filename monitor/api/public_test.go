package api_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"database/sql"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// Issuing a draft through the decision route assigns its public code at once; the page
// answers it without a session, in HTML; dismissing assigns none.
func TestIssueAssignsThePublicCode(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	f := newFixture(t, func(c *api.Config) {
		db := c.Episodes.(*store.DB)
		c.Drafts = db
		c.DraftKey = key.Public().(ed25519.PublicKey)
		c.Public = &api.PublicConfig{Store: db}
		c.Cases = &api.CasesConfig{Store: db, Profile: confirmedPiuma()}
	})
	ctx := context.Background()
	if _, err := f.db.CreateUser(ctx, "joao", "senha-do-joao", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	setAgent(t, f.db, "joao", "João Batista Moreira", "FP-0042", "Agente de Fiscalização de Posturas")
	sealDraft(t, f.db, key, "D1", 400)
	sealDraft(t, f.db, key, "D2", 400)
	_, fiscal := f.login("joao", "senha-do-joao")
	if code, body, _ := f.do("POST", "/api/v1/drafts/D1/decision", map[string]string{"decision": "issue"}, session{bearer: fiscal}); code != http.StatusOK {
		t.Fatalf("issue: %d %s", code, body)
	}
	if code, body, _ := f.do("POST", "/api/v1/drafts/D2/decision", map[string]string{"decision": "dismiss", "reason": "fora do perímetro"}, session{bearer: fiscal}); code != http.StatusOK {
		t.Fatalf("dismiss: %d %s", code, body)
	}
	// The code exists already, before any PDF: read the table behind the store's back.
	raw, err := sql.Open("sqlite", f.db.Path())
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	var code string
	if err := raw.QueryRow(`SELECT code FROM public_codes WHERE draft_id = 'D1'`).Scan(&code); err != nil {
		t.Fatalf("no public code after the issue: %v", err)
	}
	if again, err := f.db.PublicCode(ctx, "D1"); err != nil || again != code {
		t.Fatalf("code changed: %q → %q (%v)", code, again, err)
	}
	d, err := f.db.DraftByPublicCode(ctx, code)
	if err != nil || d.Sealed.ID != "D1" {
		t.Fatalf("code %s: %v", code, err)
	}
	if _, err := f.db.PublicCode(ctx, "D2"); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("a dismissed draft has a code: %v", err)
	}
	resp, err := http.Get(f.srv.URL + "/v/" + code)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	page := string(b)
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") ||
		!strings.Contains(page, "Selo íntegro") || !strings.Contains(page, d.Notice) ||
		!strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("public page: %d %v\n%s", resp.StatusCode, resp.Header, page)
	}
	for _, bad := range []string{"Trenzinho Alegria", "11222333000181", "PIU-001", "Beira-Mar", "joao", "João", "DEMONSTRAÇÃO"} {
		if strings.Contains(page, bad) {
			t.Errorf("the public page shows %q", bad)
		}
	}
}

func TestKeyFingerprint(t *testing.T) {
	pub := make(ed25519.PublicKey, ed25519.PublicKeySize)
	// SHA-256 of 32 zero bytes.
	want := "66687aadf862bd776c8fc18b8e9f8e20089714856ee233b3902a591d0d5f2925"
	got := strings.ReplaceAll(api.KeyFingerprint(pub), " ", "")
	if got != want || len(api.KeyFingerprint(pub)) != 64+15 {
		t.Fatalf("fingerprint %q", api.KeyFingerprint(pub))
	}
}
