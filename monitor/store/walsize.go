package store

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"time"
)

// walIndexHeader is the size of the part of the wal-index (the "-shm" file) that walFrames
// reads: two copies of the 48-byte header, then the checkpoint information, whose first field
// is nBackfill (https://www.sqlite.org/walformat.html, "The WAL-Index Header"). Its fields are
// in the machine's byte order.
const walIndexHeader = 100

// walIndexVersion is the wal-index header's iVersion: the format walFrames knows.
const walIndexVersion = 3007000

// errWALIndex says that the wal-index could not be read as the format walFrames knows: no
// such file (yet), another version, or a header caught half-written.
var errWALIndex = errors.New("store: wal-index not readable")

// walFrames reads from the wal-index how many frames the WAL holds (mxFrame) and how many of
// them a checkpoint has copied back to the database file already (nBackfill). It reads the
// shared memory of SQLite's connections as a file, without a lock and without a connection: a
// figure for scheduling checkpoints, not for anything that must be exact. A header whose two
// copies differ (a commit was updating it) is errWALIndex; the caller looks again later.
func walFrames(shm *os.File) (mxFrame, nBackfill uint32, err error) {
	var b [walIndexHeader]byte
	if _, err := shm.ReadAt(b[:], 0); err != nil {
		return 0, 0, errors.Join(errWALIndex, err)
	}
	ne := binary.NativeEndian
	if ne.Uint32(b[0:]) != walIndexVersion || b[12] != 1 || string(b[0:48]) != string(b[48:96]) {
		return 0, 0, errWALIndex
	}
	return ne.Uint32(b[16:]), ne.Uint32(b[96:]), nil
}

// CheckpointAt copies the WAL's committed pages back to the database file whenever it holds at
// least frames pages (4 KiB each) and some of them are not copied yet, looking every poll, on a
// connection of the pool, until ctx ends.
//
// SQLite otherwise checkpoints inside the commit that brings the WAL to wal_autocheckpoint
// pages (10,000, see dsn): that commit copies up to 40 MB before it returns, and under the
// 2,000-vehicle load an event arriving meanwhile waited for it, since SQLite has one writer
// (docs/benchmarks.md, "Monitor: publish to episode"). Here the same work, at about the same
// volume (frames below wal_autocheckpoint, so that the commit-time checkpoint stays a
// backstop), is done beside the commits: a PASSIVE checkpoint neither waits for nor blocks the
// writer or the readers, and once it has copied everything the next commit starts the WAL over.
// Unlike Checkpoint (a fixed interval), it copies a hot page — a vehicle snapshot rewritten at
// every commit — about as often as SQLite's own checkpoint did, not once per tick, so its CPU
// is the commit-time checkpoint's, moved out of the commit. It syncs the WAL before it copies
// (SQLite does so at every checkpoint), so a commit made without waiting for the disk
// (CommitUnsynced) is never copied into the database file ahead of its WAL frames.
func (db *DB) CheckpointAt(ctx context.Context, frames int, poll time.Duration) {
	if db.postgres {
		return // PostgreSQL checkpoints itself
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	var shm *os.File
	defer func() {
		if shm != nil {
			shm.Close()
		}
	}()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if shm == nil {
			f, err := os.Open(db.path + "-shm")
			if err != nil {
				continue // not there yet: SQLite creates it with the first connection in WAL mode
			}
			shm = f
		}
		mx, backfilled, err := walFrames(shm)
		if err != nil {
			continue
		}
		if mx >= uint32(frames) && backfilled < mx {
			_, _ = db.db.ExecContext(ctx, `PRAGMA wal_checkpoint(PASSIVE)`)
		}
		db.walLooks.Add(1)
	}
}
