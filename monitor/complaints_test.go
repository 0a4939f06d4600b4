package main

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/store"
)

// The monitor's retention sweep erases, at start and every hour, the contact of complaints older
// than the profile's retention, and keeps the newer ones' and the complaints themselves.
func TestSweepComplaintContacts(t *testing.T) {
	ctx := context.Background()
	db, err := store.Open(ctx, filepath.Join(t.TempDir(), "monitor.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	now := time.Now()
	old := &store.Complaint{Source: "form", CreatedAt: now.Add(-181 * 24 * time.Hour), At: now.Add(-181 * 24 * time.Hour), Kind: "som_alto",
		Contact: "antiga@example.com", Answer: []string{"x"}}
	recent := &store.Complaint{Source: "form", CreatedAt: now.Add(-179 * 24 * time.Hour), At: now.Add(-179 * 24 * time.Hour), Kind: "som_alto",
		Contact: "recente@example.com", Answer: []string{"x"}}
	for _, c := range []*store.Complaint{old, recent} {
		if err := db.AddComplaint(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		sweepComplaintContacts(runCtx, db, 180*24*time.Hour, time.Now, slog.New(slog.DiscardHandler))
		close(done)
	}()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := db.Complaint(ctx, old.ID)
		if err != nil {
			t.Fatal(err)
		}
		if !c.HasContact {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the old contact was not erased")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
	if c, _ := db.Complaint(ctx, recent.ID); c.Contact != "recente@example.com" {
		t.Errorf("the recent contact: %+v", c)
	}
	if c, _ := db.Complaint(ctx, old.ID); c.ContactErasedWhy != "retention" || c.Kind != "som_alto" {
		t.Errorf("the old complaint: %+v", c)
	}
}
