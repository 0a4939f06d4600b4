package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"

	"github.com/trenzinho/trenzinho/monitor/cases"
)

// The licensee's portal (monitor/api/portal.go): the electronic notice's ciência and the
// defences and appeals filed online (docs/process.md).

func openingOf(ctx context.Context, q queryer, caseID int64) (*cases.Opening, error) {
	var o cases.Opening
	var at int64
	err := q.QueryRowContext(ctx, `SELECT opened_at, user, remote_addr FROM electronic_openings WHERE case_id = ?`, caseID).
		Scan(&at, &o.User, &o.RemoteAddr)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	o.At = fromMillis(at)
	return &o, nil
}

// Filing kinds (cases.Filing*).
const (
	FilingDefence = cases.FilingDefence
	FilingAppeal  = cases.FilingAppeal
)

type (
	// FilingFile is an attachment of a filing (cases.FilingFile).
	FilingFile = cases.FilingFile
	// Filing is a defence or an appeal filed online (cases.Filing).
	Filing = cases.Filing
)

// Filings lists the filings of a case, oldest first, without the attachments' data.
func (db *DB) Filings(ctx context.Context, caseID int64) ([]Filing, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT id FROM filings WHERE case_id = ? ORDER BY id`, caseID)
	if err != nil {
		return nil, fmt.Errorf("store: filings of case %d: %w", caseID, err)
	}
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, fmt.Errorf("store: filings of case %d: %w", caseID, err)
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: filings of case %d: %w", caseID, err)
	}
	out := []Filing{}
	for _, id := range ids {
		f, err := db.Filing(ctx, id, false)
		if err != nil {
			return nil, err
		}
		out = append(out, *f)
	}
	return out, nil
}

// Filing returns a filing, with its attachments' data when withData; ErrNotFound.
func (db *DB) Filing(ctx context.Context, id int64, withData bool) (*Filing, error) {
	var f Filing
	var at int64
	err := db.db.QueryRowContext(ctx, `
SELECT f.id, f.case_id, c.notice, f.kind, f.protocolo, f.filed_at, f.day, f.user, f.remote_addr, f.text
FROM filings f JOIN cases c ON c.id = f.case_id WHERE f.id = ?`, id).
		Scan(&f.ID, &f.CaseID, &f.Notice, &f.Kind, &f.Protocolo, &at, &f.Day, &f.User, &f.RemoteAddr, &f.Text)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("store: filing %d: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("store: filing %d: %w", id, err)
	}
	f.FiledAt = fromMillis(at)
	data := "NULL"
	if withData {
		data = "data"
	}
	rows, err := db.db.QueryContext(ctx, `SELECT n, name, content_type, size, sha256, `+data+` FROM filing_files WHERE filing_id = ? ORDER BY n`, id)
	if err != nil {
		return nil, fmt.Errorf("store: filing %d: %w", id, err)
	}
	defer rows.Close()
	f.Files = []FilingFile{}
	for rows.Next() {
		var ff FilingFile
		if err := rows.Scan(&ff.N, &ff.Name, &ff.ContentType, &ff.Size, &ff.SHA256, &ff.Data); err != nil {
			return nil, fmt.Errorf("store: filing %d: %w", id, err)
		}
		f.Files = append(f.Files, ff)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: filing %d: %w", id, err)
	}
	return &f, nil
}
