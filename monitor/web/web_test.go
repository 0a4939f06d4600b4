package web

import (
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"
)

func get(t *testing.T, h http.Handler, path string, header ...string) *http.Response {
	t.Helper()
	req := httptest.NewRequest("GET", path, nil)
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w.Result()
}

func TestHandler(t *testing.T) {
	h := Handler(Options{TileURL: "https://{s}.tile.openstreetmap.org/{z}/{x}/{y}.png"})
	resp := get(t, h, "/")
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `<html lang="pt-BR">`) {
		t.Fatalf("/: %d", resp.StatusCode)
	}
	csp := resp.Header.Get("Content-Security-Policy")
	for _, want := range []string{"script-src 'self';", "style-src 'self';", "img-src 'self' data: https://*.tile.openstreetmap.org;", "frame-ancestors 'none'"} {
		if !strings.Contains(csp, want) {
			t.Errorf("CSP %q lacks %q", csp, want)
		}
	}
	if strings.Contains(csp, "unsafe") {
		t.Errorf("CSP allows unsafe sources: %q", csp)
	}
	etag := resp.Header.Get("ETag")
	if etag == "" || resp.Header.Get("Cache-Control") != "no-cache" {
		t.Errorf("caching headers: %v", resp.Header)
	}
	if r := get(t, h, "/", "If-None-Match", etag); r.StatusCode != http.StatusNotModified {
		t.Errorf("revalidation: %d", r.StatusCode)
	}
	for path, want := range map[string]int{
		"/vendor/":                   404, // no listings
		"/js/":                       404,
		"/nope.js":                   404,
		"/favicon.svg":               200,
		"/vendor/leaflet/leaflet.js": 200,
		"/index.html":                http.StatusMovedPermanently,
	} {
		if r := get(t, h, path); r.StatusCode != want {
			t.Errorf("%s: %d, want %d", path, r.StatusCode, want)
		}
	}
	if r := get(t, h, "/js/app.js"); r.Header.Get("Content-Type") != "text/javascript; charset=utf-8" {
		t.Errorf("app.js served as %q", r.Header.Get("Content-Type"))
	}
}

// Every file the page and its modules name is embedded, and no script is inline.
func TestAssetsEmbedded(t *testing.T) {
	sub, _ := fs.Sub(files, "static")
	index, err := fs.ReadFile(sub, "index.html")
	if err != nil {
		t.Fatal(err)
	}
	refs := regexp.MustCompile(`(?:src|href)="([^"#:]+)`).FindAllStringSubmatch(string(index), -1)
	if len(refs) < 6 {
		t.Fatalf("only %d references in index.html", len(refs))
	}
	for _, m := range refs {
		if _, err := fs.Stat(sub, m[1]); err != nil {
			t.Errorf("index.html names %s: %v", m[1], err)
		}
	}
	inline := regexp.MustCompile(`<script(?:\s[^>]*)?>\s*[^<\s]|<style|\sstyle=|\son[a-z]+=`)
	if inline.Match(index) {
		t.Error("index.html has inline script, style or handler")
	}
	imports := regexp.MustCompile(`from "\./([a-z0-9-]+\.js)"`)
	err = fs.WalkDir(sub, "js", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := fs.ReadFile(sub, p)
		for _, m := range imports.FindAllStringSubmatch(string(b), -1) {
			if _, err := fs.Stat(sub, "js/"+m[1]); err != nil {
				t.Errorf("%s imports %s: %v", p, m[1], err)
			}
		}
		if strings.Contains(string(b), "innerHTML") || strings.Contains(string(b), "eval(") {
			t.Errorf("%s builds markup from strings", p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"vendor/leaflet/LICENSE", "vendor/uplot/LICENSE", "vendor/README.md", "icons.svg", "favicon.svg"} {
		if _, err := fs.Stat(sub, f); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
}

func TestTileOrigin(t *testing.T) {
	for in, want := range map[string]string{
		"": "",
		"https://tile.openstreetmap.org/{z}/{x}/{y}.png": "https://tile.openstreetmap.org",
		"https://{s}.tile.example.com/{z}/{x}/{y}.png":   "https://*.tile.example.com",
		"http://127.0.0.1:8088/tiles/{z}/{x}/{y}.png":    "http://127.0.0.1:8088",
		"javascript:alert(1)":                            "",
		"https://evil.example.com; script-src *":         "",
	} {
		if got := tileOrigin(in); got != want {
			t.Errorf("tileOrigin(%q) = %q, want %q", in, got, want)
		}
	}
}

// The installable dashboard: the manifest is served as one and names its icons (which exist);
// the service worker is served with its version and the shell it caches filled in — every file
// of the shell served, the public pages and the API left out.
func TestManifestAndServiceWorker(t *testing.T) {
	h := Handler(Options{})
	resp := get(t, h, "/manifest.webmanifest")
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "application/manifest+json" {
		t.Fatalf("manifest: %d %q", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var m struct {
		Name, ShortName, StartURL, Display, Lang string
		Icons                                    []struct{ Src, Sizes, Type, Purpose string }
	}
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &m); err != nil || m.Lang != "pt-BR" || m.Display != "standalone" || len(m.Icons) < 4 {
		t.Fatalf("manifest %s: %v", b, err)
	}
	purposes := map[string]bool{}
	for _, ic := range m.Icons {
		purposes[ic.Sizes+" "+ic.Purpose] = true
		if r := get(t, h, ic.Src); r.StatusCode != 200 || r.Header.Get("Content-Type") != "image/png" {
			t.Errorf("icon %s: %d %q", ic.Src, r.StatusCode, r.Header.Get("Content-Type"))
		}
	}
	for _, want := range []string{"192x192 any", "512x512 any", "192x192 maskable", "512x512 maskable"} {
		if !purposes[want] {
			t.Errorf("manifest lacks a %s icon", want)
		}
	}

	resp = get(t, h, "/sw.js")
	sw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/javascript") || resp.Header.Get("ETag") == "" {
		t.Fatalf("sw.js: %d %v", resp.StatusCode, resp.Header)
	}
	if strings.Contains(string(sw), "__SHELL_") {
		t.Fatal("sw.js served with its placeholders")
	}
	m2 := regexp.MustCompile(`const SHELL = (\[.*\]);`).FindSubmatch(sw)
	var shell []string
	if m2 == nil || json.Unmarshal(m2[1], &shell) != nil || len(shell) < 20 {
		t.Fatalf("the shell list: %q", m2)
	}
	for _, p := range shell {
		if strings.HasPrefix(p, "/api/") || strings.Contains(p, "transparencia") || p == "/sw.js" {
			t.Errorf("the shell caches %s", p)
		}
		if r := get(t, h, p); r.StatusCode != 200 {
			t.Errorf("shell file %s: %d", p, r.StatusCode)
		}
	}
	if r := get(t, h, "/sw.js", "If-None-Match", resp.Header.Get("ETag")); r.StatusCode != http.StatusNotModified {
		t.Errorf("sw.js revalidation: %d", r.StatusCode)
	}
}
