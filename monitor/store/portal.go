package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The licensee's portal (monitor/api/portal.go): the electronic notice's ciência and the
// defences and appeals filed online (docs/process.md).

func openingOf(ctx context.Context, q queryer, caseID int64) (*cases.Opening, error) {
	var o cases.Opening
	var at int64
	err := q.QueryRowContext(ctx, `SELECT opened_at, user, remote_addr, counted FROM electronic_openings WHERE case_id = ?`, caseID).
		Scan(&at, &o.User, &o.RemoteAddr, &o.Counted)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	o.At = fromMillis(at)
	return &o, nil
}

// OpenInPortal records that the licensee's user actor opened the case's auto in the portal at
// now, the server's time. Only the first opening is recorded; when the profile enables the
// electronic notice and the auto waits for it (cases.Case.OpeningCounts), that opening is the
// ciência: the case is notified (mode electronic) on its day, in the same transaction. Both are
// audited (case.opened, case.notify). It returns the case as it is after.
func (db *DB) OpenInPortal(ctx context.Context, id int64, p *profile.Profile, now time.Time, actor Actor) (*Case, error) {
	var out *Case
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		c, err := caseWhere(ctx, tx, `id = ?`, id)
		if err != nil {
			return err
		}
		if c.Opening != nil {
			out = c
			return nil
		}
		o := &cases.Opening{At: fromMillis(millis(now)), User: actor.User, RemoteAddr: actor.RemoteAddr, Counted: c.OpeningCounts(p, now)}
		if _, err := tx.ExecContext(ctx, `INSERT INTO electronic_openings (case_id, opened_at, remote_addr, user, counted) VALUES (?, ?, ?, ?, ?)`,
			c.ID, millis(now), o.RemoteAddr, o.User, o.Counted); err != nil {
			return err
		}
		if err := db.auditTx(ctx, tx, actor, "case.opened", "case:"+c.Notice, nil, o); err != nil {
			return err
		}
		if o.Counted {
			a := CaseAction{Action: ActionNotify, Mode: penalty.ModeElectronic, Date: cases.DayOf(now, p.Location()),
				Note: "Ciência da notificação eletrônica pelo portal do permissionário (" + p.Notification.ElectronicAct + ")."}
			if _, c, err = db.caseActTx(ctx, tx, id, a, p, now, actor); err != nil {
				return err
			}
		}
		c.Opening = o
		out = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("store: open case %d in the portal: %w", id, err)
	}
	return out, nil
}

// Filing kinds.
const (
	FilingDefence = cases.ActionDefence
	FilingAppeal  = cases.ActionAppeal
)

// FilingFile is an attachment of a filing.
type FilingFile struct {
	N           int    `json:"n"`
	Name        string `json:"name"`
	ContentType string `json:"content_type"`
	Size        int64  `json:"size"`
	SHA256      string `json:"sha256"` // hex
	Data        []byte `json:"-"`
}

// Filing is a defence or an appeal filed online.
type Filing struct {
	ID         int64        `json:"id"`
	CaseID     int64        `json:"case_id"`
	Notice     string       `json:"notice"`
	Kind       string       `json:"kind"`
	Protocolo  string       `json:"protocolo"`
	FiledAt    time.Time    `json:"filed_at"`
	Day        string       `json:"day"` // the day of filing in the profile's time zone
	User       string       `json:"user"`
	RemoteAddr string       `json:"-"`
	Text       string       `json:"text"`
	Files      []FilingFile `json:"files"`
}

// FileOnline files a defence (kind FilingDefence) or an appeal (FilingAppeal) on the case at now,
// the server's time: the case act (defence or appeal, on the day of now; checked as every act),
// the filing with its protocolo and attachments, and the audit entries, in one transaction. The
// attachments' SHA256 and Size are computed here. A *CaseError when the case does not admit it.
func (db *DB) FileOnline(ctx context.Context, id int64, kind, text string, files []FilingFile, p *profile.Profile, now time.Time, actor Actor) (*Filing, *Case, error) {
	action := map[string]string{FilingDefence: ActionDefence, FilingAppeal: ActionAppeal}[kind]
	if action == "" {
		return nil, nil, fmt.Errorf("store: file on case %d: unknown kind %q", id, kind)
	}
	var f *Filing
	var after *Case
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		day := cases.DayOf(now, p.Location())
		res, err := tx.ExecContext(ctx, `INSERT INTO filings (case_id, kind, protocolo, filed_at, day, user, remote_addr, text) VALUES (?, ?, '', ?, ?, ?, ?, ?)`,
			id, kind, millis(now), day, actor.User, actor.RemoteAddr, text)
		if err != nil {
			return err
		}
		fid, err := res.LastInsertId()
		if err != nil {
			return err
		}
		prot := fmt.Sprintf("PROT-%d/%06d", now.In(p.Location()).Year(), fid)
		if _, err := tx.ExecContext(ctx, `UPDATE filings SET protocolo = ? WHERE id = ?`, prot, fid); err != nil {
			return err
		}
		word := map[string]string{FilingDefence: "Defesa", FilingAppeal: "Recurso"}[kind]
		a := CaseAction{Action: action, Date: day, Note: word + " apresentada pelo portal do permissionário, protocolo " + prot + "."}
		if _, after, err = db.caseActTx(ctx, tx, id, a, p, now, actor); err != nil {
			return err
		}
		f = &Filing{ID: fid, CaseID: id, Notice: after.Notice, Kind: kind, Protocolo: prot, FiledAt: fromMillis(millis(now)), Day: day,
			User: actor.User, RemoteAddr: actor.RemoteAddr, Text: text}
		for i, file := range files {
			file.N, file.Size, file.SHA256 = i+1, int64(len(file.Data)), sha256Hex(file.Data)
			if _, err := tx.ExecContext(ctx, `INSERT INTO filing_files (filing_id, n, name, content_type, size, sha256, data) VALUES (?, ?, ?, ?, ?, ?, ?)`,
				fid, file.N, file.Name, file.ContentType, file.Size, file.SHA256, file.Data); err != nil {
				return err
			}
			file.Data = nil
			f.Files = append(f.Files, file)
		}
		if f.Files == nil {
			f.Files = []FilingFile{}
		}
		return db.auditTx(ctx, tx, actor, "case.filing", "case:"+after.Notice, nil, f)
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store: file %s on case %d: %w", kind, id, err)
	}
	return f, after, nil
}

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

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
