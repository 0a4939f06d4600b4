package store

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/rules"
)

// TestCheckpointBesideCommits: commits leave their pages in the WAL (SQLite checkpoints in a
// commit only at 10,000 pages), and Checkpoint copies them to the database file without a
// commit: the file grows by the batches written.
func TestCheckpointBesideCommits(t *testing.T) {
	sqliteOnly(t)
	db := openTemp(t)
	ctx := context.Background()
	payload := make([]byte, 8<<10)
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	for i := range 16 {
		var bs []Batch
		for k := range 8 {
			bs = append(bs, Batch{Vehicle: fmt.Sprintf("V%02d", k), Epoch: "e", Seq: uint64(i + 1),
				ReceivedAt: now, TMin: now, TMax: now, Payload: payload})
		}
		if err := db.Commit(ctx, &rules.Changes{}, bs); err != nil {
			t.Fatal(err)
		}
	}
	size := func() int64 {
		fi, err := os.Stat(db.path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	const written = 16 * 8 * 8 << 10 // 1 MiB of payloads
	if before >= written {
		t.Fatalf("the database file holds %d bytes before any checkpoint: the commits were checkpointed already", before)
	}
	cctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { defer close(done); db.Checkpoint(cctx, 10*time.Millisecond) }()
	deadline := time.Now().Add(20 * time.Second)
	for size() < written && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-done
	if got := size(); got < written {
		t.Fatalf("database file %d bytes after the checkpoints (was %d): the WAL was not copied back", got, before)
	}
}

// TestCommitUnsyncedThenSynced: CommitUnsynced commits with the writer's PRAGMA synchronous at
// NORMAL, and the next Commit puts it back to FULL before it begins, so that no commit whose
// messages are acknowledged returns before the WAL is on the disk; both transactions are there
// after the database is opened again.
func TestCommitUnsyncedThenSynced(t *testing.T) {
	sqliteOnly(t)
	db := openTemp(t)
	ctx := context.Background()
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	batch := func(seq uint64) []Batch {
		return []Batch{{Vehicle: "V01", Epoch: "e", Seq: seq, ReceivedAt: now, TMin: now, TMax: now, Payload: []byte(fmt.Sprint(seq))}}
	}
	synchronous := func() int {
		db.writerMu.Lock()
		defer db.writerMu.Unlock()
		var n int
		if err := db.writer.QueryRowContext(ctx, `PRAGMA synchronous`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	const normal, full = 1, 2
	if err := db.CommitUnsynced(ctx, &rules.Changes{}, batch(1)); err != nil {
		t.Fatal(err)
	}
	if got := synchronous(); got != normal {
		t.Errorf("synchronous %d after CommitUnsynced, want %d (NORMAL)", got, normal)
	}
	if err := db.Commit(ctx, &rules.Changes{}, batch(2)); err != nil {
		t.Fatal(err)
	}
	if got := synchronous(); got != full {
		t.Errorf("synchronous %d after Commit, want %d (FULL)", got, full)
	}
	path := db.path
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	db, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for seq := range uint64(2) {
		if p, err := db.LoggedBatch(ctx, "V01", "e", seq+1); err != nil || string(p) != fmt.Sprint(seq+1) {
			t.Errorf("batch %d after reopening: %q, %v", seq+1, p, err)
		}
	}
}

// TestCheckpointAtWALSize: walFrames reads the WAL's size from the wal-index, which grows with
// the commits; CheckpointAt leaves the WAL alone below its threshold and, once the WAL holds
// that many pages, copies it back to the database file without a commit, after which the next
// commit starts the WAL over.
func TestCheckpointAtWALSize(t *testing.T) {
	sqliteOnly(t)
	db := openTemp(t)
	ctx := context.Background()
	payload := make([]byte, 8<<10)
	now := time.Date(2026, 11, 25, 15, 0, 0, 0, time.UTC)
	seq := 0
	commit := func(n int) {
		t.Helper()
		for range n {
			seq++
			var bs []Batch
			for k := range 8 {
				bs = append(bs, Batch{Vehicle: fmt.Sprintf("V%02d", k), Epoch: "e", Seq: uint64(seq),
					ReceivedAt: now, TMin: now, TMax: now, Payload: payload})
			}
			if err := db.Commit(ctx, &rules.Changes{}, bs); err != nil {
				t.Fatal(err)
			}
		}
	}
	shm, err := os.Open(db.path + "-shm")
	if err != nil {
		t.Fatal(err)
	}
	defer shm.Close()
	frames := func() (mx, backfilled uint32) {
		t.Helper()
		for range 100 { // a header caught mid-update is read again
			if mx, backfilled, err = walFrames(shm); err == nil {
				return mx, backfilled
			}
		}
		t.Fatalf("wal-index: %v", err)
		return 0, 0
	}
	commit(8)
	first, _ := frames()
	commit(8)
	second, backfilled := frames()
	// Each commit writes 8 batches of 8 KiB: at least 16 pages of 4 KiB.
	if first < 8*16 || second < first+8*16 || backfilled != 0 {
		t.Fatalf("WAL frames %d after 8 commits, %d (%d copied back) after 16: want ≥ 128, ≥ 128 more, 0", first, second, backfilled)
	}
	size := func() int64 {
		fi, err := os.Stat(db.path)
		if err != nil {
			t.Fatal(err)
		}
		return fi.Size()
	}
	before := size()
	const written = 16 * 8 * 8 << 10 // 1 MiB of payloads
	if before >= written {
		t.Fatalf("the database file holds %d bytes before any checkpoint: the commits were checkpointed already", before)
	}

	// Above the WAL's size: no checkpoint in 50 looks.
	cctx, stop := context.WithCancel(ctx)
	done := make(chan struct{})
	looks := db.walLooks.Load()
	go func() { defer close(done); db.CheckpointAt(cctx, int(second)+1, time.Millisecond) }()
	for deadline := time.Now().Add(20 * time.Second); db.walLooks.Load() < looks+50; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("CheckpointAt looked at the WAL %d times in 20 s", db.walLooks.Load()-looks)
		}
	}
	stop()
	<-done
	if mx, backfilled := frames(); backfilled != 0 || mx != second {
		t.Fatalf("below the threshold: %d of %d frames copied back (WAL %d before)", backfilled, mx, second)
	}

	// At the WAL's size: copied back.
	cctx, stop = context.WithCancel(ctx)
	done = make(chan struct{})
	go func() { defer close(done); db.CheckpointAt(cctx, int(second), time.Millisecond) }()
	deadline := time.Now().Add(20 * time.Second)
	for size() < written && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	stop()
	<-done
	if got := size(); got < written {
		t.Fatalf("database file %d bytes after the checkpoints (was %d): the WAL was not copied back", got, before)
	}
	if mx, backfilled := frames(); backfilled != mx {
		t.Fatalf("%d of %d frames copied back", backfilled, mx)
	}
	commit(1)
	if mx, _ := frames(); mx >= second {
		t.Fatalf("WAL frames %d after the checkpoint and one commit: the WAL did not start over", mx)
	}
}
