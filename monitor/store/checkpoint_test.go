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
