package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/drafts"
)

// The ledger of the office of the auto (cases.Ledger): each act of monitor/cases runs as one
// SQLite transaction over these books. They persist what the office decides and decide
// nothing.

// Transact runs fn in one transaction (cases.Ledger).
func (db *DB) Transact(ctx context.Context, fn func(cases.Books) error) error {
	return db.inTx(ctx, func(tx *sql.Tx) error { return fn(books{db: db, tx: tx}) })
}

type books struct {
	db *DB
	tx *sql.Tx
}

func (b books) Draft(ctx context.Context, id string) (*cases.Draft, error) {
	d, err := scanDraft(b.tx.QueryRowContext(ctx, `SELECT `+draftColumns+` FROM drafts WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	return &cases.Draft{Status: d.Status, Sealed: d.Sealed, Doc: d.Doc}, nil
}

func (b books) HashAt(ctx context.Context, seq int64) (string, error) {
	var h string
	err := b.tx.QueryRowContext(ctx, `SELECT hash FROM drafts WHERE seq = ?`, seq).Scan(&h)
	if errors.Is(err, sql.ErrNoRows) {
		return "", ErrNotFound
	}
	return h, err
}

func (b books) History(ctx context.Context, licensee string) ([]*Case, error) {
	rows, err := b.tx.QueryContext(ctx, `SELECT `+caseColumns+` FROM cases WHERE licensee = ? ORDER BY offence_at, id`, licensee)
	if err != nil {
		return nil, err
	}
	var cs []*Case
	for rows.Next() {
		c, err := scanCase(rows)
		if err != nil {
			rows.Close()
			return nil, err
		}
		cs = append(cs, c)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return cs, loadEvents(ctx, b.tx, cs)
}

func (b books) NextNumber(ctx context.Context, year int) (string, error) {
	return nextNoticeNumber(ctx, b.tx, year)
}

func (b books) MarkIssued(ctx context.Context, draftID, notice, user, reason string, at time.Time) error {
	res, err := b.tx.ExecContext(ctx, `UPDATE drafts SET status = ?, notice = ?, decided_by = ?, decided_at = ?, reason = ? WHERE id = ? AND status = ?`,
		drafts.StatusIssued, notice, user, millis(at), reason, draftID, drafts.StatusDraft)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return ErrDecided
	}
	return nil
}

func (b books) Insert(ctx context.Context, c *Case) error { return b.db.insertCase(ctx, b.tx, c) }

func (b books) Case(ctx context.Context, id int64) (*Case, error) {
	return caseWhere(ctx, b.tx, `id = ?`, id)
}

func (b books) Append(ctx context.Context, c *Case, e CaseEvent) error {
	if err := insertEvent(ctx, b.tx, c.ID, e); err != nil {
		return err
	}
	_, err := b.tx.ExecContext(ctx, `UPDATE cases SET state = ?, updated_at = ? WHERE id = ?`, string(c.State), millis(c.UpdatedAt), c.ID)
	return err
}

func (b books) File(ctx context.Context, f *Filing, number func(id int64) string) error {
	if err := b.tx.QueryRowContext(ctx, `INSERT INTO filings (case_id, kind, protocolo, filed_at, day, user, remote_addr, text) VALUES (?, ?, '', ?, ?, ?, ?, ?) RETURNING id`,
		f.CaseID, f.Kind, millis(f.FiledAt), f.Day, f.User, f.RemoteAddr, f.Text).Scan(&f.ID); err != nil {
		return err
	}
	f.Protocolo = number(f.ID)
	if _, err := b.tx.ExecContext(ctx, `UPDATE filings SET protocolo = ? WHERE id = ?`, f.Protocolo, f.ID); err != nil {
		return err
	}
	for _, file := range f.Files {
		if _, err := b.tx.ExecContext(ctx, `INSERT INTO filing_files (filing_id, n, name, content_type, size, sha256, data) VALUES (?, ?, ?, ?, ?, ?, ?)`,
			f.ID, file.N, file.Name, file.ContentType, file.Size, file.SHA256, file.Data); err != nil {
			return err
		}
	}
	return nil
}

func (b books) Open(ctx context.Context, caseID int64, o *cases.Opening) error {
	_, err := b.tx.ExecContext(ctx, `INSERT INTO electronic_openings (case_id, opened_at, remote_addr, user, counted) VALUES (?, ?, ?, ?, 0)`,
		caseID, millis(o.At), o.RemoteAddr, o.User)
	return err
}

func (b books) ServePDF(ctx context.Context, caseID int64, s *cases.PDFServing) error {
	_, err := b.tx.ExecContext(ctx, `INSERT INTO pdf_servings (case_id, served_at, user, remote_addr, sha256) VALUES (?, ?, ?, ?, ?)`,
		caseID, millis(s.At), s.User, s.RemoteAddr, s.SHA256)
	return err
}

func (b books) PDFServed(ctx context.Context, caseID int64, user string) (*cases.PDFServing, error) {
	s := cases.PDFServing{User: user}
	var at int64
	err := b.tx.QueryRowContext(ctx, `SELECT served_at, remote_addr, sha256 FROM pdf_servings WHERE case_id = ? AND user = ? ORDER BY id DESC LIMIT 1`,
		caseID, user).Scan(&at, &s.RemoteAddr, &s.SHA256)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	s.At = fromMillis(at)
	return &s, nil
}

func (b books) Audit(ctx context.Context, a Actor, action, object string, before, after any) error {
	return b.db.auditTx(ctx, b.tx, a, action, object, before, after)
}

func (b books) PublicCode(ctx context.Context, draftID string) (string, error) {
	return b.db.publicCodeTx(ctx, b.tx, draftID)
}

// isUnique reports whether err is the refusal of a duplicate key: SQLite's, or PostgreSQL's
// unique_violation (SQLSTATE 23505).
func isUnique(err error) bool {
	return err != nil && (strings.Contains(err.Error(), "UNIQUE") || strings.Contains(err.Error(), "SQLSTATE 23505"))
}
