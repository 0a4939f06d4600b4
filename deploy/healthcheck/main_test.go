package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	healthy := true
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/slow":
			time.Sleep(2 * time.Second)
		case !healthy:
			http.Error(w, `{"status":"unavailable"}`, http.StatusServiceUnavailable)
			return
		}
		io.WriteString(w, "ok\n")
	}))
	defer srv.Close()

	var out strings.Builder
	if code := run([]string{srv.URL + "/healthz"}, &out); code != 0 {
		t.Errorf("healthy: exit %d (%s)", code, out.String())
	}
	healthy = false
	out.Reset()
	if code := run([]string{srv.URL + "/healthz"}, &out); code != 1 || !strings.Contains(out.String(), "503") {
		t.Errorf("503: exit %d, output %q; want 1 and the status", code, out.String())
	}
	if code := run([]string{"--timeout", "100ms", srv.URL + "/slow"}, io.Discard); code != 1 {
		t.Errorf("timeout: exit %d, want 1", code)
	}
	// Nothing listens there any more.
	url := srv.URL
	srv.Close()
	if code := run([]string{url + "/healthz"}, io.Discard); code != 1 {
		t.Errorf("refused: exit %d, want 1", code)
	}
	if code := run(nil, io.Discard); code != 2 {
		t.Errorf("no URL: exit %d, want 2", code)
	}
}
