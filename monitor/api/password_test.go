package api_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/monitor/store"
)

// changePassword posts POST /api/v1/me/password and returns the status and the error message.
func (f *fixture) changePassword(auth session, current, next string) (int, string) {
	f.t.Helper()
	code, body, _ := f.do("POST", "/api/v1/me/password", map[string]string{"current": current, "new": next}, auth)
	if code >= 400 {
		return code, errorMessage(f.t, body)
	}
	return code, ""
}

// TestChangeOwnPassword: a signed-in user changes their own password with the current one; a
// wrong current password, a short new one and the same one again are refused (pt-BR) and change
// nothing; on success the new password logs in and the old does not, the user's other session
// ends, the one the change came from stays, and the audit says so without either password.
func TestChangeOwnPassword(t *testing.T) {
	f := newFixture(t, nil)
	ctx := context.Background()
	here, _ := f.login("maria", viewerPassword)
	_, elsewhere := f.login("maria", viewerPassword)
	_, admin := f.login("admin", adminPassword)
	const next = "nova-senha-da-maria"

	for _, c := range []struct {
		name, current, next string
		code                int
		msg                 string
	}{
		{"wrong current", "senha-errada-1", next, http.StatusForbidden, "senha atual incorreta"},
		{"too short", viewerPassword, "curta", http.StatusBadRequest, "a senha deve ter de 8 a 256 caracteres"},
		{"too long", viewerPassword, strings.Repeat("x", store.MaxPasswordLen+1), http.StatusBadRequest, "a senha deve ter de 8 a 256 caracteres"},
		{"same as current", viewerPassword, viewerPassword, http.StatusBadRequest, "a nova senha deve ser diferente da atual"},
		{"no current", "", next, http.StatusBadRequest, "informe a senha atual e a nova senha"},
	} {
		if code, msg := f.changePassword(session{cookie: here}, c.current, c.next); code != c.code || msg != c.msg {
			t.Errorf("%s: %d %q, want %d %q", c.name, code, msg, c.code, c.msg)
		}
	}
	if code, _, _ := f.do("POST", "/api/v1/me/password", `{"current":"x","new":"y","extra":1}`, session{cookie: here}); code != http.StatusBadRequest {
		t.Errorf("unknown field: %d, want 400", code)
	}
	if code, _, _ := f.do("POST", "/api/v1/me/password", `{"current":"`+strings.Repeat("x", 70<<10)+`"}`, session{cookie: here}); code != http.StatusRequestEntityTooLarge {
		t.Errorf("huge body: %d, want 413", code)
	}
	if code, _ := f.changePassword(session{}, viewerPassword, next); code != http.StatusUnauthorized {
		t.Errorf("without a session: %d, want 401", code)
	}
	// Nothing changed by the refusals.
	if code, _, _ := f.do("GET", "/api/v1/vehicles", nil, session{bearer: elsewhere}); code != http.StatusOK {
		t.Errorf("the other session after refused changes: %d, want 200", code)
	}
	if _, err := f.db.CheckPassword(ctx, "maria", viewerPassword); err != nil {
		t.Errorf("the password after refused changes: %v", err)
	}

	if code, msg := f.changePassword(session{cookie: here}, viewerPassword, next); code != http.StatusOK {
		t.Fatalf("change: %d %q", code, msg)
	}
	if code, _, _ := f.do("GET", "/api/v1/vehicles", nil, session{cookie: here}); code != http.StatusOK {
		t.Errorf("the session the change came from: %d, want 200", code)
	}
	if code, _, _ := f.do("GET", "/api/v1/vehicles", nil, session{bearer: elsewhere}); code != http.StatusUnauthorized {
		t.Errorf("maria's other session after the change: %d, want 401", code)
	}
	if code, _, _ := f.do("GET", "/api/v1/vehicles", nil, session{bearer: admin}); code != http.StatusOK {
		t.Errorf("another user's session after the change: %d, want 200", code)
	}
	if code, _, _ := f.do("POST", "/api/v1/login", map[string]string{"user": "maria", "password": viewerPassword}, session{}); code != http.StatusUnauthorized {
		t.Errorf("login with the old password: %d, want 401", code)
	}
	f.login("maria", next)

	entries, _, err := f.db.ListAudit(ctx, store.AuditFilter{Object: "user:maria"}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	changed, failed := 0, 0
	for _, e := range entries {
		switch e.Action {
		case "user.password_change":
			changed++
			if e.User != "maria" {
				t.Errorf("change audited as %q, want maria", e.User)
			}
		case "user.password_change_failed":
			failed++
		}
		b, _ := json.Marshal(e)
		for _, p := range []string{viewerPassword, next, "senha-errada-1"} {
			if strings.Contains(string(b), p) {
				t.Errorf("audit entry %s holds a password", b)
			}
		}
	}
	if changed != 1 || failed != 1 {
		t.Errorf("audit: %d changes and %d wrong current passwords, want 1 and 1", changed, failed)
	}
}

// TestChangeOwnPasswordLicensee: a licensee's user, whom requireRole admits nowhere, changes
// their own password too.
func TestChangeOwnPasswordLicensee(t *testing.T) {
	f := newFixture(t, nil)
	if _, err := f.db.CreateLicenseeUser(context.Background(), "transalegria", "senha-da-empresa", "L1"); err != nil {
		t.Fatal(err)
	}
	_, tok := f.login("transalegria", "senha-da-empresa")
	if code, msg := f.changePassword(session{bearer: tok}, "senha-da-empresa", "outra-senha-da-empresa"); code != http.StatusOK {
		t.Fatalf("licensee's change: %d %q", code, msg)
	}
	if code, _, _ := f.do("POST", "/api/v1/logout", nil, session{bearer: tok}); code != http.StatusOK {
		t.Errorf("the licensee's session after the change: %d, want still valid", code)
	}
	f.login("transalegria", "outra-senha-da-empresa")
}

// TestChangeOwnPasswordThrottled: wrong current passwords count against the login's limits, so
// that a stolen session cannot guess the password faster than the login allows: after 10, the
// right one is refused too (429), and so is a login to the account.
func TestChangeOwnPasswordThrottled(t *testing.T) {
	f := newFixture(t, nil)
	_, tok := f.login("maria", viewerPassword)
	for i := range 10 {
		if code, msg := f.changePassword(session{bearer: tok}, "chute-errado-"+string(rune('a'+i)), "nova-senha-123"); code != http.StatusForbidden {
			t.Fatalf("guess %d: %d %q, want 403", i, code, msg)
		}
	}
	code, body, h := f.do("POST", "/api/v1/me/password", map[string]string{"current": viewerPassword, "new": "nova-senha-123"}, session{bearer: tok})
	if code != http.StatusTooManyRequests || h.Get("Retry-After") == "" {
		t.Errorf("the right password after 10 wrong ones: %d %s, want 429 with Retry-After", code, body)
	}
	if code, _, _ := f.do("POST", "/api/v1/login", map[string]string{"user": "maria", "password": viewerPassword}, session{}); code != http.StatusTooManyRequests {
		t.Errorf("login after 10 wrong current passwords: %d, want 429", code)
	}
	if _, err := f.db.CheckPassword(context.Background(), "maria", viewerPassword); err != nil {
		t.Errorf("the password changed while throttled: %v", err)
	}
}

// TestAdminResetEndsSessions: an admin's reset (PATCH /api/v1/users/{name} with a password)
// ends every session of the user, so that a reset after a compromise signs the intruder out;
// the admin's own session stays.
func TestAdminResetEndsSessions(t *testing.T) {
	f := newFixture(t, nil)
	cookie, _ := f.login("maria", viewerPassword)
	_, tok := f.login("maria", viewerPassword)
	_, admin := f.login("admin", adminPassword)
	if code, body, _ := f.do("PATCH", "/api/v1/users/maria", map[string]string{"password": "redefinida-pelo-admin"}, session{bearer: admin}); code != http.StatusOK {
		t.Fatalf("reset: %d %s", code, body)
	}
	for _, s := range []session{{cookie: cookie}, {bearer: tok}} {
		if code, _, _ := f.do("GET", "/api/v1/vehicles", nil, s); code != http.StatusUnauthorized {
			t.Errorf("maria's session after the reset: %d, want 401", code)
		}
	}
	if code, _, _ := f.do("GET", "/api/v1/users", nil, session{bearer: admin}); code != http.StatusOK {
		t.Errorf("the admin's session after the reset: %d, want 200", code)
	}
	f.login("maria", "redefinida-pelo-admin")
}
