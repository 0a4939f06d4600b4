package notify_test

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// TestDeadLetterSurvivesRestart: a message the real SMTP server refuses for good becomes a dead
// letter in the real SQLite database; after the monitor's restart (the store reopened, a new
// dispatcher) it is still listed, and a retry once the server accepts again delivers it to
// the mailbox and removes it. A retry that fails keeps the letter with the retry's error.
func TestDeadLetterSurvivesRestart(t *testing.T) {
	ctx := context.Background()
	smtpd, _, chans := channels(t)
	delete(chans, "telegram")
	path := filepath.Join(t.TempDir(), "monitor.db")
	at := time.Date(2026, 12, 5, 21, 30, 0, 0, time.UTC)
	start := func() (*store.DB, *notify.Dispatcher) {
		db, err := store.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		d, err := notify.New(notify.Config{
			Channels: chans, Clock: &clock{t: at}, DeadLetterStore: db,
			Users:    []notify.User{{ID: "ana", Addresses: []notify.Address{{Channel: "email", To: "ana@piuma.example"}}}},
			Composer: notify.Composer{BaseURL: "https://monitor.example"}, Registerer: prometheus.NewRegistry(),
			Logger: slog.New(slog.DiscardHandler),
		})
		if err != nil {
			t.Fatal(err)
		}
		return db, d
	}

	db, d := start()
	smtpd.FailNext(550) // the recipient refused: permanent
	d.Notify(notify.Alert{EpisodeID: "TR-01/speed/7", Rule: "speed", Vehicle: "TR-01", Severity: notify.High,
		Start: at, Peak: 31, Limit: 20, Unit: "km/h"})
	d.Flush(ctx)
	if n := len(smtpd.Mailbox()); n != 0 {
		t.Fatalf("the refused message is in the mailbox (%d)", n)
	}
	if mem := d.DeadLetters(); len(mem) != 0 {
		t.Errorf("with a store, the dead letter went to memory too: %+v", mem)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db, d = start() // the restart
	defer db.Close()
	letters, _, err := d.ListDeadLetters(ctx, 10, "")
	if err != nil || len(letters) != 1 {
		t.Fatalf("after the restart: %d letters, %v", len(letters), err)
	}
	l := letters[0]
	if l.User != "ana" || l.Channel != "email" || l.Display != "ana@piuma.example" || l.Attempts != 1 ||
		!strings.Contains(l.Error, "550") || len(l.Episodes) != 1 || l.Episodes[0] != "TR-01/speed/7" || !l.At.Equal(at) {
		t.Fatalf("letter %+v", l)
	}

	// The server refuses again: the letter stays, with the retry's error.
	smtpd.FailNext(550)
	if err := d.RetryDeadLetter(ctx, l.ID); err == nil {
		t.Fatal("a refused retry succeeded")
	}
	if again, err := db.NotifyDeadLetter(ctx, l.ID); err != nil || again.Retries != 1 {
		t.Fatalf("after a failed retry: %+v %v", again, err)
	}

	// The server accepts: delivered, and removed.
	if err := d.RetryDeadLetter(ctx, l.ID); err != nil {
		t.Fatal(err)
	}
	box := smtpd.Mailbox()
	if len(box) != 1 || box[0].To[0] != "ana@piuma.example" || !strings.Contains(string(box[0].Data), "TR-01") {
		t.Fatalf("mailbox %+v", box)
	}
	if subject, _, _ := box[0].Read(t); subject != l.Subject {
		t.Errorf("subject %q, the letter's %q", subject, l.Subject)
	}
	if letters, _, _ := d.ListDeadLetters(ctx, 10, ""); len(letters) != 0 {
		t.Errorf("delivered letter still listed: %+v", letters)
	}
	if err := d.RetryDeadLetter(ctx, l.ID); !errors.Is(err, store.ErrNotFound) {
		t.Errorf("retry of a delivered letter: %v", err)
	}
}
