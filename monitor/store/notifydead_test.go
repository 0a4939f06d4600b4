package store

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

// TestNotifyDeadLetters: letters are stored, listed newest first by pages, bounded by count
// and age, kept across a reopen, and marked or deleted.
func TestNotifyDeadLetters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "monitor.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 12, 1, 22, 0, 0, 0, time.UTC)
	letter := func(i int, at time.Time) NotifyDeadLetter {
		return NotifyDeadLetter{At: at, User: "ana", Channel: "email", Address: "ana@piuma.example", Display: "ana@piuma.example",
			Subject: "alerta " + string(rune('a'+i)), Episodes: []string{"TR-01/speed/1"}, Alerts: json.RawMessage(`{"alerts":[]}`),
			Attempts: 5, Error: "transient: 451"}
	}
	// An old letter, then six recent ones with a keep of 5: the old one goes by age, the
	// oldest recent one by count.
	if _, err := db.AddNotifyDeadLetter(ctx, letter(0, t0.Add(-40*24*time.Hour)), 5, 30*24*time.Hour); err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for i := 1; i <= 6; i++ {
		id, err := db.AddNotifyDeadLetter(ctx, letter(i, t0.Add(time.Duration(i)*time.Minute)), 5, 30*24*time.Hour)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()

	page1, next, err := db.NotifyDeadLetters(ctx, 3, "")
	if err != nil || len(page1) != 3 || next == "" {
		t.Fatalf("page 1: %d %q %v", len(page1), next, err)
	}
	page2, next2, err := db.NotifyDeadLetters(ctx, 3, next)
	if err != nil || len(page2) != 2 || next2 != "" {
		t.Fatalf("page 2: %d %q %v", len(page2), next2, err)
	}
	all := append(page1, page2...)
	for i, l := range all {
		if want := ids[5-i]; l.ID != want {
			t.Errorf("item %d: id %d, want %d (newest first, the oldest pruned)", i, l.ID, want)
		}
	}
	got := all[0]
	if got.Subject != "alerta g" || !got.At.Equal(t0.Add(6*time.Minute)) || got.Episodes[0] != "TR-01/speed/1" ||
		string(got.Alerts) != `{"alerts":[]}` || got.Attempts != 5 || got.Address != "ana@piuma.example" || got.Retries != 0 || !got.LastRetry.IsZero() {
		t.Errorf("letter %+v", got)
	}

	at := t0.Add(time.Hour)
	if err := db.NotifyDeadLetterRetryFailed(ctx, got.ID, at, "permanent: 550"); err != nil {
		t.Fatal(err)
	}
	one, err := db.NotifyDeadLetter(ctx, got.ID)
	if err != nil || one.Retries != 1 || !one.LastRetry.Equal(at) || one.Error != "permanent: 550" {
		t.Fatalf("after a failed retry: %+v %v", one, err)
	}
	if err := db.DeleteNotifyDeadLetter(ctx, got.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := db.NotifyDeadLetter(ctx, got.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted letter: %v", err)
	}
	if err := db.DeleteNotifyDeadLetter(ctx, got.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: %v", err)
	}
	if _, _, err := db.NotifyDeadLetters(ctx, 3, "!!"); !errors.Is(err, ErrBadCursor) {
		t.Errorf("bad cursor: %v", err)
	}
}
