package notice_test

import (
	"testing"

	"github.com/trenzinho/trenzinho/monitor/notice"
)

// TestNoticeSaysWhetherEvidenceIsSigned: the notice prints the draft's evidence_signed line (the
// speed draft's batches are not signed).
func TestNoticeSaysWhetherEvidenceIsSigned(t *testing.T) {
	s, b, f := speedDraft(t)
	if b.Draft.EvidenceSigned != "sem assinatura" {
		t.Fatalf("evidence_signed %q, want %q", b.Draft.EvidenceSigned, "sem assinatura")
	}
	text := render(t, notice.Input{Sealed: s, Bundle: b, Profile: f.p}, "notice-evidence-unsigned")
	mustContain(t, text, "Assinatura dos lotes pelo equipamento de bordo (verificada com a chave cadastrada do veículo na selagem das evidências): sem assinatura.")
}
