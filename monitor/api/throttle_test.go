package api_test

// Login throttling per account and per client address (docs/api.md, "Hardening").

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/trenzinho/trenzinho/internal/clientip"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// loginFrom logs in with X-Forwarded-For set to xff ("" for none) and returns the status.
func (f *fixture) loginFrom(xff, user, password string) int {
	f.t.Helper()
	var h []string
	if xff != "" {
		h = []string{"X-Forwarded-For", xff}
	}
	code, _, _ := f.send("POST", "/api/v1/login", strings.NewReader(fmt.Sprintf(`{"user":%q,"password":%q}`, user, password)), h...)
	return code
}

// behindProxy is the API with the test's own address (the httptest server's peer) as the
// trusted reverse proxy.
func behindProxy(t *testing.T) *fixture {
	trusted, err := clientip.Parse("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	return newFixture(t, func(c *api.Config) { c.TrustedProxies = trusted })
}

// TestLoginThrottleInterleavedSuccess: an account holder who logs in successfully between
// guesses at another account gets no more guesses for it — neither from one address (the
// address's count is not reset by the success) nor from many (the account's own limit).
func TestLoginThrottleInterleavedSuccess(t *testing.T) {
	t.Run("one address", func(t *testing.T) {
		f := newFixture(t, nil)
		for i := 1; i <= 10; i++ {
			if code := f.loginFrom("", "maria", viewerPassword); code != http.StatusOK {
				t.Fatalf("maria's login %d: %d", i, code)
			}
			if code := f.loginFrom("", "admin", fmt.Sprint("chute-", i)); code != http.StatusUnauthorized {
				t.Fatalf("guess %d: %d, want 401", i, code)
			}
		}
		if code := f.loginFrom("", "maria", viewerPassword); code != http.StatusTooManyRequests {
			t.Errorf("maria from the guessing address after 10 failures: %d, want 429", code)
		}
		if code := f.loginFrom("", "admin", adminPassword); code != http.StatusTooManyRequests {
			t.Errorf("the right password from the guessing address: %d, want 429", code)
		}
	})
	t.Run("many addresses", func(t *testing.T) {
		f := behindProxy(t)
		for i := 1; i <= 10; i++ {
			client := fmt.Sprintf("203.0.113.%d", i)
			if code := f.loginFrom(client, "maria", viewerPassword); code != http.StatusOK {
				t.Fatalf("maria's login %d: %d", i, code)
			}
			if code := f.loginFrom(client, "admin", fmt.Sprint("chute-", i)); code != http.StatusUnauthorized {
				t.Fatalf("guess %d: %d, want 401", i, code)
			}
		}
		for i, user := range []string{"admin", "ADMIN"} {
			if code := f.loginFrom(fmt.Sprintf("198.51.100.%d", i+1), user, adminPassword); code != http.StatusTooManyRequests {
				t.Errorf("%s with the right password from a fresh address after 10 failures: %d, want 429", user, code)
			}
		}
		if code := f.loginFrom("198.51.100.9", "maria", viewerPassword); code != http.StatusOK {
			t.Errorf("another account from a fresh address: %d, want 200", code)
		}
		if code := f.loginFrom("203.0.113.1", "maria", viewerPassword); code != http.StatusOK {
			t.Errorf("maria from an address with one failure: %d, want 200", code)
		}
		ctx := context.Background()
		throttled, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: "login_throttled"}, 10, "")
		if err != nil {
			t.Fatal(err)
		}
		if len(throttled) != 2 || throttled[0].RemoteAddr != "198.51.100.2" || throttled[1].Object != "user:admin" {
			t.Errorf("audited throttled logins: %+v", throttled)
		}
	})
}

// TestLoginThrottleBehindProxy: behind a trusted proxy, the client address is the one it
// forwards: ten failures of one client lock that client out, not the others.
func TestLoginThrottleBehindProxy(t *testing.T) {
	f := behindProxy(t)
	for i := 1; i <= 10; i++ {
		// Different (unknown) accounts: only the address's limit counts them.
		if code := f.loginFrom("1.2.3.4, 203.0.113.7", fmt.Sprint("fantasma", i), "errada"); code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i, code)
		}
	}
	if code := f.loginFrom("203.0.113.7", "admin", adminPassword); code != http.StatusTooManyRequests {
		t.Errorf("the failing client after 10 failures: %d, want 429", code)
	}
	// The entries left of the proxy's own are the client's to write: changing them changes
	// nothing.
	if code := f.loginFrom("9.9.9.9, 203.0.113.7", "admin", adminPassword); code != http.StatusTooManyRequests {
		t.Errorf("the failing client with a forged XFF prefix: %d, want 429", code)
	}
	if code := f.loginFrom("203.0.113.8", "admin", adminPassword); code != http.StatusOK {
		t.Errorf("another client behind the same proxy: %d, want 200", code)
	}
	if code := f.loginFrom("", "maria", viewerPassword); code != http.StatusOK {
		t.Errorf("the proxy itself, no XFF: %d, want 200", code)
	}
	failed, _, err := f.db.ListAudit(context.Background(), store.AuditFilter{Action: "login_failed"}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range failed {
		if e.RemoteAddr != "203.0.113.7" {
			t.Errorf("audited failure from %q, want the forwarded client 203.0.113.7", e.RemoteAddr)
		}
	}
}

// TestLoginThrottleUntrustedXFF: without trusted proxies, X-Forwarded-For is the client's to
// write and is ignored: rotating it does not escape the address's limit, and the audit logs
// the peer.
func TestLoginThrottleUntrustedXFF(t *testing.T) {
	f := newFixture(t, nil)
	for i := 1; i <= 10; i++ {
		if code := f.loginFrom(fmt.Sprintf("203.0.113.%d", i), fmt.Sprint("fantasma", i), "errada"); code != http.StatusUnauthorized {
			t.Fatalf("failure %d: %d", i, code)
		}
	}
	if code := f.loginFrom("203.0.113.99", "admin", adminPassword); code != http.StatusTooManyRequests {
		t.Errorf("a new XFF from the same peer: %d, want 429", code)
	}
	failed, _, err := f.db.ListAudit(context.Background(), store.AuditFilter{Action: "login_failed"}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range failed {
		if e.RemoteAddr != "127.0.0.1" {
			t.Errorf("audited failure from %q, want the peer 127.0.0.1", e.RemoteAddr)
		}
	}
}

// TestLoginThrottleConcurrent: 30 wrong passwords for one account sent at once, from 30
// clients, get 10 answers 401 and 20 answers 429: attempts in flight cannot overrun the limit.
func TestLoginThrottleConcurrent(t *testing.T) {
	f := behindProxy(t)
	codes := make(chan int, 30)
	var wg sync.WaitGroup
	for i := range 30 {
		wg.Go(func() {
			// Not f.send: its 10 s per request is short for ten password hashes on a loaded
			// machine, and a goroutine must not end the test.
			req, _ := http.NewRequest("POST", f.srv.URL+"/api/v1/login", strings.NewReader(fmt.Sprintf(`{"user":"admin","password":"chute-%d"}`, i)))
			req.Header.Set("X-Forwarded-For", fmt.Sprintf("203.0.113.%d", i+1))
			resp, err := f.srv.Client().Do(req)
			if err != nil {
				t.Errorf("login %d: %v", i, err)
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		})
	}
	wg.Wait()
	close(codes)
	n := map[int]int{}
	for c := range codes {
		n[c]++
	}
	if n[http.StatusUnauthorized] != 10 || n[http.StatusTooManyRequests] != 20 {
		t.Errorf("answers %v, want 10 × 401 and 20 × 429", n)
	}
}

// TestLoginThrottleSharedByMonitors: two monitors on one database count the same failed
// logins: ten wrong guesses at an account on one are refused, the right password included, on
// the other — from the guessing address and, by the account's own limit, from any other.
func TestLoginThrottleSharedByMonitors(t *testing.T) {
	trusted, err := clientip.Parse("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	one := newFixture(t, func(c *api.Config) { c.TrustedProxies = trusted })
	other := newFixture(t, func(c *api.Config) { c.Users, c.Audit, c.TrustedProxies = one.db, one.db, trusted })
	for i := 1; i <= 10; i++ {
		if code := one.loginFrom("198.51.100.7", "admin", fmt.Sprint("chute-", i)); code != http.StatusUnauthorized {
			t.Fatalf("guess %d on the first monitor: %d, want 401", i, code)
		}
	}
	if code := other.loginFrom("198.51.100.7", "maria", viewerPassword); code != http.StatusTooManyRequests {
		t.Errorf("the guessing address on the other monitor: %d, want 429", code)
	}
	if code := other.loginFrom("203.0.113.9", "admin", adminPassword); code != http.StatusTooManyRequests {
		t.Errorf("the guessed account from another address on the other monitor: %d, want 429", code)
	}
	if code := other.loginFrom("203.0.113.9", "maria", viewerPassword); code != http.StatusOK {
		t.Errorf("another account from another address on the other monitor: %d, want 200", code)
	}
}
