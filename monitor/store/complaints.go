package store

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
)

// Citizens' complaints (monitor/complaints, docs/api.md): what was complained of, where and
// when, the matching against the telemetry made at once, the moderation and the inspector's
// confirmation. The complainant's contact is personal data (LGPD): it is kept in its own
// column, never listed, erased after the profile's retention (EraseComplaintContacts) or on
// request (EraseComplaintContact); the complainant's network address is never stored.

// Complaint statuses: every complaint enters the moderation queue as pending; an inspector
// accepts it (published) or refuses it as abuse (rejected). The answer page exists from the
// start: it shows only what the telemetry says.
const (
	ComplaintPending  = "pending"
	ComplaintAccepted = "accepted"
	ComplaintRejected = "rejected"
)

// Complaint is a stored complaint.
type Complaint struct {
	ID          string    `json:"id"`
	Code        string    `json:"-"` // the key of the answer page: never listed
	CreatedAt   time.Time `json:"created_at"`
	Source      string    `json:"source"` // "form" or "156"
	ExternalRef string    `json:"external_ref,omitempty"`
	Lat         float64   `json:"lat"`
	Lon         float64   `json:"lon"`
	Address     string    `json:"address,omitempty"`
	At          time.Time `json:"at"`
	Kind        string    `json:"kind"`
	Text        string    `json:"text,omitempty"`
	// Contact is the complainant's e-mail; HasContact says whether one is held (lists show
	// only that); ContactErasedAt when it was erased, and why.
	Contact          string          `json:"contact,omitempty"`
	HasContact       bool            `json:"has_contact"`
	ContactErasedAt  *time.Time      `json:"contact_erased_at,omitempty"`
	ContactErasedWhy string          `json:"contact_erased_reason,omitempty"`
	Result           json.RawMessage `json:"result"` // complaints.Result
	Answer           []string        `json:"answer"` // the public answer (complaints.Answer)
	// Detail is the staff's reading of Result (complaints.Detail: plates, speeds), set by the
	// inspectors' routes and never stored nor shown to the public.
	Detail           []string   `json:"detail,omitempty"`
	Status           string     `json:"status"`
	ModeratedBy      string     `json:"moderated_by,omitempty"`
	ModeratedAt      *time.Time `json:"moderated_at,omitempty"`
	ModerationNote   string     `json:"moderation_note,omitempty"`
	ConfirmedVehicle string     `json:"confirmed_vehicle,omitempty"`
	EpisodeID        string     `json:"episode_id,omitempty"`
	ConfirmedBy      string     `json:"confirmed_by,omitempty"`
	ConfirmedAt      *time.Time `json:"confirmed_at,omitempty"`
	EmailSentAt      *time.Time `json:"email_sent_at,omitempty"`
}

// ComplaintCodeBytes is the entropy of the answer page's code (as PublicCodeBytes).
const ComplaintCodeBytes = PublicCodeBytes

// NewComplaintID returns a fresh complaint id.
func NewComplaintID() string {
	b := make([]byte, 8)
	_, _ = rand.Read(b)
	return "rc-" + hex.EncodeToString(b)
}

const complaintCols = `id, code, created_at, source, external_ref, lat, lon, address, at, kind, text, contact,
contact_erased_at, contact_erased_reason, result, answer, status, moderated_by, moderated_at, moderation_note,
confirmed_vehicle, episode_id, confirmed_by, confirmed_at, email_sent_at`

// AddComplaint stores a new complaint; its ID, Code and CreatedAt are set when empty.
func (db *DB) AddComplaint(ctx context.Context, c *Complaint) error {
	if c.ID == "" {
		c.ID = NewComplaintID()
	}
	if c.Code == "" {
		c.Code = NewPublicCode()
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = db.now()
	}
	if c.Status == "" {
		c.Status = ComplaintPending
	}
	answer, err := json.Marshal(c.Answer)
	if err != nil {
		return fmt.Errorf("store: complaint: %w", err)
	}
	result := c.Result
	if len(result) == 0 {
		result = json.RawMessage("null")
	}
	_, err = db.db.ExecContext(ctx, `INSERT INTO complaints (id, code, created_at, source, external_ref, lat, lon, address,
at, kind, text, contact, result, answer, status) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		c.ID, c.Code, millis(c.CreatedAt), c.Source, c.ExternalRef, c.Lat, c.Lon, c.Address, millis(c.At), c.Kind, c.Text,
		nullString(c.Contact), string(result), string(answer), c.Status)
	if err != nil {
		return fmt.Errorf("store: add complaint: %w", err)
	}
	c.HasContact = c.Contact != ""
	return nil
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func scanComplaint(r rowScanner) (*Complaint, error) {
	var c Complaint
	var created, at int64
	var contact, erasedWhy, modBy, modNote, vehicle, episode, confBy sql.NullString
	var erased, modAt, confAt, sent sql.NullInt64
	var result, answer string
	err := r.Scan(&c.ID, &c.Code, &created, &c.Source, &c.ExternalRef, &c.Lat, &c.Lon, &c.Address, &at, &c.Kind, &c.Text,
		&contact, &erased, &erasedWhy, &result, &answer, &c.Status, &modBy, &modAt, &modNote, &vehicle, &episode, &confBy, &confAt, &sent)
	if err != nil {
		return nil, err
	}
	c.CreatedAt, c.At = fromMillis(created), fromMillis(at)
	c.Contact, c.HasContact = contact.String, contact.Valid
	c.ContactErasedWhy, c.ModeratedBy, c.ModerationNote = erasedWhy.String, modBy.String, modNote.String
	c.ConfirmedVehicle, c.EpisodeID, c.ConfirmedBy = vehicle.String, episode.String, confBy.String
	opt := func(n sql.NullInt64) *time.Time {
		if !n.Valid {
			return nil
		}
		t := fromMillis(n.Int64)
		return &t
	}
	c.ContactErasedAt, c.ModeratedAt, c.ConfirmedAt, c.EmailSentAt = opt(erased), opt(modAt), opt(confAt), opt(sent)
	c.Result = json.RawMessage(result)
	if err := json.Unmarshal([]byte(answer), &c.Answer); err != nil {
		return nil, fmt.Errorf("answer: %w", err)
	}
	return &c, nil
}

// Complaint returns a complaint by id, contact included (the caller audits the read), or
// ErrNotFound.
func (db *DB) Complaint(ctx context.Context, id string) (*Complaint, error) {
	c, err := scanComplaint(db.db.QueryRowContext(ctx, `SELECT `+complaintCols+` FROM complaints WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: complaint %s: %w", id, err)
	}
	return c, nil
}

// ComplaintByCode returns the complaint of an answer page's code, or ErrNotFound.
func (db *DB) ComplaintByCode(ctx context.Context, code string) (*Complaint, error) {
	if !ValidPublicCode(code) {
		return nil, ErrNotFound
	}
	c, err := scanComplaint(db.db.QueryRowContext(ctx, `SELECT `+complaintCols+` FROM complaints WHERE code = ?`, code))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: complaint by code: %w", err)
	}
	return c, nil
}

// ComplaintFilter selects complaints; zero fields select all.
type ComplaintFilter struct {
	Status    string
	EpisodeID string
}

// Complaints lists complaints, newest first, at most limit (cursor: the last id of the previous
// page). The contact is never in a list: only HasContact.
func (db *DB) Complaints(ctx context.Context, f ComplaintFilter, limit int, cursor string) ([]Complaint, string, error) {
	var where []string
	var args []any
	if f.Status != "" {
		where = append(where, "status = ?")
		args = append(args, f.Status)
	}
	if f.EpisodeID != "" {
		where = append(where, "episode_id = ?")
		args = append(args, f.EpisodeID)
	}
	if cursor != "" {
		where = append(where, "(created_at, id) < (SELECT created_at, id FROM complaints WHERE id = ?)")
		args = append(args, cursor)
	}
	q := `SELECT ` + complaintCols + ` FROM complaints`
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	q += " ORDER BY created_at DESC, id DESC LIMIT ?"
	args = append(args, limit+1)
	rows, err := db.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, "", fmt.Errorf("store: complaints: %w", err)
	}
	defer rows.Close()
	var out []Complaint
	for rows.Next() {
		c, err := scanComplaint(rows)
		if err != nil {
			return nil, "", fmt.Errorf("store: complaints: %w", err)
		}
		c.Contact = ""
		out = append(out, *c)
	}
	if err := rows.Err(); err != nil {
		return nil, "", fmt.Errorf("store: complaints: %w", err)
	}
	next := ""
	if len(out) > limit {
		out = out[:limit]
		next = out[limit-1].ID
	}
	return out, next, nil
}

// ErrComplaintState is a change the complaint's state does not allow.
var ErrComplaintState = errors.New("store: complaint state")

// ModerateComplaint accepts or rejects a complaint of the moderation queue (or changes an
// earlier decision, unless it is confirmed against an episode).
func (db *DB) ModerateComplaint(ctx context.Context, id, status, user, note string) (*Complaint, error) {
	if status != ComplaintAccepted && status != ComplaintRejected {
		return nil, fmt.Errorf("%w: status %q", ErrComplaintState, status)
	}
	res, err := db.db.ExecContext(ctx, `UPDATE complaints SET status = ?, moderated_by = ?, moderated_at = ?, moderation_note = ?
WHERE id = ? AND episode_id IS NULL`, status, user, millis(db.now()), note, id)
	if err != nil {
		return nil, fmt.Errorf("store: moderate complaint %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := db.Complaint(ctx, id); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: already confirmed against an episode", ErrComplaintState)
	}
	return db.Complaint(ctx, id)
}

// ConfirmComplaint records that an inspector confirmed the complaint against a vehicle's
// episode: the complaint is accepted and becomes supporting evidence of the episode.
func (db *DB) ConfirmComplaint(ctx context.Context, id, vehicle, episodeID, user string) (*Complaint, error) {
	now := millis(db.now())
	res, err := db.db.ExecContext(ctx, `UPDATE complaints SET status = 'accepted', moderated_by = coalesce(moderated_by, ?),
moderated_at = coalesce(moderated_at, ?), confirmed_vehicle = ?, episode_id = ?, confirmed_by = ?, confirmed_at = ?
WHERE id = ? AND status != 'rejected'`, user, now, vehicle, episodeID, user, now, id)
	if err != nil {
		return nil, fmt.Errorf("store: confirm complaint %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		if _, err := db.Complaint(ctx, id); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: rejected in moderation", ErrComplaintState)
	}
	return db.Complaint(ctx, id)
}

// MarkComplaintEmailed records that the answer was e-mailed.
func (db *DB) MarkComplaintEmailed(ctx context.Context, id string) error {
	if _, err := db.db.ExecContext(ctx, `UPDATE complaints SET email_sent_at = ? WHERE id = ?`, millis(db.now()), id); err != nil {
		return fmt.Errorf("store: complaint %s e-mailed: %w", id, err)
	}
	return nil
}

// EraseComplaintContact erases a complaint's contact (a request of its holder, LGPD art. 18,
// VI). It reports whether there was one to erase; ErrNotFound for an unknown complaint.
func (db *DB) EraseComplaintContact(ctx context.Context, id, reason string) (bool, error) {
	res, err := db.db.ExecContext(ctx, `UPDATE complaints SET contact = NULL, contact_erased_at = ?, contact_erased_reason = ?
WHERE id = ? AND contact IS NOT NULL`, millis(db.now()), reason, id)
	if err != nil {
		return false, fmt.Errorf("store: erase complaint contact %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		return true, nil
	}
	if _, err := db.Complaint(ctx, id); err != nil {
		return false, err
	}
	return false, nil
}

// EraseComplaintContacts erases the contact of every complaint made before cutoff (the
// profile's complaints.contact_retention_days) and returns how many it erased.
func (db *DB) EraseComplaintContacts(ctx context.Context, cutoff time.Time) (int, error) {
	res, err := db.db.ExecContext(ctx, `UPDATE complaints SET contact = NULL, contact_erased_at = ?, contact_erased_reason = 'retention'
WHERE contact IS NOT NULL AND created_at < ?`, millis(db.now()), millis(cutoff))
	if err != nil {
		return 0, fmt.Errorf("store: erase complaint contacts: %w", err)
	}
	n, _ := res.RowsAffected()
	return int(n), nil
}
