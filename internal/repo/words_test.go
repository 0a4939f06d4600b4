package repo

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// workWords are the ways a text can speak of the work that produced it rather than of what it
// describes: an issue or a work session by its number (the word, then the number, with or without a
// space, '#', '-' or '_' between them), a numbered stop or wave of work, an integration branch
// named after a session (s, its number, "-int"), the people who took a measure (the team lead, the
// rest of the team). The tree must say what the code does and why; the history of the work is the
// commit log's. Each pattern needs its number or its exact phrase, so that "issue an auto", "the
// issue date", HTTP and MQTT sessions, "stop-1" (a boarding point's id) and "the lead distance"
// pass; TestWorkMentionsFound has examples of both. The letters in brackets keep the patterns from
// matching themselves.
var workWords = []*regexp.Regexp{
	regexp.MustCompile(`(?i)\b(?:i[s]sue|se[s]sion|spr[i]nt|mile[s]tone|tic[k]et)s?[ _#-]*\d+\b`),
	regexp.MustCompile(`(?i)\b(?:st[o]p|w[a]ve)\s+#?\d+\b`),
	regexp.MustCompile(`(?i)\bs\d+b?-i[n]t\b`),
	regexp.MustCompile(`(?i)\bthe l[e]ad's\b|\bother eng[i]neers\b|\bthe eng[i]neers\b`),
}

// workFileName matches a file or directory name that carries an issue or session number: the
// word and its number, or an s and a number between separators (a profile "engine", "_s6_",
// "before").
var workFileName = regexp.MustCompile(`(?i)(?:i[s]sue|se[s]sion)[-_]?\d+|[_-]s\d+b?[_.-]`)

// units are the words after a number that make "stops 40 s" a duration, not a numbered stop.
var units = []string{"s", "ms", "min", "m", "km", "h", "seconds", "minutes", "times"}

// workMentions returns, for each tracked text file of the repository at root, one line per
// mention of the work as "path:line: text", and one per file whose path names it as "path".
func workMentions(root string) ([]string, error) {
	out, err := git(root, "ls-files", "-z")
	if err != nil {
		return nil, err
	}
	var found []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) == 0 {
			continue
		}
		name := string(f)
		if workFileName.MatchString(name) {
			found = append(found, name)
		}
		path := filepath.Join(root, name)
		fi, err := os.Lstat(path)
		if os.IsNotExist(err) || (err == nil && !fi.Mode().IsRegular()) {
			continue
		}
		if err != nil {
			return nil, err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if bytes.IndexByte(b, 0) >= 0 {
			continue // binary: profiles, images
		}
		sc := bufio.NewScanner(bytes.NewReader(b))
		sc.Buffer(nil, len(b)+1)
		for n := 1; sc.Scan(); n++ {
			if line := sc.Text(); mentionsWork(line) {
				found = append(found, fmt.Sprintf("%s:%d: %s", name, n, strings.TrimSpace(line)))
			}
		}
	}
	return found, nil
}

// mentionsWork reports whether line speaks of the work by one of workWords.
func mentionsWork(line string) bool {
	for i, re := range workWords {
		for _, loc := range re.FindAllStringIndex(line, -1) {
			if i == 1 && followedByUnit(line[loc[1]:]) {
				continue
			}
			return true
		}
	}
	return false
}

// followedByUnit reports whether rest begins with a unit of measure, as in "stops 40 s".
func followedByUnit(rest string) bool {
	word, _, _ := strings.Cut(strings.TrimSpace(rest), " ")
	word = strings.TrimRight(word, ".,;:)")
	for _, u := range units {
		if word == u {
			return true
		}
	}
	return false
}

// TestNoWorkProcessWords fails when a tracked file — code and its comments, flag help, tests,
// docs, scripts — or a file's name speaks of an issue or a work session by number, naming each
// file and line.
func TestNoWorkProcessWords(t *testing.T) {
	root := topLevel(t)
	found, err := workMentions(root)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range found {
		t.Errorf("%s\n\tsay what the code does and why, not which issue or session brought it", f)
	}
}

// TestWorkMentionsFound runs the scan on a repository made for the test: it must report each
// mention of the work and each file named after it, and none of the legitimate uses of the same
// words.
func TestWorkMentionsFound(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	if _, err := git(dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	issue, session := "is"+"sue", "ses"+"sion"
	bad := []string{
		"// measured in " + issue + " 20",
		"the speed rule (" + strings.ToUpper(issue[:1]) + issue[1:] + " #12)",
		"## " + issue + " 20, " + session + " 6: monitor",
		`fs.Int("n", 0, "how many (docs, ` + issue + `20)")`,
		"# see " + session + "-5's run",
		"done at st" + "op 3 of the plan",
		"merged into s6-i" + "nt first",
		"for the le" + "ad's quiet run",
	}
	good := []string{
		"// issue an auto when the draft is decided",
		"the issue date of the notice, and an issue at 2027-01-01",
		"// the HTTP " + session + " ends; every " + session + " of the user",
		"the persistent " + session + " keeps the subscription (QoS 1)",
		`rules.Site{ID: "stop-1", Kind: "boarding_point"}`,
		"each leaves its garage, stops 40 s at the boarding points",
		"within the lead distance of its radius",
		"issued 3 autos; sessions (12 h)",
	}
	files := map[string]string{
		"bad.go":                              strings.Join(bad, "\n") + "\n",
		"good.go":                             strings.Join(good, "\n") + "\n",
		"docs/profiles/" + issue + "20/x.txt": "nothing\n",
		"docs/profiles/engine_s6_before.txt":  "nothing\n",
		"untracked.md":                        bad[0] + "\n",
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
	if _, err := git(dir, "add", "bad.go", "good.go", "docs"); err != nil {
		t.Fatal(err)
	}
	found, err := workMentions(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"bad.go:1:", "bad.go:2:", "bad.go:3:", "bad.go:4:", "bad.go:5:", "bad.go:6:", "bad.go:7:", "bad.go:8:",
		"docs/profiles/engine_s6_before.txt", "docs/profiles/" + issue + "20/x.txt"}
	if len(found) != len(want) {
		t.Fatalf("found %d mentions, want %d:\n%s", len(found), len(want), strings.Join(found, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(found[i], w) {
			t.Errorf("mention %d = %q, want %q…", i, found[i], w)
		}
	}
}
