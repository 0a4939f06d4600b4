package notify

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

func storeEpisode(t *testing.T, db *store.DB, vehicle, rule string, start time.Time) *rules.Episode {
	t.Helper()
	e := &rules.Episode{ID: vehicle + ":" + rule + ":" + start.Format(time.RFC3339), Vehicle: vehicle, Rule: rule,
		Article: "Art. 23", Penalty: "Art. 46, X", Start: wire.NewTime(start), Peak: 41, Unit: "km/h", Limit: 30,
		Lat: -20.8367, Lon: -40.7292, Source: "tacho", Evidence: 1}
	if err := db.UpsertEpisode(context.Background(), e, nil); err != nil {
		t.Fatal(err)
	}
	return e
}

// TestEscalationAfterN: with a fake clock, an unacknowledged high-severity alert is sent to the
// supervisor once N minutes after it started — not before, not twice, not for a low-severity
// alert, not for one acknowledged or cleared in time — through the dispatcher, and each
// escalation is in the audit log.
func TestEscalationAfterN(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.CreateUser(ctx, "ana", "senha-longa-de-teste", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	d, clock, mail, tg, _ := newTest(t, []User{both("sup"), both("ana")}, nil)
	esc := &Escalator{Policy: Escalation{MinSeverity: High, After: 10 * time.Minute, To: []string{"sup"}},
		Store: db, Dispatcher: d, Clock: clock}

	start := clock.Now()
	fast := storeEpisode(t, db, "TR-01", "speed", start)                   // high: escalated
	acked := storeEpisode(t, db, "TR-02", "speed", start)                  // acknowledged in time
	cleared := storeEpisode(t, db, "TR-03", "speed", start)                // cleared in time
	low := storeEpisode(t, db, "TR-04", "telemetry_fault", start)          // low severity
	old := storeEpisode(t, db, "TR-05", "speed", start.Add(-13*time.Hour)) // older than MaxAge
	_ = low
	_ = old

	clock.Advance(9 * time.Minute)
	if n, err := esc.Check(ctx); err != nil || n != 0 {
		t.Fatalf("check at 9 min: %d %v", n, err)
	}
	if _, err := db.ActOnTriage(ctx, acked.ID, store.Actor{User: "ana"}, store.TriageAct{Act: store.ActAck}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ActOnTriage(ctx, cleared.ID, store.Actor{User: "ana"}, store.TriageAct{Act: store.ActClear, Text: "duplicado"}); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Minute)
	n, err := esc.Check(ctx)
	if err != nil || n != 1 {
		t.Fatalf("check at 10 min: %d %v, want 1", n, err)
	}
	d.Flush(ctx)
	for _, rec := range []*recorder{mail, tg} {
		got := rec.to(map[*recorder]string{mail: "sup@piuma.example", tg: "sup"}[rec])
		if len(got) != 1 || got[0].Tag != fast.ID || !strings.Contains(got[0].Subject, "Sem reconhecimento há 10 min") ||
			!strings.Contains(got[0].Text, "ninguém reconheceu este alerta") {
			t.Fatalf("escalation messages %+v", got)
		}
	}
	if got := mail.to("ana@piuma.example"); len(got) != 0 {
		t.Errorf("the escalation reached a user not among its recipients: %+v", got)
	}
	// Once: later checks send nothing more, and an acknowledgement after it changes nothing.
	clock.Advance(time.Hour)
	if n, err := esc.Check(ctx); err != nil || n != 0 {
		t.Fatalf("check after an hour: %d %v", n, err)
	}
	d.Flush(ctx)
	if got := mail.to("sup@piuma.example"); len(got) != 1 {
		t.Errorf("%d messages to the supervisor, want 1", len(got))
	}
	entries, _, err := db.ListAudit(ctx, store.AuditFilter{Action: "episode.escalate"}, 10, "")
	if err != nil || len(entries) != 1 || entries[0].Object != "episode:"+fast.ID || entries[0].User != "" {
		t.Fatalf("escalation audit %+v %v", entries, err)
	}
	tr, _ := db.Triage(ctx, fast.ID)
	if tr.State != store.TriageNew || tr.Escalated.IsZero() || len(tr.Events) != 1 || tr.Events[0].Act != store.ActEscalate {
		t.Errorf("escalated triage %+v", tr)
	}
}
