package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestUsers(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)

	u, err := db.CreateUser(ctx, "maria", "senha-secreta", RoleFiscal)
	if err != nil {
		t.Fatal(err)
	}
	if u.ID == 0 || u.Name != "maria" || u.Role != RoleFiscal || u.Disabled || u.CreatedAt.IsZero() {
		t.Errorf("created %+v", u)
	}
	if _, err := db.CreateUser(ctx, "MARIA", "outra-senha", RoleViewer); !errors.Is(err, ErrExists) {
		t.Errorf("same name in other case: %v, want ErrExists", err)
	}
	for _, c := range []struct {
		name, password string
		role           Role
		want           error
	}{
		{"", "senha-secreta", RoleViewer, ErrInvalidName},
		{"a b", "senha-secreta", RoleViewer, ErrInvalidName},
		{"-x", "senha-secreta", RoleViewer, ErrInvalidName},
		{strings.Repeat("a", 65), "senha-secreta", RoleViewer, ErrInvalidName},
		{"joao", "senha-secreta", "root", ErrInvalidRole},
		{"joao", "curta", RoleViewer, ErrWeakPassword},
		{"joao", strings.Repeat("x", MaxPasswordLen+1), RoleViewer, ErrWeakPassword},
	} {
		if _, err := db.CreateUser(ctx, c.name, c.password, c.role); !errors.Is(err, c.want) {
			t.Errorf("CreateUser(%q, %q, %q) = %v, want %v", c.name, c.password, c.role, err, c.want)
		}
	}

	got, err := db.UserByName(ctx, "Maria")
	if err != nil || got.ID != u.ID {
		t.Errorf("UserByName(Maria) = %+v, %v", got, err)
	}
	if _, err := db.UserByName(ctx, "ninguem"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown user: %v, want ErrNotFound", err)
	}

	if got, err := db.CheckPassword(ctx, "maria", "senha-secreta"); err != nil || got.ID != u.ID {
		t.Errorf("right password: %+v, %v", got, err)
	}
	for _, c := range [][2]string{{"maria", "senha-errada"}, {"ninguem", "senha-secreta"}, {"maria", ""}} {
		if _, err := db.CheckPassword(ctx, c[0], c[1]); !errors.Is(err, ErrInvalidCredentials) {
			t.Errorf("CheckPassword(%q, %q) = %v, want ErrInvalidCredentials", c[0], c[1], err)
		}
	}

	if err := db.SetRole(ctx, "maria", RoleSupervisor); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRole(ctx, "maria", "chefe"); !errors.Is(err, ErrInvalidRole) {
		t.Errorf("invalid role: %v", err)
	}
	if err := db.SetRole(ctx, "ninguem", RoleViewer); !errors.Is(err, ErrNotFound) {
		t.Errorf("role of unknown user: %v", err)
	}
	if got, _ := db.UserByName(ctx, "maria"); got.Role != RoleSupervisor {
		t.Errorf("role %q after SetRole", got.Role)
	}

	if err := db.SetPassword(ctx, "maria", "nova-senha-123"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CheckPassword(ctx, "maria", "senha-secreta"); !errors.Is(err, ErrInvalidCredentials) {
		t.Errorf("old password still works: %v", err)
	}
	if _, err := db.CheckPassword(ctx, "maria", "nova-senha-123"); err != nil {
		t.Errorf("new password: %v", err)
	}
	if err := db.SetPassword(ctx, "maria", "curta"); !errors.Is(err, ErrWeakPassword) {
		t.Errorf("short password: %v", err)
	}

	if err := db.SetDisabled(ctx, "maria", true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CheckPassword(ctx, "maria", "nova-senha-123"); !errors.Is(err, ErrInvalidCredentials) {
		t.Errorf("disabled user signs in: %v", err)
	}
	if err := db.SetDisabled(ctx, "maria", false); err != nil {
		t.Fatal(err)
	}
	if _, err := db.CheckPassword(ctx, "maria", "nova-senha-123"); err != nil {
		t.Errorf("re-enabled user: %v", err)
	}

	if _, err := db.CreateUser(ctx, "ana", "senha-da-ana", RoleViewer); err != nil {
		t.Fatal(err)
	}
	users, err := db.ListUsers(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(users) != 2 || users[0].Name != "ana" || users[1].Name != "maria" {
		t.Errorf("ListUsers = %+v", users)
	}
}

func TestEnsureAdminAndLastAdmin(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)

	if _, err := db.EnsureAdmin(ctx, "", ""); !errors.Is(err, ErrNoAdmin) {
		t.Fatalf("no admin, no account given: %v, want ErrNoAdmin", err)
	}
	if _, err := db.EnsureAdmin(ctx, "admin", "curta"); !errors.Is(err, ErrWeakPassword) {
		t.Errorf("weak admin password: %v", err)
	}
	created, err := db.EnsureAdmin(ctx, "admin", "admin-senha-forte")
	if err != nil || !created {
		t.Fatalf("EnsureAdmin = %v, %v", created, err)
	}
	// Later starts change nothing, whatever the environment says.
	created, err = db.EnsureAdmin(ctx, "admin", "outra-senha-forte")
	if err != nil || created {
		t.Errorf("second EnsureAdmin = %v, %v", created, err)
	}
	if _, err := db.CheckPassword(ctx, "admin", "admin-senha-forte"); err != nil {
		t.Errorf("the first password must stay: %v", err)
	}
	if created, err := db.EnsureAdmin(ctx, "", ""); err != nil || created {
		t.Errorf("EnsureAdmin with an admin and no account = %v, %v", created, err)
	}

	if err := db.SetRole(ctx, "admin", RoleViewer); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("demote last admin: %v, want ErrLastAdmin", err)
	}
	if err := db.SetDisabled(ctx, "admin", true); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("disable last admin: %v, want ErrLastAdmin", err)
	}
	if _, err := db.CreateUser(ctx, "chefe", "senha-do-chefe", RoleAdmin); err != nil {
		t.Fatal(err)
	}
	if err := db.SetDisabled(ctx, "admin", true); err != nil {
		t.Errorf("disable one of two admins: %v", err)
	}
	if err := db.SetRole(ctx, "chefe", RoleFiscal); !errors.Is(err, ErrLastAdmin) {
		t.Errorf("demote the last enabled admin: %v, want ErrLastAdmin", err)
	}
}

func TestEnsureAdminNameTaken(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	if _, err := db.CreateUser(ctx, "admin", "senha-qualquer", RoleViewer); err != nil {
		t.Fatal(err)
	}
	if _, err := db.EnsureAdmin(ctx, "admin", "admin-senha-forte"); !errors.Is(err, ErrExists) {
		t.Errorf("EnsureAdmin over a viewer: %v, want ErrExists", err)
	}
	if u, _ := db.UserByName(ctx, "admin"); u.Role != RoleViewer {
		t.Errorf("the viewer became %q", u.Role)
	}
}

func TestRoles(t *testing.T) {
	order := []Role{RoleViewer, RoleFiscal, RoleSupervisor, RoleAutoridade, RoleAdmin}
	for i, r := range order {
		for j, min := range order {
			if got := r.AtLeast(min); got != (i >= j) {
				t.Errorf("%s.AtLeast(%s) = %v", r, min, got)
			}
		}
	}
	if Role("").AtLeast(RoleViewer) || Role("root").AtLeast(RoleViewer) {
		t.Error("an invalid role includes viewer")
	}
	// The licensee's role is outside the order: it includes none, none includes it.
	if !RoleLicensee.Valid() {
		t.Error("licensee is not a valid role")
	}
	for _, r := range order {
		if RoleLicensee.AtLeast(r) || r.AtLeast(RoleLicensee) {
			t.Errorf("licensee and %s are ordered", r)
		}
	}
	if RoleLicensee.AtLeast(RoleLicensee) || Role("").AtLeast(Role("")) {
		t.Error("a role outside the order includes itself")
	}
}

func TestPasswordRehash(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	saved := currentParams
	t.Cleanup(func() { currentParams = saved })
	currentParams = argonParams{memory: 1024, time: 1, threads: 1, keyLen: 32}
	if _, err := db.CreateUser(ctx, "maria", "senha-secreta", RoleFiscal); err != nil {
		t.Fatal(err)
	}
	currentParams = saved
	if _, err := db.CheckPassword(ctx, "maria", "senha-secreta"); err != nil {
		t.Fatal(err)
	}
	_, hash, err := db.userAndHash(ctx, "maria")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(hash, "$m=19456,t=2,p=1$") {
		t.Errorf("hash not upgraded at login: %s", hash)
	}
	if _, err := db.CheckPassword(ctx, "maria", "senha-secreta"); err != nil {
		t.Errorf("password after rehash: %v", err)
	}
}

func TestSessions(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	fakeClock(db, &now)

	u, err := db.CreateUser(ctx, "maria", "senha-secreta", RoleFiscal)
	if err != nil {
		t.Fatal(err)
	}
	token, err := db.CreateSession(ctx, u.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if len(token) != 43 {
		t.Errorf("token %q: want 43 characters of base64url", token)
	}
	got, err := db.SessionUser(ctx, token)
	if err != nil || got.ID != u.ID || got.Role != RoleFiscal {
		t.Fatalf("SessionUser = %+v, %v", got, err)
	}

	// The database keeps no trace of the token itself.
	var stored []byte
	if err := db.db.QueryRowContext(ctx, `SELECT token_hash FROM sessions`).Scan(&stored); err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(stored, []byte(token)) || len(stored) != 32 {
		t.Errorf("stored %x for token %q; want its SHA-256", stored, token)
	}

	for _, bad := range []string{"", "x", token[:42] + "A", strings.ToUpper(token)} {
		if bad == token {
			continue
		}
		if _, err := db.SessionUser(ctx, bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("SessionUser(%q) = %v, want ErrNotFound", bad, err)
		}
	}

	// last_seen follows use, at most once a minute.
	now = now.Add(2 * time.Minute)
	if _, err := db.SessionUser(ctx, token); err != nil {
		t.Fatal(err)
	}
	var lastSeen int64
	if err := db.db.QueryRowContext(ctx, `SELECT last_seen FROM sessions`).Scan(&lastSeen); err != nil {
		t.Fatal(err)
	}
	if lastSeen != millis(now) {
		t.Errorf("last_seen %v, want %v", fromMillis(lastSeen), now)
	}

	// Expiry.
	now = now.Add(time.Hour)
	if _, err := db.SessionUser(ctx, token); !errors.Is(err, ErrNotFound) {
		t.Errorf("expired session: %v, want ErrNotFound", err)
	}
	// A new session sweeps the expired ones.
	token2, err := db.CreateSession(ctx, u.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := db.db.QueryRowContext(ctx, `SELECT count(*) FROM sessions`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Errorf("%d sessions stored, want 1 (the expired one swept)", n)
	}

	if err := db.DeleteSession(ctx, token2); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SessionUser(ctx, token2); !errors.Is(err, ErrNotFound) {
		t.Errorf("deleted session: %v", err)
	}
	if err := db.DeleteSession(ctx, token2); err != nil {
		t.Errorf("deleting twice: %v", err)
	}

	// Disabling a user and changing a password end the sessions.
	t3, _ := db.CreateSession(ctx, u.ID, time.Hour)
	if err := db.SetPassword(ctx, "maria", "nova-senha-123"); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SessionUser(ctx, t3); !errors.Is(err, ErrNotFound) {
		t.Errorf("session after password change: %v", err)
	}
	t4, _ := db.CreateSession(ctx, u.ID, time.Hour)
	if err := db.SetDisabled(ctx, "maria", true); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SessionUser(ctx, t4); !errors.Is(err, ErrNotFound) {
		t.Errorf("session of disabled user: %v", err)
	}
	if _, err := db.CreateSession(ctx, u.ID, 0); err == nil {
		t.Error("CreateSession with ttl 0")
	}
}

func TestAudit(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC)
	fakeClock(db, &now)

	for i := range 25 {
		e := AuditEntry{User: "admin", Action: "user.update", Object: "user:maria", RemoteAddr: "192.0.2.1:5000",
			Before: json.RawMessage(`{"role":"viewer"}`), After: json.RawMessage(`{"role":"fiscal"}`)}
		if i%5 == 0 {
			e = AuditEntry{Action: "login_failed", Object: "user:x", RemoteAddr: "192.0.2.9:1"}
		}
		if err := db.Audit(ctx, e); err != nil {
			t.Fatal(err)
		}
		now = now.Add(time.Second)
	}
	if err := db.Audit(ctx, AuditEntry{Action: "x", After: json.RawMessage(`{bad`)}); err == nil {
		t.Error("invalid JSON accepted")
	}

	// Append-only.
	if _, err := db.db.ExecContext(ctx, `UPDATE audit SET user = 'mallory'`); err == nil {
		t.Error("audit row updated")
	}
	if _, err := db.db.ExecContext(ctx, `DELETE FROM audit`); err == nil {
		t.Error("audit row deleted")
	}

	var all []AuditEntry
	cursor := ""
	for pages := 0; ; pages++ {
		if pages > 10 {
			t.Fatal("pagination does not end")
		}
		items, next, err := db.ListAudit(ctx, AuditFilter{}, 10, cursor)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, items...)
		if next == "" {
			break
		}
		cursor = next
	}
	if len(all) != 25 {
		t.Fatalf("%d entries over the pages, want 25", len(all))
	}
	for i := 1; i < len(all); i++ {
		if all[i].ID >= all[i-1].ID {
			t.Fatalf("not newest first at %d", i)
		}
	}
	last := all[0]
	if last.User != "admin" || string(last.After) != `{"role":"fiscal"}` || last.RemoteAddr != "192.0.2.1:5000" ||
		!last.Time.Equal(now.Add(-time.Second)) {
		t.Errorf("newest entry %+v", last)
	}

	failed, _, err := db.ListAudit(ctx, AuditFilter{Action: "login_failed"}, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(failed) != 5 || failed[0].Before != nil {
		t.Errorf("%d failed logins, want 5 (%+v)", len(failed), failed)
	}
	if _, _, err := db.ListAudit(ctx, AuditFilter{}, 10, "!!"); !errors.Is(err, ErrBadCursor) {
		t.Errorf("bad cursor: %v", err)
	}
}

// Migration 6 rebuilds the users table (full name, matrícula, cargo; the role autoridade):
// accounts, their ids and their sessions survive it.
func TestMigrationAgentKeepsUsersAndSessions(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "monitor.db")
	all := migrations
	migrations = all[:4]
	db, err := Open(ctx, path)
	if err != nil {
		migrations = all
		t.Fatal(err)
	}
	// The old schema, as a database in the field has it.
	var id int64
	err = db.db.QueryRowContext(ctx, `INSERT INTO users (name, password_hash, role, created_at) VALUES ('joao', 'x', 'fiscal', 0) RETURNING id`).Scan(&id)
	if err == nil {
		_, err = db.db.ExecContext(ctx, `INSERT INTO users (name, password_hash, role, created_at) VALUES ('chefe', 'x', 'autoridade', 0)`)
	}
	migrations = all
	if err == nil || !strings.Contains(strings.ToUpper(err.Error()), "CHECK") {
		t.Fatalf("autoridade before migration 6: %v", err)
	}
	token, err := db.CreateSession(ctx, id, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	db.Close()

	db, err = Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	got, err := db.SessionUser(ctx, token)
	if err != nil || got.ID != id || got.Name != "joao" || got.Role != RoleFiscal || got.Agent != (Agent{}) {
		t.Fatalf("session after migration: %+v %v", got, err)
	}
	if _, err := db.CreateUser(ctx, "chefe", "senha-do-chefe", RoleAutoridade); err != nil {
		t.Fatal(err)
	}
	a := Agent{FullName: " João da Silva ", Matricula: "12.345-6", Cargo: "Agente de Fiscalização de Posturas"}
	if err := db.SetAgent(ctx, "joao", a); err != nil {
		t.Fatal(err)
	}
	got, _ = db.UserByName(ctx, "joao")
	if got.FullName != "João da Silva" || got.Matricula != "12.345-6" || !got.Complete() {
		t.Fatalf("agent %+v", got.Agent)
	}
	if err := db.SetAgent(ctx, "joao", Agent{FullName: "a\x00b"}); !errors.Is(err, ErrInvalidAgent) {
		t.Fatalf("control character: %v", err)
	}
	if err := db.SetAgent(ctx, "ninguem", a); !errors.Is(err, ErrNotFound) {
		t.Fatalf("unknown user: %v", err)
	}
}

// TestLicenseeUsers: a licensee's user is created bound to a licensee and only so; it keeps its
// licensee through sessions; SetRole never makes one, and unbinds one given a staff role.
func TestLicenseeUsers(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	if _, err := db.CreateUser(ctx, "orla", "senha-da-orla", RoleLicensee); !errors.Is(err, ErrInvalidRole) {
		t.Errorf("CreateUser with the licensee role: %v", err)
	}
	for _, bad := range []string{"", " L1", "L1;drop", strings.Repeat("x", 65)} {
		if _, err := db.CreateLicenseeUser(ctx, "orla", "senha-da-orla", bad); !errors.Is(err, ErrInvalidLicensee) {
			t.Errorf("licensee %q: %v", bad, err)
		}
	}
	u, err := db.CreateLicenseeUser(ctx, "orla", "senha-da-orla", "L1")
	if err != nil || u.Role != RoleLicensee || u.Licensee != "L1" {
		t.Fatalf("create: %+v %v", u, err)
	}
	if _, err := db.CreateLicenseeUser(ctx, "ORLA", "senha-da-orla", "L2"); !errors.Is(err, ErrExists) {
		t.Errorf("same name: %v", err)
	}
	u, err = db.CheckPassword(ctx, "orla", "senha-da-orla")
	if err != nil || u.Licensee != "L1" {
		t.Fatalf("login: %+v %v", u, err)
	}
	token, err := db.CreateSession(ctx, u.ID, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if s, err := db.SessionUser(ctx, token); err != nil || s.Role != RoleLicensee || s.Licensee != "L1" {
		t.Fatalf("session: %+v %v", s, err)
	}
	if _, err := db.CreateUser(ctx, "maria", "senha-da-maria", RoleViewer); err != nil {
		t.Fatal(err)
	}
	if err := db.SetRole(ctx, "maria", RoleLicensee); !errors.Is(err, ErrInvalidRole) {
		t.Errorf("SetRole licensee: %v", err)
	}
	if err := db.SetRole(ctx, "orla", RoleViewer); err != nil {
		t.Fatal(err)
	}
	if u, _ := db.UserByName(ctx, "orla"); u.Role != RoleViewer || u.Licensee != "" {
		t.Errorf("a licensee's user made viewer: %+v", u)
	}
	// The table refuses a licensee without a licensee, and a staff user with one.
	if _, err := db.db.ExecContext(ctx, `UPDATE users SET licensee = 'L1' WHERE name = 'maria'`); err == nil || !strings.Contains(strings.ToUpper(err.Error()), "CHECK") {
		t.Errorf("a viewer bound to a licensee: %v", err)
	}
}

// TestChangePassword: a user's own change ends the user's other sessions, keeps the one it was
// made from and leaves other users' sessions alone; the new password logs in, the old does not.
func TestChangePassword(t *testing.T) {
	ctx := context.Background()
	db := openTemp(t)
	maria, err := db.CreateUser(ctx, "maria", "senha-antiga-1", RoleFiscal)
	if err != nil {
		t.Fatal(err)
	}
	joao, err := db.CreateUser(ctx, "joao", "senha-do-joao", RoleViewer)
	if err != nil {
		t.Fatal(err)
	}
	here, _ := db.CreateSession(ctx, maria.ID, time.Hour)
	elsewhere, _ := db.CreateSession(ctx, maria.ID, time.Hour)
	other, _ := db.CreateSession(ctx, joao.ID, time.Hour)

	if err := db.ChangePassword(ctx, "maria", "curta", here); !errors.Is(err, ErrWeakPassword) {
		t.Errorf("short password: %v, want ErrWeakPassword", err)
	}
	if _, err := db.SessionUser(ctx, elsewhere); err != nil {
		t.Errorf("a refused change ended a session: %v", err)
	}
	if err := db.ChangePassword(ctx, "ninguem", "senha-nova-123", here); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown user: %v, want ErrNotFound", err)
	}
	if err := db.ChangePassword(ctx, "maria", "senha-nova-123", here); err != nil {
		t.Fatal(err)
	}
	if u, err := db.SessionUser(ctx, here); err != nil || u.Name != "maria" {
		t.Errorf("the session the change came from: %v %v, want kept", u, err)
	}
	if _, err := db.SessionUser(ctx, elsewhere); !errors.Is(err, ErrNotFound) {
		t.Errorf("maria's other session: %v, want ended", err)
	}
	if _, err := db.SessionUser(ctx, other); err != nil {
		t.Errorf("joao's session: %v, want untouched", err)
	}
	if _, err := db.CheckPassword(ctx, "maria", "senha-antiga-1"); !errors.Is(err, ErrInvalidCredentials) {
		t.Errorf("old password: %v, want ErrInvalidCredentials", err)
	}
	if _, err := db.CheckPassword(ctx, "maria", "senha-nova-123"); err != nil {
		t.Errorf("new password: %v", err)
	}
}
