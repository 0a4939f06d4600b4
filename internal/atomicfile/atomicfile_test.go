package atomicfile

import (
	"os"
	"path/filepath"
	"testing"
)

func TestWrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "passwd")

	// A new file gets perm.
	if err := Write(path, []byte("a\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("new file: %v %v", fi.Mode(), err)
	}
	// An existing file keeps its mode, whatever perm says.
	if err := os.Chmod(path, 0o640); err != nil {
		t.Fatal(err)
	}
	if err := Write(path, []byte("b\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(path); string(b) != "b\n" {
		t.Errorf("content %q", b)
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want the old 0640", fi.Mode().Perm())
	}
	// A symbolic link is followed: the target changes, the link stays a link.
	link := filepath.Join(dir, "link")
	if err := os.Symlink(path, link); err != nil {
		t.Fatal(err)
	}
	if err := Write(link, []byte("c\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(link); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("the link was replaced: %v %v", fi.Mode(), err)
	}
	if b, _ := os.ReadFile(path); string(b) != "c\n" {
		t.Errorf("target content %q", b)
	}
	// No temporary file is left, and a failed write leaves the old content.
	if err := Write(filepath.Join(dir, "missing", "x"), []byte("d"), 0o600); err == nil {
		t.Error("a write into a missing directory succeeded")
	}
	ents, _ := os.ReadDir(dir)
	if len(ents) != 2 {
		t.Errorf("directory holds %d entries, want 2 (file and link)", len(ents))
	}
}
