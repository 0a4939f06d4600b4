package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base64"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/monitor/cases"
)

// Role is what a user may do (cases.Role: the roles, their order and what each includes are
// the office's, monitor/cases/roles.go).
type Role = cases.Role

// Roles (cases.Role*).
const (
	RoleViewer     = cases.RoleViewer
	RoleFiscal     = cases.RoleFiscal
	RoleSupervisor = cases.RoleSupervisor
	RoleAutoridade = cases.RoleAutoridade
	RoleAdmin      = cases.RoleAdmin
	RoleLicensee   = cases.RoleLicensee
)

// User is an account of the control room.
type User struct {
	ID        int64
	Name      string
	Role      Role
	CreatedAt time.Time
	Disabled  bool
	// Licensee is the registry id of the licensee a RoleLicensee user acts for; "" for every
	// other role.
	Licensee string
	Agent
}

// Agent is how an auto identifies the agent who issues it (cases.Agent).
type Agent = cases.Agent

// Limits of an agent's fields, in characters.
const maxAgentField = 200

func validAgent(a Agent) bool {
	for _, f := range []string{a.FullName, a.Matricula, a.Cargo} {
		if utf8.RuneCountInString(f) > maxAgentField || strings.ContainsFunc(f, unicode.IsControl) {
			return false
		}
	}
	return true
}

// ErrInvalidAgent: a full name, matrícula or cargo longer than 200 characters or with control
// characters.
var ErrInvalidAgent = errors.New("store: invalid agent identification")

// SetAgent sets the full name, matrícula and cargo of the user called name (surrounding spaces
// trimmed).
func (db *DB) SetAgent(ctx context.Context, name string, a Agent) error {
	a = Agent{FullName: strings.TrimSpace(a.FullName), Matricula: strings.TrimSpace(a.Matricula), Cargo: strings.TrimSpace(a.Cargo)}
	if !validAgent(a) {
		return fmt.Errorf("store: set agent of %q: %w", name, ErrInvalidAgent)
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		u, err := lockUser(ctx, tx, name)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET full_name = ?, matricula = ?, cargo = ? WHERE id = ?`, a.FullName, a.Matricula, a.Cargo, u.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set agent of %q: %w", name, err)
	}
	return nil
}

// nameRE is what a user name may be: it appears in URLs, logs and the audit log.
var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$`)

// ValidUserName reports whether name may name a user: 1 to 64 letters, digits and ". _ @ -",
// starting with a letter or digit. Names are unique regardless of ASCII case.
func ValidUserName(name string) bool { return nameRE.MatchString(name) }

const userColumns = `id, name, role, created_at, disabled, full_name, matricula, cargo, licensee`

type rowScanner interface{ Scan(dest ...any) error }

func scanUser(r rowScanner, extra ...any) (*User, error) {
	var u User
	var created int64
	if err := r.Scan(append([]any{&u.ID, &u.Name, &u.Role, &created, &u.Disabled, &u.FullName, &u.Matricula, &u.Cargo, &u.Licensee}, extra...)...); err != nil {
		return nil, err
	}
	u.CreatedAt = fromMillis(created)
	return &u, nil
}

// CreateUser adds an account. The name must be free (ErrExists) and valid (ErrInvalidName), the
// role valid (ErrInvalidRole) and the password of MinPasswordLen to MaxPasswordLen characters
// (ErrWeakPassword).
func (db *DB) CreateUser(ctx context.Context, name, password string, role Role) (*User, error) {
	if err := checkNewUser(name, password, role); err != nil {
		return nil, fmt.Errorf("store: create user %q: %w", name, err)
	}
	hash, err := hashPassword(password)
	if err != nil {
		return nil, fmt.Errorf("store: create user %q: %w", name, err)
	}
	var u *User
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		u, err = insertUser(ctx, tx, name, hash, role, db.now())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: create user %q: %w", name, err)
	}
	return u, nil
}

func checkNewUser(name, password string, role Role) error {
	if !ValidUserName(name) {
		return ErrInvalidName
	}
	if role == RoleLicensee {
		return fmt.Errorf("%w: a licensee's user is created with CreateLicenseeUser", ErrInvalidRole)
	}
	if !role.Valid() {
		return fmt.Errorf("%w %q", ErrInvalidRole, role)
	}
	return checkPasswordLen(password)
}

func insertUser(ctx context.Context, tx *sql.Tx, name, hash string, role Role, now time.Time) (*User, error) {
	return insertUserOf(ctx, tx, name, hash, role, "", now)
}

func insertUserOf(ctx context.Context, tx *sql.Tx, name, hash string, role Role, licensee string, now time.Time) (*User, error) {
	var n int
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE name = ?`, name).Scan(&n); err != nil {
		return nil, err
	}
	if n > 0 {
		return nil, ErrExists
	}
	row := tx.QueryRowContext(ctx, `
INSERT INTO users (name, password_hash, role, created_at, licensee) VALUES (?, ?, ?, ?, ?)
RETURNING `+userColumns, name, hash, role, millis(now), licensee)
	return scanUser(row)
}

// licenseeIDRE is what a registry licensee id may be, as far as the users table is concerned
// (the API checks that the registry knows it).
var licenseeIDRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// ErrInvalidLicensee: a licensee's user without a valid licensee id.
var ErrInvalidLicensee = errors.New("store: invalid licensee id")

// CreateLicenseeUser adds the account of a licensee's user (RoleLicensee) bound to the registry
// licensee id licensee; the name and password are checked as CreateUser checks them.
func (db *DB) CreateLicenseeUser(ctx context.Context, name, password, licensee string) (*User, error) {
	if !ValidUserName(name) {
		return nil, fmt.Errorf("store: create user %q: %w", name, ErrInvalidName)
	}
	if !licenseeIDRE.MatchString(licensee) {
		return nil, fmt.Errorf("store: create user %q: %w", name, ErrInvalidLicensee)
	}
	if err := checkPasswordLen(password); err != nil {
		return nil, fmt.Errorf("store: create user %q: %w", name, err)
	}
	hash, err := hashPassword(password)
	if err != nil {
		return nil, fmt.Errorf("store: create user %q: %w", name, err)
	}
	var u *User
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		var err error
		u, err = insertUserOf(ctx, tx, name, hash, RoleLicensee, licensee, db.now())
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("store: create user %q: %w", name, err)
	}
	return u, nil
}

// UserByName returns the user called name (ASCII case ignored), or ErrNotFound.
func (db *DB) UserByName(ctx context.Context, name string) (*User, error) {
	u, _, err := db.userAndHash(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("store: user %q: %w", name, err)
	}
	return u, nil
}

func (db *DB) userAndHash(ctx context.Context, name string) (*User, string, error) {
	var hash string
	u, err := scanUser(db.db.QueryRowContext(ctx, `SELECT `+userColumns+`, password_hash FROM users WHERE name = ?`, name), &hash)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, "", ErrNotFound
	}
	return u, hash, err
}

// ListUsers returns every user, by name.
func (db *DB) ListUsers(ctx context.Context) ([]User, error) {
	rows, err := db.db.QueryContext(ctx, `SELECT `+userColumns+` FROM users ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	defer rows.Close()
	var users []User
	for rows.Next() {
		u, err := scanUser(rows)
		if err != nil {
			return nil, fmt.Errorf("store: list users: %w", err)
		}
		users = append(users, *u)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list users: %w", err)
	}
	return users, nil
}

// CheckPassword returns the user called name if password is theirs and the account is enabled,
// and ErrInvalidCredentials otherwise — whichever the reason, and after the same work, so that
// neither the answer nor its delay tells whether the name exists.
func (db *DB) CheckPassword(ctx context.Context, name, password string) (*User, error) {
	u, hash, err := db.userAndHash(ctx, name)
	if errors.Is(err, ErrNotFound) {
		_, _, _ = verifyPassword(dummyHash(), password) // only its delay matters
		return nil, ErrInvalidCredentials
	}
	if err != nil {
		return nil, fmt.Errorf("store: check password of %q: %w", name, err)
	}
	ok, stale, err := verifyPassword(hash, password)
	if err != nil {
		return nil, fmt.Errorf("store: check password of %q: %w", name, err)
	}
	if !ok || u.Disabled {
		return nil, ErrInvalidCredentials
	}
	if stale {
		// The hash was made with older parameters: now that we know the password, replace
		// it. A failure here must not fail the login; the next one tries again.
		if h, err := hashPassword(password); err == nil {
			_, _ = db.db.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ? AND password_hash = ?`, h, u.ID, hash)
		}
	}
	return u, nil
}

// EnsureAdmin creates the admin account name with password when no enabled admin exists, as at
// the first start (from TRENZINHO_ADMIN_USER and TRENZINHO_ADMIN_PASSWORD), and reports whether it
// did. When an enabled admin exists it does nothing, whatever the arguments. With no admin and
// an empty name or password it returns ErrNoAdmin; when name is taken by a user who is not an
// enabled admin, ErrExists.
func (db *DB) EnsureAdmin(ctx context.Context, name, password string) (created bool, err error) {
	if n, err := countAdmins(ctx, db.db); err != nil {
		return false, fmt.Errorf("store: ensure admin: %w", err)
	} else if n > 0 {
		return false, nil
	}
	if name == "" || password == "" {
		return false, ErrNoAdmin
	}
	if err := checkNewUser(name, password, RoleAdmin); err != nil {
		return false, fmt.Errorf("store: ensure admin %q: %w", name, err)
	}
	hash, err := hashPassword(password)
	if err != nil {
		return false, fmt.Errorf("store: ensure admin %q: %w", name, err)
	}
	err = db.inTx(ctx, func(tx *sql.Tx) error {
		// Another process may have created one since we counted.
		n, err := countAdmins(ctx, tx)
		if err != nil || n > 0 {
			return err
		}
		_, err = insertUser(ctx, tx, name, hash, RoleAdmin, db.now())
		created = err == nil
		return err
	})
	if err != nil {
		return false, fmt.Errorf("store: ensure admin %q: %w", name, err)
	}
	return created, nil
}

type querier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

func countAdmins(ctx context.Context, q querier) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM users WHERE role = 'admin' AND disabled = 0`).Scan(&n)
	return n, err
}

// SetRole changes the role of the user called name. Demoting the last enabled admin fails with
// ErrLastAdmin.
//
// A user is made a licensee's user only at creation (CreateLicenseeUser): SetRole refuses
// RoleLicensee. Giving a licensee's user a role of the control room unbinds it from its licensee.
func (db *DB) SetRole(ctx context.Context, name string, role Role) error {
	if role == RoleLicensee {
		return fmt.Errorf("store: set role of %q: %w: a licensee's user is created as one", name, ErrInvalidRole)
	}
	if !role.Valid() {
		return fmt.Errorf("store: set role of %q: %w %q", name, ErrInvalidRole, role)
	}
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		u, err := lockUser(ctx, tx, name)
		if err != nil {
			return err
		}
		if role != RoleAdmin {
			if err := keepAnAdmin(ctx, tx, u); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET role = ?, licensee = '' WHERE id = ?`, role, u.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set role of %q: %w", name, err)
	}
	return nil
}

// SetDisabled disables or re-enables the user called name. Disabling ends the user's sessions;
// disabling the last enabled admin fails with ErrLastAdmin.
func (db *DB) SetDisabled(ctx context.Context, name string, disabled bool) error {
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		u, err := lockUser(ctx, tx, name)
		if err != nil {
			return err
		}
		if disabled {
			if err := keepAnAdmin(ctx, tx, u); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, u.ID); err != nil {
				return err
			}
		}
		_, err = tx.ExecContext(ctx, `UPDATE users SET disabled = ? WHERE id = ?`, disabled, u.ID)
		return err
	})
	if err != nil {
		return fmt.Errorf("store: set disabled of %q: %w", name, err)
	}
	return nil
}

// SetPassword replaces the password of the user called name and ends all of the user's
// sessions, so that whoever knew the old password is signed out.
func (db *DB) SetPassword(ctx context.Context, name, password string) error {
	if err := db.replacePassword(ctx, name, password, ""); err != nil {
		return fmt.Errorf("store: set password of %q: %w", name, err)
	}
	return nil
}

// ChangePassword replaces the password of the user called name, as the user does it (the caller
// has checked the current password), and ends every session of the user but the one of
// keepToken, from which the change was made: whoever else knew the old password is signed out,
// the person who changed it stays signed in.
func (db *DB) ChangePassword(ctx context.Context, name, password, keepToken string) error {
	if err := db.replacePassword(ctx, name, password, keepToken); err != nil {
		return fmt.Errorf("store: change password of %q: %w", name, err)
	}
	return nil
}

// replacePassword sets the user's password and, in the same transaction, ends every session
// of the user but keepToken's (all of them when keepToken is empty).
func (db *DB) replacePassword(ctx context.Context, name, password, keepToken string) error {
	if err := checkPasswordLen(password); err != nil {
		return err
	}
	hash, err := hashPassword(password)
	if err != nil {
		return err
	}
	return db.inTx(ctx, func(tx *sql.Tx) error {
		u, err := lockUser(ctx, tx, name)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `UPDATE users SET password_hash = ? WHERE id = ?`, hash, u.ID); err != nil {
			return err
		}
		if keepToken == "" {
			_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ?`, u.ID)
		} else {
			_, err = tx.ExecContext(ctx, `DELETE FROM sessions WHERE user_id = ? AND token_hash <> ?`, u.ID, tokenHash(keepToken))
		}
		return err
	})
}

// lockUser reads the user called name inside a write transaction.
func lockUser(ctx context.Context, tx *sql.Tx, name string) (*User, error) {
	u, err := scanUser(tx.QueryRowContext(ctx, `SELECT `+userColumns+` FROM users WHERE name = ?`, name))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return u, err
}

// keepAnAdmin fails with ErrLastAdmin when u is the only enabled admin.
func keepAnAdmin(ctx context.Context, tx *sql.Tx, u *User) error {
	if u.Role != RoleAdmin || u.Disabled {
		return nil
	}
	n, err := countAdmins(ctx, tx)
	if err != nil {
		return err
	}
	if n <= 1 {
		return ErrLastAdmin
	}
	return nil
}

// Sessions.

// sessionSeenEvery is how stale a session's last_seen may get before a request refreshes it: a
// write per request would be wasted.
const sessionSeenEvery = time.Minute

// tokenLen is the length of a session token: 32 random bytes in unpadded base64url.
var tokenLen = base64.RawURLEncoding.EncodedLen(32)

// CreateSession starts a session of the user userID that lasts ttl and returns its token, which
// the database does not keep (it keeps its SHA-256). It also forgets expired sessions.
func (db *DB) CreateSession(ctx context.Context, userID int64, ttl time.Duration) (string, error) {
	if ttl <= 0 {
		return "", fmt.Errorf("store: create session: ttl %v is not positive", ttl)
	}
	raw := make([]byte, 32)
	if _, err := rand.Read(raw); err != nil {
		return "", fmt.Errorf("store: create session: %w", err)
	}
	token := base64.RawURLEncoding.EncodeToString(raw)
	now := db.now()
	err := db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM sessions WHERE expires_at <= ?`, millis(now)); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `
INSERT INTO sessions (token_hash, user_id, created_at, expires_at, last_seen) VALUES (?, ?, ?, ?, ?)`,
			tokenHash(token), userID, millis(now), millis(now.Add(ttl)), millis(now))
		return err
	})
	if err != nil {
		return "", fmt.Errorf("store: create session of user %d: %w", userID, err)
	}
	return token, nil
}

// SessionUser returns the user of the session token if the session has not expired and the user
// is enabled, and ErrNotFound otherwise.
func (db *DB) SessionUser(ctx context.Context, token string) (*User, error) {
	if len(token) != tokenLen {
		return nil, ErrNotFound
	}
	h := tokenHash(token)
	now := db.now()
	var lastSeen int64
	u, err := scanUser(db.db.QueryRowContext(ctx, `
SELECT u.id, u.name, u.role, u.created_at, u.disabled, u.full_name, u.matricula, u.cargo, u.licensee, s.last_seen
FROM sessions s JOIN users u ON u.id = s.user_id
WHERE s.token_hash = ? AND s.expires_at > ? AND u.disabled = 0`, h, millis(now)), &lastSeen)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("store: session: %w", err)
	}
	if now.Sub(fromMillis(lastSeen)) >= sessionSeenEvery {
		// Informational only: a failure must not refuse the request.
		_, _ = db.db.ExecContext(ctx, `UPDATE sessions SET last_seen = ? WHERE token_hash = ?`, millis(now), h)
	}
	return u, nil
}

// DeleteSession ends the session token. Ending an unknown session is not an error.
func (db *DB) DeleteSession(ctx context.Context, token string) error {
	if _, err := db.db.ExecContext(ctx, `DELETE FROM sessions WHERE token_hash = ?`, tokenHash(token)); err != nil {
		return fmt.Errorf("store: delete session: %w", err)
	}
	return nil
}

func tokenHash(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// loginFailuresKept is how long a failed login is kept: longer than any throttle's window.
const loginFailuresKept = 24 * time.Hour

// RecordLoginFailure counts a failed login of key (a client address or an account) at at, for
// every monitor on the database (LoginFailures), and forgets those older than a day.
func (db *DB) RecordLoginFailure(ctx context.Context, key string, at time.Time) error {
	return db.inTx(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO login_failures (key, at) VALUES (?, ?)`, key, millis(at)); err != nil {
			return fmt.Errorf("store: login failure: %w", err)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM login_failures WHERE at < ?`, millis(at.Add(-loginFailuresKept))); err != nil {
			return fmt.Errorf("store: login failures: %w", err)
		}
		return nil
	})
}

// LoginFailures counts the failed logins of key since since, and says when the first of them
// was.
func (db *DB) LoginFailures(ctx context.Context, key string, since time.Time) (int, time.Time, error) {
	var n int
	var first sql.NullInt64
	if err := db.db.QueryRowContext(ctx, `SELECT count(*), min(at) FROM login_failures WHERE key = ? AND at >= ?`, key, millis(since)).Scan(&n, &first); err != nil {
		return 0, time.Time{}, fmt.Errorf("store: login failures: %w", err)
	}
	return n, fromMillis(first.Int64), nil
}
