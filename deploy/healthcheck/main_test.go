package main

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestRun(t *testing.T) {
	var healthy atomic.Bool
	healthy.Store(true)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch {
		case r.URL.Path == "/slow":
			// Answers only once the client gave up, or after 30 s: a client without its
			// timeout gets the answer, and the test fails instead of hanging.
			select {
			case <-r.Context().Done():
				return
			case <-time.After(30 * time.Second):
			}
		case !healthy.Load():
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
	healthy.Store(false)
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
