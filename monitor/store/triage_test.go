package store

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/rules"
)

// TestTriageStateMachine walks an alert through every act: each allowed one moves the state and
// leaves one history entry and one audit entry; each refused one changes nothing.
func TestTriageStateMachine(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	now := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	fakeClock(db, &now)
	for _, u := range []struct {
		name string
		role Role
	}{{"ana", RoleFiscal}, {"bia", RoleFiscal}, {"vera", RoleViewer}} {
		if _, err := db.CreateUser(ctx, u.name, "senha-longa-de-teste", u.role); err != nil {
			t.Fatal(err)
		}
	}
	e := testEpisode("PIU-001", "speed", now.Add(-time.Hour), true)
	if err := db.UpsertEpisode(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	tr, err := db.Triage(ctx, e.ID)
	if err != nil || tr.State != TriageNew || len(tr.Events) != 0 {
		t.Fatalf("untouched triage: %+v, %v", tr, err)
	}
	if _, err := db.Triage(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("triage of a missing episode: %v", err)
	}
	ana := Actor{User: "ana", RemoteAddr: "192.0.2.1"}
	steps := []struct {
		who      string
		act      TriageAct
		state    TriageState
		conflict bool // refused with a 409-kind error
		invalid  bool
	}{
		{"ana", TriageAct{Act: ActComment, Text: "  vou verificar  "}, TriageNew, false, false},
		{"ana", TriageAct{Act: ActAck}, TriageAcknowledged, false, false},
		{"bia", TriageAct{Act: ActAck}, TriageAcknowledged, true, false},
		{"ana", TriageAct{Act: ActAssign, Assignee: "vera"}, TriageAcknowledged, false, true}, // a viewer
		{"ana", TriageAct{Act: ActAssign, Assignee: "ninguem"}, TriageAcknowledged, false, true},
		{"ana", TriageAct{Act: ActAssign, Assignee: "BIA"}, TriageAssigned, false, false},
		{"ana", TriageAct{Act: ActAssign, Assignee: "bia"}, TriageAssigned, true, false},
		{"bia", TriageAct{Act: ActComment, Text: ""}, TriageAssigned, false, true},
		{"bia", TriageAct{Act: ActComment, Text: strings.Repeat("x", MaxTriageText+1)}, TriageAssigned, false, true},
		{"bia", TriageAct{Act: ActClear}, TriageAssigned, false, true}, // no reason
		{"bia", TriageAct{Act: ActReopen, Text: "?"}, TriageAssigned, true, false},
		{"bia", TriageAct{Act: ActClear, Text: "Agente no local: o trem já reduziu."}, TriageCleared, false, false},
		{"bia", TriageAct{Act: ActClear, Text: "de novo"}, TriageCleared, true, false},
		{"bia", TriageAct{Act: ActAck}, TriageCleared, true, false},
		{"ana", TriageAct{Act: ActComment, Text: "registrado"}, TriageCleared, false, false},
		{"ana", TriageAct{Act: ActReopen, Text: "O trem voltou a correr."}, TriageAssigned, false, false},
		{"ana", TriageAct{Act: "delete"}, TriageAssigned, false, true},
	}
	wantEvents := 0
	for i, s := range steps {
		now = now.Add(time.Minute)
		got, err := db.ActOnTriage(ctx, e.ID, Actor{User: s.who, RemoteAddr: ana.RemoteAddr}, s.act)
		var ce *CaseError
		switch {
		case s.conflict || s.invalid:
			if !errors.As(err, &ce) || (ce.Kind == cases.Conflict) != s.conflict {
				t.Fatalf("step %d %+v: err %v, want a refusal (conflict %v)", i, s.act, err, s.conflict)
			}
		case err != nil:
			t.Fatalf("step %d %+v: %v", i, s.act, err)
		default:
			wantEvents++
			if got.State != s.state || len(got.Events) != wantEvents {
				t.Fatalf("step %d %+v: state %s with %d events, want %s with %d", i, s.act, got.State, len(got.Events), s.state, wantEvents)
			}
		}
		tr, err := db.Triage(ctx, e.ID)
		if err != nil || tr.State != s.state || len(tr.Events) != wantEvents {
			t.Fatalf("after step %d: %+v %v", i, tr, err)
		}
	}
	tr, _ = db.Triage(ctx, e.ID)
	if tr.AckedBy != "ana" || tr.Assignee != "bia" || tr.AssignBy != "ana" || tr.ClearedBy != "" || tr.Reason != "" {
		t.Errorf("final triage %+v", tr)
	}
	if c := tr.Events[0]; c.Act != ActComment || c.Text != "vou verificar" || c.User != "ana" {
		t.Errorf("first event %+v", c)
	}
	// Every act taken is audited, with the triage before and after and the client address.
	entries, _, err := db.ListAudit(ctx, AuditFilter{Object: "episode:" + e.ID}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != wantEvents {
		t.Fatalf("%d audit entries for %d acts", len(entries), wantEvents)
	}
	var clear *AuditEntry
	for i := range entries {
		if entries[i].Action == "episode.clear" {
			clear = &entries[i]
		}
		if entries[i].RemoteAddr != "192.0.2.1" {
			t.Errorf("audit entry %+v without the client address", entries[i])
		}
	}
	if clear == nil || clear.User != "bia" || !strings.Contains(string(clear.After), `"state":"encerrado"`) ||
		!strings.Contains(string(clear.After), "o trem já reduziu") || !strings.Contains(string(clear.Before), `"state":"atribuido"`) {
		t.Errorf("clear's audit entry %+v", clear)
	}
}

// TestTriageHistoryAppendOnly: the database refuses to change or delete a comment (or any
// history entry), even through SQL that bypasses the store's methods.
func TestTriageHistoryAppendOnly(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	if _, err := db.CreateUser(ctx, "ana", "senha-longa-de-teste", RoleFiscal); err != nil {
		t.Fatal(err)
	}
	e := testEpisode("PIU-001", "speed", time.Now().Add(-time.Hour), true)
	if err := db.UpsertEpisode(ctx, e, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ActOnTriage(ctx, e.ID, Actor{User: "ana"}, TriageAct{Act: ActComment, Text: "original"}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`UPDATE episode_triage_events SET text = 'mudado'`,
		`DELETE FROM episode_triage_events`,
	} {
		_, err := db.db.ExecContext(ctx, q)
		if err == nil || !strings.Contains(err.Error(), "append-only") {
			t.Errorf("%s: %v, want refused as append-only", q, err)
		}
	}
	tr, err := db.Triage(ctx, e.ID)
	if err != nil || len(tr.Events) != 1 || tr.Events[0].Text != "original" {
		t.Fatalf("history after the refused edits: %+v %v", tr, err)
	}
}

// TestEscalationMarkedOnce: an unacknowledged episode is a candidate until it is marked; a
// second mark does nothing; an acknowledged one is never a candidate nor marked.
func TestEscalationMarkedOnce(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	if _, err := db.CreateUser(ctx, "ana", "senha-longa-de-teste", RoleFiscal); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	a := testEpisode("PIU-001", "speed", t0, true)
	b := testEpisode("PIU-002", "speed", t0.Add(time.Second), true)
	for _, e := range []*rules.Episode{a, b} {
		if err := db.UpsertEpisode(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ActOnTriage(ctx, b.ID, Actor{User: "ana"}, TriageAct{Act: ActAck}); err != nil {
		t.Fatal(err)
	}
	refs, err := db.Unescalated(ctx, t0.Add(-time.Hour), t0.Add(time.Hour), 10)
	if err != nil || len(refs) != 1 || refs[0].ID != a.ID || refs[0].Rule != "speed" {
		t.Fatalf("candidates %+v %v", refs, err)
	}
	at := t0.Add(10 * time.Minute)
	ep, ok, err := db.MarkEscalated(ctx, a.ID, at, []string{"sup"})
	if err != nil || !ok || ep == nil || ep.Vehicle != "PIU-001" {
		t.Fatalf("first mark: %v %v %v", ep, ok, err)
	}
	if _, ok, err := db.MarkEscalated(ctx, a.ID, at.Add(time.Minute), []string{"sup"}); err != nil || ok {
		t.Errorf("second mark: %v %v, want no-op", ok, err)
	}
	if _, ok, err := db.MarkEscalated(ctx, b.ID, at, []string{"sup"}); err != nil || ok {
		t.Errorf("mark of an acknowledged episode: %v %v, want no-op", ok, err)
	}
	if refs, _ := db.Unescalated(ctx, t0.Add(-time.Hour), t0.Add(time.Hour), 10); len(refs) != 0 {
		t.Errorf("candidates after the mark: %+v", refs)
	}
	tr, _ := db.Triage(ctx, a.ID)
	if tr.State != TriageNew || !tr.Escalated.Equal(at) || len(tr.Events) != 1 || tr.Events[0].Act != ActEscalate || tr.Events[0].Text != "sup" {
		t.Errorf("escalated triage %+v", tr)
	}
	entries, _, _ := db.ListAudit(ctx, AuditFilter{Action: "episode.escalate"}, 10, "")
	if len(entries) != 1 || entries[0].Object != "episode:"+a.ID {
		t.Errorf("escalation audit %+v", entries)
	}
	var after map[string]any
	if err := json.Unmarshal(entries[0].After, &after); err != nil || after["to"] == nil {
		t.Errorf("escalation audit after %s", entries[0].After)
	}
}

// TestEpisodesFilterByTriage: the list selects by triage state and assignee.
func TestEpisodesFilterByTriage(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	if _, err := db.CreateUser(ctx, "ana", "senha-longa-de-teste", RoleFiscal); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 28, 15, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 4 {
		e := testEpisode("PIU-001", "speed", t0.Add(time.Duration(i)*time.Minute), false)
		if err := db.UpsertEpisode(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, e.ID)
	}
	ana := Actor{User: "ana"}
	for _, a := range []struct {
		id  string
		act TriageAct
	}{
		{ids[1], TriageAct{Act: ActAck}},
		{ids[2], TriageAct{Act: ActAssign, Assignee: "ana"}},
		{ids[3], TriageAct{Act: ActClear, Text: "falso positivo"}},
	} {
		if _, err := db.ActOnTriage(ctx, a.id, ana, a.act); err != nil {
			t.Fatal(err)
		}
	}
	for state, want := range map[TriageState]string{TriageNew: ids[0], TriageAcknowledged: ids[1], TriageAssigned: ids[2], TriageCleared: ids[3]} {
		eps, _, err := db.Episodes(ctx, EpisodeFilter{Triage: state}, 10, "")
		if err != nil || len(eps) != 1 || eps[0].ID != want {
			t.Errorf("state %s: %d episodes %v", state, len(eps), err)
		}
	}
	eps, _, err := db.Episodes(ctx, EpisodeFilter{Triage: TriageAssigned, Assignee: "ANA"}, 10, "")
	if err != nil || len(eps) != 1 {
		t.Errorf("assigned to ana: %d %v", len(eps), err)
	}
	sums, err := db.TriageSummaries(ctx, ids)
	if err != nil || len(sums) != 3 || sums[ids[2]].Assignee != "ana" {
		t.Errorf("summaries %+v %v", sums, err)
	}
}
