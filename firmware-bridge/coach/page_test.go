package coach

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/trenzinho/trenzinho/configbundle"
)

func get(h http.Handler, remote, path string, cookies ...*http.Cookie) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", path, nil)
	r.RemoteAddr = remote
	for _, c := range cookies {
		r.AddCookie(c)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func TestPageAccess(t *testing.T) {
	c := New(Options{Vehicle: "PIU-001", Logger: quiet})
	if err := c.Configure(signedBundle(t, testBundle(5, configbundle.Warnings{}))); err != nil {
		t.Fatal(err)
	}
	h := Page(c, "s3cret")
	if w := get(h, "127.0.0.1:5000", "/"); w.Code != 200 || !strings.Contains(w.Body.String(), `lang="pt-BR"`) {
		t.Fatalf("loopback /: %d", w.Code)
	}
	w := get(h, "[::1]:5000", "/state.json")
	var st State
	if err := json.Unmarshal(w.Body.Bytes(), &st); err != nil || st.ConfigVersion != 5 || st.Active == nil {
		t.Fatalf("state.json %d %s (%v)", w.Code, w.Body, err)
	}
	for _, path := range []string{"/", "/state.json", "/state.json?token=wrong"} {
		if w := get(h, "192.168.4.20:5000", path); w.Code != http.StatusUnauthorized {
			t.Errorf("Wi-Fi %s without the token: %d, want 401", path, w.Code)
		}
	}
	w = get(h, "192.168.4.20:5000", "/?token=s3cret")
	if w.Code != 200 || len(w.Result().Cookies()) != 1 {
		t.Fatalf("Wi-Fi with the token: %d, cookies %v", w.Code, w.Result().Cookies())
	}
	if w := get(h, "192.168.4.20:5000", "/state.json", w.Result().Cookies()[0]); w.Code != 200 {
		t.Errorf("Wi-Fi with the cookie: %d", w.Code)
	}
	if w := get(Page(c, ""), "192.168.4.20:5000", "/?token="); w.Code != http.StatusUnauthorized {
		t.Errorf("no token set: Wi-Fi served (%d)", w.Code)
	}
}
