package store

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/trenzinho/trenzinho/rules"
)

// Commit writes what the rules engine changed — episodes, their new evidence, and the snapshots
// of the vehicles involved — and the judged batches verbatim, in one transaction, so that the
// engine restored from the snapshots after a crash agrees exactly with the stored episodes. A
// change to an episode that is already in a draft becomes an addendum of that draft.
func (db *DB) Commit(ctx context.Context, c *rules.Changes, batches []Batch) error {
	return db.commit(ctx, true, c, batches)
}

// CommitUnsynced is Commit without the wait for the disk: it returns once SQLite has written the
// transaction to the WAL, not once the WAL is synced. A crash of the process loses nothing; a
// power cut may lose it (never part of it), until the next Commit, whose sync covers it. The
// judge commits an episode's event this way, announces it, and acknowledges the messages only
// after the group's Commit: what a power cut takes back is redelivered and judged again.
func (db *DB) CommitUnsynced(ctx context.Context, c *rules.Changes, batches []Batch) error {
	return db.commit(ctx, false, c, batches)
}

func (db *DB) commit(ctx context.Context, synced bool, c *rules.Changes, batches []Batch) error {
	docs := make([]string, len(c.Episodes))
	for i := range c.Episodes {
		d, err := episodeDoc(&c.Episodes[i], c.Evidence[c.Episodes[i].ID])
		if err != nil {
			return err
		}
		docs[i] = d
	}
	err := db.inWriterTx(ctx, synced, func(tx *sql.Tx) error {
		for i := range c.Episodes {
			e := &c.Episodes[i]
			if err := db.upsertEpisode(ctx, tx, e, docs[i], c.Evidence[e.ID]); err != nil {
				return fmt.Errorf("episode %s: %w", e.ID, err)
			}
		}
		if err := db.addAddenda(ctx, tx, c); err != nil {
			return fmt.Errorf("addenda: %w", err)
		}
		if err := db.insertBatches(ctx, tx, batches); err != nil {
			return err
		}
		if len(c.Snapshots) == 0 {
			return nil
		}
		stmt, err := db.txStmt(ctx, tx, `
INSERT INTO vehicle_state (vehicle, snapshot, updated_at) VALUES (?, ?, ?)
ON CONFLICT (vehicle) DO UPDATE SET snapshot = excluded.snapshot, updated_at = excluded.updated_at`)
		if err != nil {
			return err
		}
		now := millis(db.now())
		for v, snap := range c.Snapshots {
			if _, err := stmt.ExecContext(ctx, v, snap, now); err != nil {
				return fmt.Errorf("vehicle %s: %w", v, err)
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("store: commit: %w", err)
	}
	return nil
}

// VehicleSnapshots returns every committed vehicle snapshot.
func (db *DB) VehicleSnapshots(ctx context.Context) ([][]byte, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT snapshot FROM vehicle_state ORDER BY vehicle`)
	if err != nil {
		return nil, fmt.Errorf("store: vehicle snapshots: %w", err)
	}
	defer rows.Close()
	var out [][]byte
	for rows.Next() {
		var s []byte
		if err := rows.Scan(&s); err != nil {
			return nil, fmt.Errorf("store: vehicle snapshots: %w", err)
		}
		out = append(out, s)
	}
	return out, rows.Err()
}
