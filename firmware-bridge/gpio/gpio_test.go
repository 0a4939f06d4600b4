package gpio

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

func TestValueFile(t *testing.T) {
	for _, low := range []bool{false, true} {
		path := filepath.Join(t.TempDir(), "value")
		if err := os.WriteFile(path, []byte("1\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		l, err := Open(path, low, "test")
		if err != nil {
			t.Fatal(err)
		}
		inactive, active := "0", "1"
		if low {
			inactive, active = "1", "0"
		}
		if got := read(t, path); got != inactive {
			t.Errorf("active-low %v: opened line reads %q, want inactive %q", low, got, inactive)
		}
		if err := l.Set(true); err != nil {
			t.Fatal(err)
		}
		if got := read(t, path); got != active {
			t.Errorf("active-low %v: on reads %q, want %q", low, got, active)
		}
		if err := l.Close(); err != nil {
			t.Fatal(err)
		}
		if got := read(t, path); got != inactive {
			t.Errorf("active-low %v: closed line reads %q, want %q", low, got, inactive)
		}
	}
}

func TestValueFileMissing(t *testing.T) {
	if _, err := Open(filepath.Join(t.TempDir(), "gpio99", "value"), false, "test"); err == nil {
		t.Fatal("opened a value file that does not exist")
	}
}

func TestOpenSpec(t *testing.T) {
	if _, err := Open("/dev/gpiochip0:x", false, "test"); err == nil || !strings.Contains(err.Error(), "offset") {
		t.Fatalf("Open(bad offset) = %v", err)
	}
}
