package coach

import (
	"crypto/subtle"
	"embed"
	"encoding/json"
	"io/fs"
	"net"
	"net/http"
	"time"
)

//go:embed page
var pageFiles embed.FS

// PageCookie carries the page's token from a browser that is not on the Pi itself.
const PageCookie = "trenzinho_coach"

// Page serves the local status page (an HDMI screen in kiosk mode, the driver's phone on the
// Pi's Wi-Fi): "/" the page, "/state.json" the coach's State. A request from the Pi itself
// (loopback) needs no login; any other needs the token, given once as ?token= (then kept in a
// cookie) — with no token set, only loopback is served.
func Page(c *Coach, token string) http.Handler {
	sub, _ := fs.Sub(pageFiles, "page")
	files := http.FileServerFS(sub)
	mux := http.NewServeMux()
	mux.HandleFunc("GET /state.json", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(c.State())
	})
	mux.Handle("GET /", files)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:")
		if !loopback(r) {
			ok := false
			if token != "" {
				if q := r.URL.Query().Get("token"); q != "" && subtle.ConstantTimeCompare([]byte(q), []byte(token)) == 1 {
					http.SetCookie(w, &http.Cookie{Name: PageCookie, Value: token, Path: "/", HttpOnly: true,
						SameSite: http.SameSiteStrictMode, MaxAge: int((365 * 24 * time.Hour).Seconds())})
					ok = true
				} else if ck, err := r.Cookie(PageCookie); err == nil && subtle.ConstantTimeCompare([]byte(ck.Value), []byte(token)) == 1 {
					ok = true
				}
			}
			if !ok {
				http.Error(w, "acesso negado: abra a página com o código do veículo (?token=…)", http.StatusUnauthorized)
				return
			}
		}
		mux.ServeHTTP(w, r)
	})
}

// loopback reports whether the request comes from the Pi itself.
func loopback(r *http.Request) bool {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
