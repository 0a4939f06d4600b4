package store

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"
)

// A complaint is stored with its answer; lists never carry the contact; the answer page's code
// finds it; moderation and confirmation move it; the contact is erased on request and by the
// retention sweep, which leaves newer complaints alone.
func TestComplaintLifecycle(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 27, 23, 0, 0, 0, time.UTC)
	fakeClock(db, &now)
	old := &Complaint{Source: "form", Lat: -20.83, Lon: -40.72, At: now.Add(-time.Hour), Kind: "som_alto",
		Contact: "maria@example.com", Result: json.RawMessage(`{"matches":[]}`), Answer: []string{"Nenhum trenzinho."}}
	if err := db.AddComplaint(ctx, old); err != nil {
		t.Fatal(err)
	}
	if !ValidPublicCode(old.Code) || old.Status != ComplaintPending || !old.HasContact {
		t.Fatalf("stored: %+v", old)
	}
	now = now.Add(48 * time.Hour)
	recent := &Complaint{Source: "156", ExternalRef: "156-2026-1", Lat: -20.83, Lon: -40.72, At: now, Kind: "velocidade",
		Contact: "jose@example.com", Answer: []string{"x"}}
	if err := db.AddComplaint(ctx, recent); err != nil {
		t.Fatal(err)
	}
	list, _, err := db.Complaints(ctx, ComplaintFilter{}, 10, "")
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %v", list, err)
	}
	for _, c := range list {
		if c.Contact != "" || !c.HasContact {
			t.Errorf("list shows the contact of %s: %q (has %v)", c.ID, c.Contact, c.HasContact)
		}
	}
	if list[0].ID != recent.ID {
		t.Errorf("not newest first: %s", list[0].ID)
	}
	page, next, err := db.Complaints(ctx, ComplaintFilter{}, 1, "")
	if err != nil || len(page) != 1 || next != recent.ID {
		t.Fatalf("page: %v %q %v", page, next, err)
	}
	if page, _, _ = db.Complaints(ctx, ComplaintFilter{}, 1, next); len(page) != 1 || page[0].ID != old.ID {
		t.Fatalf("second page: %v", page)
	}
	got, err := db.ComplaintByCode(ctx, old.Code)
	if err != nil || got.ID != old.ID || got.Contact != "maria@example.com" || got.Answer[0] != "Nenhum trenzinho." {
		t.Fatalf("by code: %+v %v", got, err)
	}
	if _, err := db.ComplaintByCode(ctx, NewPublicCode()); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown code: %v", err)
	}

	// Moderation, then confirmation against an episode; a rejected one cannot be confirmed.
	if _, err := db.ModerateComplaint(ctx, recent.ID, ComplaintRejected, "fiscal", "trote"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.ConfirmComplaint(ctx, recent.ID, "PIU-002", "ep-1", "fiscal"); !errors.Is(err, ErrComplaintState) {
		t.Errorf("confirming a rejected complaint: %v", err)
	}
	c, err := db.ConfirmComplaint(ctx, old.ID, "PIU-002", "ep-1", "fiscal")
	if err != nil || c.Status != ComplaintAccepted || c.EpisodeID != "ep-1" || c.ConfirmedBy != "fiscal" {
		t.Fatalf("confirm: %+v %v", c, err)
	}
	if byEp, _, _ := db.Complaints(ctx, ComplaintFilter{EpisodeID: "ep-1"}, 10, ""); len(byEp) != 1 || byEp[0].ID != old.ID {
		t.Errorf("by episode: %v", byEp)
	}
	if _, err := db.ModerateComplaint(ctx, old.ID, ComplaintRejected, "fiscal", ""); !errors.Is(err, ErrComplaintState) {
		t.Errorf("rejecting a confirmed complaint: %v", err)
	}

	// Retention: a cutoff of one day ago erases the old contact only.
	n, err := db.EraseComplaintContacts(ctx, now.Add(-24*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("retention sweep: %d %v", n, err)
	}
	if c, _ := db.Complaint(ctx, old.ID); c.HasContact || c.Contact != "" || c.ContactErasedAt == nil || c.ContactErasedWhy != "retention" {
		t.Errorf("after the sweep: %+v", c)
	}
	if c, _ := db.Complaint(ctx, recent.ID); c.Contact != "jose@example.com" {
		t.Errorf("the sweep erased a recent contact: %+v", c)
	}
	// On request.
	if erased, err := db.EraseComplaintContact(ctx, recent.ID, "pedido do titular"); err != nil || !erased {
		t.Fatalf("erase on request: %v %v", erased, err)
	}
	if erased, err := db.EraseComplaintContact(ctx, recent.ID, "de novo"); err != nil || erased {
		t.Errorf("erase twice: %v %v", erased, err)
	}
	if _, err := db.EraseComplaintContact(ctx, "rc-nope", "x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("erase unknown: %v", err)
	}
}
