package main

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestWhatifCommandLine: a whatif command line that cannot run exits 2 and says why; a report
// directory that holds something is refused before InfluxDB is asked anything.
func TestWhatifCommandLine(t *testing.T) {
	dir := t.TempDir()
	for _, k := range []string{"TRENZINHO_PROFILE", "TRENZINHO_GEOFENCES", "TRENZINHO_REGISTRY", "TRENZINHO_INFLUX_URL"} {
		t.Setenv(k, "")
	}
	prof := filepath.Join(dir, "p.yaml")
	if err := os.WriteFile(prof, []byte("not: [a profile"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		args []string
		code int
		want string
	}{
		{[]string{"whatif", "--from", "2026-01-01", "--to", "2026-01-31"}, 2, "--profile"},
		{[]string{"whatif", "--from", "2026-01-01", "--profile", prof}, 2, "--to"},
		{[]string{"whatif", "--from", "01/01/2026", "--to", "2026-01-31", "--profile", filepath.Join("..", "profiles", "piuma.yaml")}, 2, `"01/01/2026"`},
		{[]string{"whatif", "--from", "2026-02-01", "--to", "2026-01-31", "--profile", filepath.Join("..", "profiles", "piuma.yaml")}, 2, "before"},
		{[]string{"whatif", "--from", "2026-01-01", "--to", "2026-01-31", "--profile", prof}, 1, "p.yaml"},
		{[]string{"whatif", "--from", "2026-01-01", "--to", "2026-01-31", "--profile", filepath.Join("..", "profiles", "piuma.yaml")}, 1, "TRENZINHO_INFLUX_URL"},
		{[]string{"whatif", "--from", "2026-01-01", "--to", "2026-01-31", "--profile", filepath.Join("..", "profiles", "piuma.yaml"),
			"--influx-url", "http://127.0.0.1:1", "--out", dir}, 1, "not empty"},
	}
	for _, c := range cases {
		if c.code == 1 { // an error, logged: its text is the error's
			err := cmdWhatif(context.Background(), c.args[1:], io.Discard, io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("monitor %s: %v, want %q", strings.Join(c.args, " "), err, c.want)
			}
			if code := run(context.Background(), c.args, io.Discard, io.Discard); code != 1 {
				t.Errorf("monitor %s: exit %d, want 1", strings.Join(c.args, " "), code)
			}
			continue
		}
		stderr := captureStderr(t, func(w io.Writer) {
			if code := run(context.Background(), c.args, io.Discard, w); code != c.code {
				t.Errorf("monitor %s: exit %d, want %d", strings.Join(c.args, " "), code, c.code)
			}
		})
		if !strings.Contains(stderr, c.want) {
			t.Errorf("monitor %s: standard error does not say %q:\n%s", strings.Join(c.args, " "), c.want, stderr)
		}
	}
}
