package repo

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// outside are the strings that point outside the repository: the workspace directory the project
// was started in and the design notes kept there. A reader of a clone has neither, so what they
// need must be written in docs/. They are built by concatenation so that this file does not
// contain them.
var outside = []string{
	".." + "/shared",
	"/work" + "/shared",
	"TRENZINHO_" + "SHARED",
	"BR" + "IEF",
}

// needGit skips the test when git is not available (a source tarball built elsewhere), unless CI
// is set: the CI has git.
func needGit(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("git"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("git not found: %v", err)
		}
		t.Skipf("git not found: %v", err)
	}
}

// topLevel returns the top directory of the git checkout the tests run in; it skips the test
// outside one, unless CI is set.
func topLevel(t *testing.T) string {
	t.Helper()
	needGit(t)
	top, err := git(".", "rev-parse", "--show-toplevel")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal(err)
		}
		t.Skipf("not a git checkout: %v", err)
	}
	return strings.TrimSpace(string(top))
}

// git runs git in dir and returns its standard output.
func git(dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	out, err := cmd.Output()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return nil, fmt.Errorf("git %s: %w\n%s", strings.Join(args, " "), err, ee.Stderr)
	}
	return out, err
}

// scan reads every file git tracks in the repository at root and returns one line per mention of
// a string of outside, as "path:line: string: text", and how many files it read.
func scan(root string) ([]string, int, error) {
	out, err := git(root, "ls-files", "-z")
	if err != nil {
		return nil, 0, err
	}
	var found []string
	read := 0
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) == 0 {
			continue
		}
		name := string(f)
		path := filepath.Join(root, name)
		fi, err := os.Lstat(path)
		if errors.Is(err, os.ErrNotExist) {
			continue // deleted in the working tree, not yet committed
		}
		if err != nil {
			return nil, read, err
		}
		if !fi.Mode().IsRegular() {
			continue // symbolic links and submodules hold no text of their own
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, read, err
		}
		read++
		for _, s := range outside {
			if !bytes.Contains(b, []byte(s)) {
				continue
			}
			sc := bufio.NewScanner(bytes.NewReader(b))
			sc.Buffer(nil, len(b)+1)
			for n := 1; sc.Scan(); n++ {
				if strings.Contains(sc.Text(), s) {
					found = append(found, fmt.Sprintf("%s:%d: %s: %s", name, n, s, strings.TrimSpace(sc.Text())))
				}
			}
		}
	}
	return found, read, nil
}

// TestStandsAlone fails when a tracked file mentions a path outside the repository or the design
// notes that live there, naming each file and line: a clone must build, test and be understood
// with nothing beside it.
func TestStandsAlone(t *testing.T) {
	found, read, err := scan(topLevel(t))
	if err != nil {
		t.Fatal(err)
	}
	if read < 100 {
		t.Fatalf("read %d tracked files; the repository has hundreds", read)
	}
	for _, f := range found {
		t.Errorf("%s\n\tthis is outside the repository: write what the reader needs in docs/", f)
	}
}

// TestScanFindsMentions runs the scan on a repository made for the test: it must report each
// mention in a tracked file, and nothing in an untracked one or a clean one.
func TestScanFindsMentions(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	if _, err := git(dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"clean.go":       "package x\n// briefly, see docs/rules.md\n",
		"docs/a.md":      "line one\nsee " + outside[3] + " §2\n",
		"sub/b_test.go":  "dir := \"" + outside[0] + "/testdata\"\n",
		"untracked.txt":  outside[1] + "\n",
		"config/c.yaml":  "# " + outside[2] + "=x\n",
		"docs/other.txt": "nothing\n",
	}
	for name, text := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := git(dir, "add", "clean.go", "docs", "sub", "config"); err != nil {
		t.Fatal(err)
	}
	found, read, err := scan(dir)
	if err != nil {
		t.Fatal(err)
	}
	if read != 5 {
		t.Errorf("read %d files, want the 5 tracked", read)
	}
	want := []string{
		"config/c.yaml:1: " + outside[2],
		"docs/a.md:2: " + outside[3],
		"sub/b_test.go:1: " + outside[0],
	}
	if len(found) != len(want) {
		t.Fatalf("found %d mentions, want %d:\n%s", len(found), len(want), strings.Join(found, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(found[i], w+":") {
			t.Errorf("mention %d = %q, want %q…", i, found[i], w)
		}
	}
}
