package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/trenzinho/trenzinho/monitor/cases"
)

// The documents kept with a case (migration 19): the scans that prove a delivery. The office
// decides what is attached (cases.Office.Attach); the store keeps them, append-only.

func (b books) Attach(ctx context.Context, a *cases.Attachment) error {
	return b.tx.QueryRowContext(ctx, `INSERT INTO case_attachments (case_id, kind, name, content_type, size, sha256, user, uploaded_at, data)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING id`, a.CaseID, a.Kind, a.Name, a.ContentType, a.Size, a.SHA256, a.User, millis(a.At), a.Data).Scan(&a.ID)
}

func (b books) Attachment(ctx context.Context, caseID, id int64) (*cases.Attachment, error) {
	return scanAttachment(b.tx.QueryRowContext(ctx, `SELECT `+attachmentColumns+`, NULL FROM case_attachments WHERE case_id = ? AND id = ?`, caseID, id))
}

const attachmentColumns = `id, case_id, kind, name, content_type, size, sha256, user, uploaded_at`

func scanAttachment(row interface{ Scan(...any) error }) (*cases.Attachment, error) {
	var a cases.Attachment
	var at int64
	var data []byte
	err := row.Scan(&a.ID, &a.CaseID, &a.Kind, &a.Name, &a.ContentType, &a.Size, &a.SHA256, &a.User, &at, &data)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	a.At, a.Data = fromMillis(at), data
	return &a, nil
}

// CaseAttachment is the attachment id of the case caseID, with its bytes; ErrNotFound when
// the case has none such.
func (db *DB) CaseAttachment(ctx context.Context, caseID, id int64) (*cases.Attachment, error) {
	return scanAttachment(db.db.QueryRowContext(ctx, `SELECT `+attachmentColumns+`, data FROM case_attachments WHERE case_id = ? AND id = ?`, caseID, id))
}

// CaseAttachments are the attachments of the case, without their bytes, in order.
func (db *DB) CaseAttachments(ctx context.Context, caseID int64) ([]cases.Attachment, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+attachmentColumns+`, NULL FROM case_attachments WHERE case_id = ? ORDER BY id`, caseID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []cases.Attachment{}
	for rows.Next() {
		a, err := scanAttachment(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, *a)
	}
	return out, rows.Err()
}
