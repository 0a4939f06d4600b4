package store

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
)

// An issued auto gets one public code, random and of the documented form, kept across calls;
// a draft not issued, a dismissed draft and an unknown id get none.
func TestPublicCode(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	start := local(2026, 11, 27, 21, 0)
	for _, id := range []string{"A", "B", "C"} {
		putDraft(t, db, id, "L1", start)
	}
	if _, err := db.PublicCode(ctx, "A"); !errors.Is(err, ErrNotFound) {
		t.Errorf("code of a draft not issued: %v", err)
	}
	if _, err := db.PublicCode(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("code of an unknown draft: %v", err)
	}
	for _, id := range []string{"A", "B"} {
		if _, err := db.DecideDraft(ctx, id, drafts.StatusIssued, "", "joao", start.Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.DecideDraft(ctx, "C", drafts.StatusDismissed, "motivo qualquer", "joao", start.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.PublicCode(ctx, "C"); !errors.Is(err, ErrNotFound) {
		t.Errorf("code of a dismissed draft: %v", err)
	}
	a, err := db.PublicCode(ctx, "A")
	if err != nil {
		t.Fatal(err)
	}
	again, _ := db.PublicCode(ctx, "A")
	b, _ := db.PublicCode(ctx, "B")
	if a != again || a == b || !ValidPublicCode(a) || !ValidPublicCode(b) || len(a) != 24 {
		t.Fatalf("codes %q %q %q", a, again, b)
	}
	d, err := db.DraftByPublicCode(ctx, a)
	if err != nil || d.Sealed.ID != "A" {
		t.Fatalf("draft of %s: %v %v", a, d, err)
	}
	if _, err := db.DraftByPublicCode(ctx, NewPublicCode()); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown code: %v", err)
	}

	if ok, _ := db.IsPublicPDF(ctx, "A", "ab"); ok {
		t.Error("a PDF never recorded is known")
	}
	for range 2 {
		if err := db.RecordPublicPDF(ctx, "A", "ab"); err != nil {
			t.Fatal(err)
		}
	}
	if ok, err := db.IsPublicPDF(ctx, "A", "ab"); !ok || err != nil {
		t.Errorf("recorded PDF: %v %v", ok, err)
	}
	if ok, _ := db.IsPublicPDF(ctx, "B", "ab"); ok {
		t.Error("a PDF of A is known as B's")
	}
}

func TestValidPublicCode(t *testing.T) {
	seen := map[string]bool{}
	for range 1000 {
		c := NewPublicCode()
		if !ValidPublicCode(c) || seen[c] {
			t.Fatalf("code %q (seen %v)", c, seen[c])
		}
		seen[c] = true
	}
	for _, bad := range []string{"", "AI-2026-0001", "abcdefghijklmnopqrstuvw", "abcdefghijklmnopqrstuvwx1",
		"ABCDEFGHIJKLMNOPQRSTUVWX", "abcdefghijklmnopqrstuvw1", "abcdefghijklmnopqrstuv=="} {
		if ValidPublicCode(bad) {
			t.Errorf("%q accepted", bad)
		}
	}
}

// FuzzValidPublicCode: a code accepted is exactly the encoding of 15 bytes.
func FuzzValidPublicCode(f *testing.F) {
	f.Add(NewPublicCode())
	f.Add("abcdefghijklmnopqrstuvwx")
	f.Add("")
	f.Fuzz(func(t *testing.T, s string) {
		if !ValidPublicCode(s) {
			return
		}
		b, err := publicCoding.DecodeString(strings.ToUpper(s))
		if err != nil || len(b) != PublicCodeBytes {
			t.Fatalf("%q accepted: %v %d bytes", s, err, len(b))
		}
	})
}
