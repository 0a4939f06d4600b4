package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"github.com/trenzinho/trenzinho/monitor/drafts"
)

// PublicCodeBytes is the entropy of a public verification code: 15 random bytes (120 bits),
// 24 base32 characters. The code is the only key to an auto's public page, so it must not be
// guessable from the notice number, the draft id or another auto's code.
const PublicCodeBytes = 15

// publicCoding is the code's alphabet: RFC 4648 base32 in lower case without padding (no
// 0/1/8/9, nothing a URL or a person copying it by hand trips over).
var publicCoding = base32.StdEncoding.WithPadding(base32.NoPadding)

// NewPublicCode returns a fresh random public verification code.
func NewPublicCode() string {
	b := make([]byte, PublicCodeBytes)
	_, _ = rand.Read(b) // crypto/rand.Read never fails (Go ≥ 1.24)
	return strings.ToLower(publicCoding.EncodeToString(b))
}

// ValidPublicCode reports whether s has the form of a public code (it says nothing of whether
// one was issued), so that malformed requests are refused before any query.
func ValidPublicCode(s string) bool {
	if len(s) != publicCoding.EncodedLen(PublicCodeBytes) {
		return false
	}
	// Only the alphabet's lower-case letters and digits: the base32 decoder skips '\r' and
	// '\n', so a code with line breaks in it would otherwise decode to fewer bytes (found by
	// FuzzValidPublicCode).
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '2' || c > '7') {
			return false
		}
	}
	_, err := publicCoding.DecodeString(strings.ToUpper(s))
	return err == nil
}

// PublicCode returns the public verification code of an issued auto, assigning one on first
// call: the decision route calls it right after the issue, the PDF renderer before it prints
// the code (autos issued by another path or before this table existed get theirs then). It
// fails with ErrNotFound when the draft does not exist or is not an issued auto.
func (db *DB) PublicCode(ctx context.Context, draftID string) (string, error) {
	var code string
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		code, err = db.publicCodeTx(ctx, tx, draftID)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: public code of %s: %w", draftID, err)
	}
	return code, nil
}

// publicCodeTx is PublicCode inside tx.
func (db *DB) publicCodeTx(ctx context.Context, tx *sql.Tx, draftID string) (string, error) {
	var status, code string
	if err := tx.QueryRowContext(ctx, `SELECT status FROM drafts WHERE id = ?`, draftID).Scan(&status); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return "", ErrNotFound
		}
		return "", err
	}
	if status != drafts.StatusIssued {
		return "", ErrNotFound
	}
	err := tx.QueryRowContext(ctx, `SELECT code FROM public_codes WHERE draft_id = ?`, draftID).Scan(&code)
	if !errors.Is(err, sql.ErrNoRows) {
		return code, err
	}
	code = NewPublicCode()
	_, err = tx.ExecContext(ctx, `INSERT INTO public_codes (draft_id, code, created_at) VALUES (?, ?, ?)`,
		draftID, code, millis(db.now()))
	return code, err
}

// DraftByPublicCode returns the issued auto whose public code is code, or ErrNotFound.
func (db *DB) DraftByPublicCode(ctx context.Context, code string) (*DraftRecord, error) {
	var id string
	err := db.db.QueryRowContext(ctx, `SELECT draft_id FROM public_codes WHERE code = ?`, code).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: public code: %w", err)
	}
	d, err := db.DraftByID(ctx, id)
	if err != nil {
		return nil, err
	}
	if d.Status != drafts.StatusIssued {
		return nil, ErrNotFound
	}
	return d, nil
}

// RecordPublicPDF records the SHA-256 (hex) of a PDF the monitor rendered of an issued auto,
// once per distinct hash, so that an uploaded copy can be recognised later.
func (db *DB) RecordPublicPDF(ctx context.Context, draftID, sha256hex string) error {
	_, err := db.db.ExecContext(ctx, `INSERT INTO public_pdfs (draft_id, sha256, created_at) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
		draftID, sha256hex, millis(db.now()))
	if err != nil {
		return fmt.Errorf("store: record PDF of %s: %w", draftID, err)
	}
	return nil
}

// IsPublicPDF reports whether the monitor rendered a PDF of the auto with this SHA-256 (hex).
func (db *DB) IsPublicPDF(ctx context.Context, draftID, sha256hex string) (bool, error) {
	var n int
	err := db.db.QueryRowContext(ctx, `SELECT count(*) FROM public_pdfs WHERE draft_id = ? AND sha256 = ?`,
		draftID, sha256hex).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("store: PDF of %s: %w", draftID, err)
	}
	return n > 0, nil
}

// FrozenPDF returns the frozen PDF of an issued auto and its SHA-256 (hex), or ErrNotFound
// when none was frozen yet.
func (db *DB) FrozenPDF(ctx context.Context, draftID string) (pdf []byte, sha256hex string, err error) {
	err = db.db.QueryRowContext(ctx, `SELECT pdf, sha256 FROM issued_pdfs WHERE draft_id = ?`, draftID).Scan(&pdf, &sha256hex)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", ErrNotFound
	}
	if err != nil {
		return nil, "", fmt.Errorf("store: frozen PDF of %s: %w", draftID, err)
	}
	return pdf, sha256hex, nil
}

// FreezePDF keeps pdf as the issued auto's document, once: the first PDF frozen stays, and it
// is what FreezePDF returns (with its SHA-256, hex), whatever pdf a later call brings. Its hash
// is recorded as one the monitor rendered (RecordPublicPDF). ErrNotFound when the draft is not
// an issued auto.
func (db *DB) FreezePDF(ctx context.Context, draftID string, pdf []byte) ([]byte, string, error) {
	sum := sha256.Sum256(pdf)
	h := hex.EncodeToString(sum[:])
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		var status string
		if err := tx.QueryRowContext(ctx, `SELECT status FROM drafts WHERE id = ?`, draftID).Scan(&status); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return ErrNotFound
			}
			return err
		}
		if status != drafts.StatusIssued {
			return ErrNotFound
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO issued_pdfs (draft_id, sha256, pdf, created_at) VALUES (?, ?, ?, ?) ON CONFLICT (draft_id) DO NOTHING`,
			draftID, h, pdf, millis(db.now()))
		return err
	})
	if err != nil {
		return nil, "", fmt.Errorf("store: freeze PDF of %s: %w", draftID, err)
	}
	frozen, fh, err := db.FrozenPDF(ctx, draftID)
	if err != nil {
		return nil, "", err
	}
	if err := db.RecordPublicPDF(ctx, draftID, fh); err != nil {
		return nil, "", err
	}
	return frozen, fh, nil
}

// Kinds of the documents of a case's process (FreezeDocument).
const (
	DocumentReceipt  = "receipt"  // a filing's receipt; ref: the filing's id
	DocumentDecision = "decision" // a decision; ref: the seq of its event
)

// FrozenDocument returns the frozen document kind/ref of the case and its SHA-256 (hex), or
// ErrNotFound when none was frozen yet.
func (db *DB) FrozenDocument(ctx context.Context, caseID int64, kind string, ref int64) ([]byte, string, error) {
	var pdf []byte
	var sum string
	err := db.db.QueryRowContext(ctx, `SELECT pdf, sha256 FROM case_documents WHERE case_id = ? AND kind = ? AND ref = ?`, caseID, kind, ref).Scan(&pdf, &sum)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", ErrNotFound
	}
	if err != nil {
		return nil, "", fmt.Errorf("store: document %s %d of case %d: %w", kind, ref, caseID, err)
	}
	return pdf, sum, nil
}

// FreezeDocument keeps pdf as the document kind/ref of the case, once: the first one frozen
// stays, and it is what FreezeDocument returns (with its SHA-256, hex), whatever pdf a later
// call brings.
func (db *DB) FreezeDocument(ctx context.Context, caseID int64, kind string, ref int64, pdf []byte) ([]byte, string, error) {
	sum := sha256.Sum256(pdf)
	if _, err := db.db.ExecContext(ctx, `INSERT INTO case_documents (case_id, kind, ref, sha256, pdf, created_at) VALUES (?, ?, ?, ?, ?, ?)
		ON CONFLICT (case_id, kind, ref) DO NOTHING`, caseID, kind, ref, hex.EncodeToString(sum[:]), pdf, millis(db.now())); err != nil {
		return nil, "", fmt.Errorf("store: freeze document %s %d of case %d: %w", kind, ref, caseID, err)
	}
	return db.FrozenDocument(ctx, caseID, kind, ref)
}
