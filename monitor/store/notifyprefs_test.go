package store

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// TestNotifyPrefsAndShifts: preferences are saved per user, replaced, kept across a reopen and
// left out for a disabled account; shifts are stored for enabled users only, listed by overlap,
// bounded, and deleted.
func TestNotifyPrefsAndShifts(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "monitor.db")
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range []string{"ana", "bruno"} {
		if _, err := db.CreateUser(ctx, n, "senha-de-teste-1", RoleFiscal); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.NotifyPrefs(ctx, "ana"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("no preferences yet: %v", err)
	}
	if err := db.SetNotifyPrefs(ctx, NotifyPrefs{User: "nobody"}); !errors.Is(err, ErrNotFound) {
		t.Fatalf("preferences of no user: %v", err)
	}
	p := NotifyPrefs{User: "ana", Email: "ana@piuma.example", Rules: []string{"speed"}, MinSeverity: "high", QuietHours: "22:00-07:00"}
	if err := db.SetNotifyPrefs(ctx, p); err != nil {
		t.Fatal(err)
	}
	p.Telegram, p.Rules = "1001", nil
	if err := db.SetNotifyPrefs(ctx, p); err != nil {
		t.Fatal(err)
	}
	if err := db.SetNotifyPrefs(ctx, NotifyPrefs{User: "bruno", Channels: []string{"telegram"}, Telegram: "1002"}); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if db, err = Open(ctx, path); err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.NotifyPrefs(ctx, "ana")
	if err != nil {
		t.Fatal(err)
	}
	if got.Email != "ana@piuma.example" || got.Telegram != "1001" || got.Rules != nil || got.MinSeverity != "high" || got.QuietHours != "22:00-07:00" || got.UpdatedAt.IsZero() {
		t.Errorf("saved %+v", got)
	}
	all, err := db.AllNotifyPrefs(ctx)
	if err != nil || len(all) != 2 {
		t.Fatalf("all: %+v %v", all, err)
	}
	if err := db.SetDisabled(ctx, "bruno", true); err != nil {
		t.Fatal(err)
	}
	if all, _ = db.AllNotifyPrefs(ctx); len(all) != 1 || all[0].User != "ana" {
		t.Errorf("a disabled user's preferences are used: %+v", all)
	}

	t0 := time.Date(2026, 12, 5, 21, 0, 0, 0, time.UTC)
	if _, err := db.AddNotifyShift(ctx, NotifyShift{User: "bruno", From: t0, To: t0.Add(time.Hour)}); !errors.Is(err, ErrNotFound) {
		t.Errorf("shift of a disabled user: %v", err)
	}
	if _, err := db.AddNotifyShift(ctx, NotifyShift{User: "ana", From: t0, To: t0}); !errors.Is(err, ErrRefused) {
		t.Errorf("empty shift: %v", err)
	}
	a, err := db.AddNotifyShift(ctx, NotifyShift{User: "ANA", From: t0, To: t0.Add(12 * time.Hour), CreatedBy: "chefe"})
	if err != nil || a.User != "ana" || a.ID == 0 {
		t.Fatalf("shift %+v %v", a, err)
	}
	b, err := db.AddNotifyShift(ctx, NotifyShift{User: "ana", From: t0.Add(24 * time.Hour), To: t0.Add(36 * time.Hour), CreatedBy: "chefe"})
	if err != nil {
		t.Fatal(err)
	}
	ids := func(ss []NotifyShift) (out []int64) {
		for _, s := range ss {
			out = append(out, s.ID)
		}
		return out
	}
	for _, c := range []struct {
		from, to time.Time
		want     []int64
	}{
		{t0.Add(-time.Hour), t0, nil},
		{t0.Add(11 * time.Hour), t0.Add(25 * time.Hour), []int64{a.ID, b.ID}},
		{t0.Add(12 * time.Hour), time.Time{}, []int64{b.ID}},
	} {
		got, err := db.NotifyShifts(ctx, c.from, c.to)
		if err != nil || !slices.Equal(ids(got), c.want) {
			t.Errorf("shifts in [%v, %v): %v %v, want %v", c.from, c.to, ids(got), err, c.want)
		}
	}
	del, err := db.DeleteNotifyShift(ctx, a.ID)
	if err != nil || del.User != "ana" || !del.From.Equal(t0) || del.CreatedBy != "chefe" {
		t.Errorf("deleted %+v %v", del, err)
	}
	if _, err := db.DeleteNotifyShift(ctx, a.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted twice: %v", err)
	}
}
