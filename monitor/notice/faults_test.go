package notice_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/notice"
)

// A conflicting replay while the vehicle was speeding is review material: the preview of the
// draft carries the warning the drafter wrote, the issued auto does not (it states only the
// auto), and the sealed bundle still verifies and holds the fault episode.
func TestTelemetryConflictWarnsInThePreviewOnly(t *testing.T) {
	f := newFixture(t)
	start := time.Date(2026, 11, 27, 19, 30, 0, 0, f.p.Location())
	speeds := append(repeat(20, 150), repeat(45, 25)...)
	speeds = append(speeds, repeat(20, 170)...)
	// The device replays its batch 3 with other content while speeding (receive clock).
	f.engine.Conflict("PIU-001", "e-1", 3, start.Add(160*time.Second))
	c, err := f.engine.Drain()
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.Commit(context.Background(), &c, nil); err != nil {
		t.Fatal(err)
	}
	f.play(t, start, drive(-20.8418, -40.7330, speeds...))
	m := f.draft(t)
	var warning string
	for _, w := range m.Draft.Warnings {
		if strings.Contains(w, "dados conflitantes") {
			warning = w
		}
	}
	if warning == "" {
		t.Fatalf("the draft does not warn of the conflict: %q", m.Draft.Warnings)
	}
	in := notice.Input{Sealed: m.Sealed, Profile: f.p}
	if b, err := drafts.Verify(&m.Sealed, nil); err != nil || len(b.Faults) != 1 {
		t.Fatalf("bundle: %v", err)
	}

	preview := render(t, in, "notice-conflict-preview")
	mustContain(t, preview, "ATENÇÃO — AVISOS AO AGENTE", warning)

	at := time.Date(2026, 11, 28, 14, 0, 0, 0, time.UTC)
	in.Decision = notice.Decision{Status: drafts.StatusIssued, Notice: "AI-2026/0009", DecidedBy: "joao", DecidedAt: &at,
		Agent: &notice.Agent{FullName: "João Batista Moreira", Matricula: "FP-0042", Cargo: "Agente de Fiscalização de Posturas"}}
	issued := strings.Join(strings.Fields(render(t, in, "notice-conflict-issued")), " ")
	mustContain(t, issued, "AI-2026/0009")
	mustNotContain(t, issued, "dados conflitantes", "verificar antes de autuar", "AVISOS AO AGENTE")
}
