// Package web holds the control-room dashboard's assets, embedded in the monitor binary so that
// nothing is fetched from a CDN at run time: the page, its ES modules and stylesheet, the
// favicon, and the vendored Leaflet and uPlot (static/vendor/README.md says which versions).
//
// The dashboard is framework-free: static/index.html loads static/js/app.js, which talks to the
// monitor's API (docs/api.md) and its event stream. Every script is a file: the Content-Security-
// Policy the handler sets allows no inline script, no inline style element or attribute, and no
// image from anywhere but the monitor itself and the configured map tile server.
package web

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io/fs"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"
)

//go:embed static
var files embed.FS

// Options configure the dashboard handler.
type Options struct {
	// TileURL is the map tile URL template the dashboard uses (TRENZINHO_TILE_URL), e.g.
	// https://tile.openstreetmap.org/{z}/{x}/{y}.png; its origin is allowed as an image source.
	// Empty: no tiles.
	TileURL string
}

// Handler serves the dashboard: the files under static/, with a strong ETag each (so that a
// browser revalidates instead of downloading them again), no directory listings, and the
// Content-Security-Policy of the page.
func Handler(opts Options) http.Handler {
	sub, err := fs.Sub(files, "static")
	if err != nil {
		panic(err)
	}
	etags := map[string]string{}
	err = fs.WalkDir(sub, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := fs.ReadFile(sub, p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(b)
		etags["/"+p] = `"` + hex.EncodeToString(sum[:12]) + `"`
		return nil
	})
	if err != nil {
		panic(err)
	}
	etags["/"] = etags["/index.html"]
	sw, swTag, err := serviceWorker(sub, etags)
	if err != nil {
		panic(err)
	}
	etags["/sw.js"] = swTag
	csp := ContentSecurityPolicy(opts.TileURL)
	files := http.FileServerFS(sub)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "método não permitido", http.StatusMethodNotAllowed)
			return
		}
		tag, ok := etags[r.URL.Path]
		if !ok {
			// Unknown files and directories (no listings); /index.html redirects to / as
			// http.FileServer does.
			if r.URL.Path == "/index.html" {
				files.ServeHTTP(w, r)
				return
			}
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("Cache-Control", "no-cache")
		h.Set("ETag", tag)
		switch {
		case r.URL.Path == "/sw.js":
			h.Set("Content-Type", "text/javascript; charset=utf-8")
			http.ServeContent(w, r, "sw.js", time.Time{}, bytes.NewReader(sw))
			return
		case strings.HasSuffix(r.URL.Path, ".webmanifest"):
			h.Set("Content-Type", "application/manifest+json")
		}
		files.ServeHTTP(w, r)
	})
}

// serviceWorker is static/sw.js as served: its placeholders replaced by the shell's version (a
// hash of every file's ETag, so that any change to the dashboard changes the worker's bytes and
// the browser installs the new one with a new cache) and the list of the files it caches (the
// dashboard's, not the public transparency page's). It returns the bytes and their ETag.
func serviceWorker(sub fs.FS, etags map[string]string) ([]byte, string, error) {
	src, err := fs.ReadFile(sub, "sw.js")
	if err != nil {
		return nil, "", err
	}
	var shell []string
	for p := range etags {
		if p == "/index.html" || p == "/sw.js" || strings.HasPrefix(p, "/transparencia") || strings.HasPrefix(p, "/js/transparencia") {
			continue
		}
		shell = append(shell, p)
	}
	sort.Strings(shell)
	h := sha256.New()
	for _, p := range shell {
		h.Write([]byte(p + etags[p] + "\n"))
	}
	h.Write(src)
	version := hex.EncodeToString(h.Sum(nil)[:8])
	list, err := json.Marshal(shell)
	if err != nil {
		return nil, "", err
	}
	out := strings.Replace(string(src), `"__SHELL_VERSION__"`, `"`+version+`"`, 1)
	out = strings.Replace(out, `["__SHELL_FILES__"]`, string(list), 1)
	if out == string(src) {
		return nil, "", errors.New("web: sw.js lacks its placeholders")
	}
	return []byte(out), `"` + version + `"`, nil
}

// ContentSecurityPolicy is the policy of the dashboard's pages: scripts, styles, fonts and API
// calls from the monitor only; images also from the tile server of tileURL, if any.
func ContentSecurityPolicy(tileURL string) string {
	img := "'self' data:"
	if o := tileOrigin(tileURL); o != "" {
		img += " " + o
	}
	return "default-src 'self'; script-src 'self'; style-src 'self'; img-src " + img +
		"; connect-src 'self'; font-src 'self'; object-src 'none'; frame-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
}

// tileOrigin is the origin of a tile URL template as a CSP source: "{s}" subdomains become a
// wildcard. It is "" when the template is not an http(s) URL.
func tileOrigin(tmpl string) string {
	u, err := url.Parse(strings.ReplaceAll(tmpl, "{s}", "subdomain-placeholder"))
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return ""
	}
	host := strings.ReplaceAll(u.Host, "subdomain-placeholder", "*")
	if strings.ContainsAny(host, "{}; ,'\"") {
		return ""
	}
	return u.Scheme + "://" + host
}
