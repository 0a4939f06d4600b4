package store

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// TestRefusedBatchIsPermanent: what SQLite refuses for good (a constraint) and what the store
// refuses itself (a seq above 2^63−1) are Permanent, not Transient; the quarantine keeps the
// batch with its error and LoggedBatch finds what was logged.
func TestRefusedBatchIsPermanent(t *testing.T) {
	sqliteOnly(t)
	db := openTemp(t)
	ctx := context.Background()
	if _, err := db.db.ExecContext(ctx, `CREATE TRIGGER poison BEFORE INSERT ON batch_log WHEN NEW.vehicle = 'POISON'
BEGIN SELECT RAISE(ABORT, 'poisoned'); END`); err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	batch := func(v string, seq uint64) Batch {
		return Batch{Vehicle: v, Epoch: "e1", Seq: seq, ReceivedAt: at, TMin: at, TMax: at, Payload: []byte(`{"v":1}`)}
	}
	for _, b := range []Batch{batch("POISON", 1), batch("PIU-001", math.MaxInt64+1)} {
		err := db.Commit(ctx, &rules.Changes{}, []Batch{b})
		if err == nil || !Permanent(err) || Transient(err) {
			t.Errorf("%s/%d: %v: Permanent %v, Transient %v", b.Vehicle, b.Seq, err, Permanent(err), Transient(err))
		}
	}
	if err := db.Commit(ctx, &rules.Changes{}, []Batch{batch("PIU-001", 7)}); err != nil {
		t.Fatal(err)
	}
	if p, err := db.LoggedBatch(ctx, "PIU-001", "e1", 7); err != nil || string(p) != `{"v":1}` {
		t.Errorf("LoggedBatch: %q %v", p, err)
	}
	if _, err := db.LoggedBatch(ctx, "PIU-001", "e1", 8); err != ErrNotFound {
		t.Errorf("LoggedBatch of a batch not logged: %v", err)
	}
	big := []byte(strings.Repeat("x", wire.QuarantineCut+10))
	if err := db.Quarantine(ctx, Quarantined{ReceivedAt: at, Vehicle: "POISON", Topic: wire.TelemetryTopic("POISON"),
		Reason: wire.ReasonUnstorable, Detail: "poisoned", Payload: big}); err != nil {
		t.Fatal(err)
	}
	qs, err := db.QuarantineRecords(ctx, "POISON", 10)
	if err != nil || len(qs) != 1 || qs[0].Reason != wire.ReasonUnstorable || len(qs[0].Payload) != wire.QuarantineCut || !qs[0].ReceivedAt.Equal(at) {
		t.Errorf("quarantine records %v %v", len(qs), err)
	}
	if Permanent(context.Canceled) || Transient(context.Canceled) {
		t.Error("a cancelled context is neither transient nor permanent")
	}
}

// TestRefusedBatchIsPermanentOnEitherEngine: what the database refuses for good is Permanent on
// the engine of the run — on PostgreSQL a text it cannot hold (a NUL byte, which SQLite keeps),
// any data exception or constraint violation — and PostgreSQL's passing failures (serialisation, deadlock, a lock not
// available) are Transient, so that no value a device sends stalls the judge on either engine.
func TestRefusedBatchIsPermanentOnEitherEngine(t *testing.T) {
	db := openTemp(t)
	ctx := context.Background()
	at := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	b := Batch{Vehicle: "PIU-001", Epoch: "e1", Seq: 3, ReceivedAt: at, TMin: at, TMax: at, Payload: []byte(`{"v":1}`)}
	if testEngine() == "postgres" {
		nul := b
		nul.Seq, nul.Epoch = 4, "e\x00"
		if err := db.Commit(ctx, &rules.Changes{}, []Batch{nul}); err == nil || !Permanent(err) || Transient(err) {
			t.Errorf("a NUL in a text: %v: Permanent %v, Transient %v", err, Permanent(err), Transient(err))
		}
	}
	for _, state := range []string{"40001", "40P01", "55P03"} {
		err := fmt.Errorf("store: commit: %w", &pgconn.PgError{Code: state})
		if !Transient(err) || Permanent(err) {
			t.Errorf("SQLSTATE %s: Transient %v, Permanent %v", state, Transient(err), Permanent(err))
		}
	}
	for _, state := range []string{"22003", "22021", "23505", "23514"} {
		if err := (&pgconn.PgError{Code: state}); !Permanent(err) || Transient(err) {
			t.Errorf("SQLSTATE %s: Permanent %v, Transient %v", state, Permanent(err), Transient(err))
		}
	}
	if err := (&pgconn.PgError{Code: "53100"}); Permanent(err) || Transient(err) { // disk full: an operator's
		t.Errorf("SQLSTATE 53100: Permanent %v, Transient %v", Permanent(err), Transient(err))
	}
	if err := db.Commit(ctx, &rules.Changes{}, []Batch{b}); err != nil {
		t.Fatalf("the batch alone, after the refusals: %v", err)
	}
}
