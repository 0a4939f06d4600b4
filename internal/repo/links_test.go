package repo

import (
	"bytes"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"
)

var (
	// mdLink is an inline link or image, [text](target) or [text](target "title"); the text may
	// hold one level of brackets, as in [`a[0]`](x).
	mdLink = regexp.MustCompile(`\[(?:[^\[\]]|\[[^\[\]]*\])*\]\(\s*<?([^\s()<>]+)>?(?:\s+"[^"]*")?\s*\)`)
	// htmlAnchor is an explicit anchor: <a id="x">, <a name="x">.
	htmlAnchor = regexp.MustCompile(`<a\s+(?:id|name)="([^"]+)"`)
	// codeSpan is inline code, whose brackets are not links.
	codeSpan = regexp.MustCompile("`+[^`]*`+")
)

// anchorOf is the anchor GitHub gives a heading's text: lower case, the markup and the
// punctuation dropped (letters of any script, digits, '-' and '_' kept), each space a '-'.
func anchorOf(heading string) string {
	heading = mdLink.ReplaceAllStringFunc(heading, func(l string) string {
		return l[1:strings.Index(l, "](")]
	})
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteByte('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// mdDoc is what the link check needs of a Markdown file: its links and its anchors.
type mdDoc struct {
	links   []mdRef // in the order they appear
	anchors map[string]bool
}

// mdRef is one link: its target as written and the line it is on.
type mdRef struct {
	target string
	line   int
}

// parseMarkdown reads a Markdown text's links and heading anchors, outside fenced code blocks
// and code spans. Repeated headings get GitHub's suffixes (-1, -2, …).
func parseMarkdown(text []byte) mdDoc {
	d := mdDoc{anchors: map[string]bool{}}
	seen := map[string]int{}
	fence := ""
	for i, line := range strings.Split(string(text), "\n") {
		trimmed := strings.TrimSpace(line)
		if fence != "" {
			if strings.HasPrefix(trimmed, fence) {
				fence = ""
			}
			continue
		}
		if strings.HasPrefix(trimmed, "```") || strings.HasPrefix(trimmed, "~~~") {
			fence = trimmed[:3]
			continue
		}
		for _, m := range htmlAnchor.FindAllStringSubmatch(line, -1) {
			d.anchors[m[1]] = true
		}
		if h := strings.TrimLeft(trimmed, "#"); len(h) < len(trimmed) && len(trimmed)-len(h) <= 6 && strings.HasPrefix(h, " ") {
			a := anchorOf(strings.TrimSpace(h))
			if n := seen[a]; n > 0 {
				d.anchors[fmt.Sprintf("%s-%d", a, n)] = true
			} else {
				d.anchors[a] = true
			}
			seen[a]++
		}
		for _, m := range mdLink.FindAllStringSubmatch(codeSpan.ReplaceAllString(line, ""), -1) {
			d.links = append(d.links, mdRef{target: m[1], line: i + 1})
		}
	}
	return d
}

// brokenLinks checks every relative link of the tracked Markdown files of the repository at
// root: the file or directory it names must exist, and an anchor (#…) must be a heading or an
// explicit anchor of the Markdown file it points into. It returns one line per broken link,
// "path:line: target: why", and how many links it checked.
func brokenLinks(root string) ([]string, int, error) {
	out, err := git(root, "ls-files", "-z", "--", "*.md")
	if err != nil {
		return nil, 0, err
	}
	docs := map[string]mdDoc{}
	var names []string
	for _, f := range bytes.Split(out, []byte{0}) {
		if len(f) == 0 {
			continue
		}
		name := filepath.ToSlash(string(f))
		b, err := os.ReadFile(filepath.Join(root, name))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, 0, err
		}
		docs[name] = parseMarkdown(b)
		names = append(names, name)
	}
	var broken []string
	checked := 0
	for _, name := range names {
		for _, l := range docs[name].links {
			u, err := url.Parse(l.target)
			if err != nil {
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %v", name, l.line, l.target, err))
				continue
			}
			if u.Scheme != "" || u.Host != "" {
				continue // a web address: not the repository's to check
			}
			checked++
			target := name
			if u.Path != "" {
				if strings.HasPrefix(u.Path, "/") {
					broken = append(broken, fmt.Sprintf("%s:%d: %s: an absolute path, which a clone does not have", name, l.line, l.target))
					continue
				}
				target = filepath.ToSlash(filepath.Join(filepath.Dir(name), u.Path))
				if _, err := os.Stat(filepath.Join(root, target)); err != nil {
					broken = append(broken, fmt.Sprintf("%s:%d: %s: no such file in the repository", name, l.line, l.target))
					continue
				}
			}
			if u.Fragment == "" || strings.HasPrefix(u.Fragment, "L") && strings.Trim(u.Fragment[1:], "0123456789-L") == "" {
				continue // a file, or a line of one
			}
			d, ok := docs[target]
			if !ok {
				continue // an anchor into a file that is not Markdown
			}
			if !d.anchors[u.Fragment] {
				broken = append(broken, fmt.Sprintf("%s:%d: %s: %s has no heading with the anchor #%s", name, l.line, l.target, target, u.Fragment))
			}
		}
	}
	return broken, checked, nil
}

// TestDocLinks fails when a relative link of README.md or docs/ (any tracked Markdown file)
// names a file that does not exist or an anchor that no heading of its target makes.
func TestDocLinks(t *testing.T) {
	broken, checked, err := brokenLinks(topLevel(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("checked %d relative links", checked)
	if checked < 50 {
		t.Fatalf("checked %d relative links; the docs have hundreds", checked)
	}
	for _, b := range broken {
		t.Error(b)
	}
}

// TestAnchorOf pins the anchors GitHub makes of the headings this repository writes.
func TestAnchorOf(t *testing.T) {
	for heading, want := range map[string]string{
		"Benchmarks":                                        "benchmarks",
		"`make run`: time to the dashboard":                 "make-run-time-to-the-dashboard",
		"Em campo: the dashboard in the inspector's pocket": "em-campo-the-dashboard-in-the-inspectors-pocket",
		"Monitor: publish → episode":                        "monitor-publish--episode",
		"Piúma's profile (Lei 2.277/2018)":                  "piúmas-profile-lei-22772018",
		"A [linked](x.md) heading":                          "a-linked-heading",
		"snake_case and kebab-case":                         "snake_case-and-kebab-case",
	} {
		if got := anchorOf(heading); got != want {
			t.Errorf("anchorOf(%q) = %q, want %q", heading, got, want)
		}
	}
}

// TestBrokenLinksFound runs the check on a repository made for the test: each broken file link
// and anchor is reported, the good ones and those in code are not.
func TestBrokenLinksFound(t *testing.T) {
	needGit(t)
	dir := t.TempDir()
	if _, err := git(dir, "init", "-q"); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"README.md": "# Top\n\nSee [a](docs/a.md), [a's part](docs/a.md#part-two), [top](#top),\n" +
			"[gone](docs/gone.md) and [no part](docs/a.md#part-three).\n" +
			"`[in code](docs/none.md)` and [web](https://example.org/x#y), [dir](docs/).\n" +
			"```\n[fenced](docs/none.md)\n```\n",
		"docs/a.md": "# A\n\n## Part two\n\n## Part two\n\n<a id=\"here\"></a>\n" +
			"[again](#part-two-1), [here](#here), [up](../README.md#top), [bad](#nowhere), [abs](/etc/passwd)\n",
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
	if _, err := git(dir, "add", "."); err != nil {
		t.Fatal(err)
	}
	broken, checked, err := brokenLinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if checked != 11 {
		t.Errorf("checked %d relative links, want 11", checked)
	}
	want := []string{
		"README.md:4: docs/gone.md: no such file",
		"README.md:4: docs/a.md#part-three: docs/a.md has no heading",
		"docs/a.md:8: #nowhere: docs/a.md has no heading",
		"docs/a.md:8: /etc/passwd: an absolute path",
	}
	if len(broken) != len(want) {
		t.Fatalf("found %d broken links, want %d:\n%s", len(broken), len(want), strings.Join(broken, "\n"))
	}
	for i, w := range want {
		if !strings.HasPrefix(broken[i], w) {
			t.Errorf("broken link %d = %q, want %q…", i, broken[i], w)
		}
	}
}
