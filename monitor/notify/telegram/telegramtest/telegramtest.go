// Package telegramtest is a local stand-in for the Telegram Bot API for tests: the real API
// (api.telegram.org) is unreachable from the test machines, so this server checks each request
// the way https://core.telegram.org/bots/api documents it and answers as the API does.
package telegramtest

import (
	"encoding/json"
	"fmt"
	"mime"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// Request is one accepted call.
type Request struct {
	Method    string // sendMessage, sendLocation
	ChatID    json.RawMessage
	Text      string
	ParseMode string
	Latitude  float64
	Longitude float64
}

// Failure is a scripted error reply.
type Failure struct {
	Code       int
	RetryAfter int // seconds; sent in parameters.retry_after when > 0
}

// Server is a running fake Bot API.
type Server struct {
	URL   string
	Token string

	mu       sync.Mutex
	reqs     []Request
	failures []Failure
	problems []string
}

// Start runs a server until the test ends. It fails the test if a request breaks the
// documented form.
func Start(t testing.TB) *Server {
	s := &Server{Token: "123456:ABC-teste_do_trenzinho"}
	ts := httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = ts.URL
	t.Cleanup(func() {
		ts.Close()
		for _, p := range s.Problems() {
			t.Errorf("telegramtest: %s", p)
		}
	})
	return s
}

// FailNext makes the next calls fail with these replies, in order.
func (s *Server) FailNext(f ...Failure) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failures = append(s.failures, f...)
}

// Requests returns the accepted calls so far.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.reqs...)
}

// Problems lists the malformed requests seen.
func (s *Server) Problems() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.problems...)
}

// telegramHTML: the tags the Bot API's HTML parse mode accepts.
var telegramTag = regexp.MustCompile(`</?([a-zA-Z-]+)[^>]*>`)

var allowedTags = map[string]bool{"b": true, "strong": true, "i": true, "em": true, "u": true, "ins": true,
	"s": true, "strike": true, "del": true, "span": true, "tg-spoiler": true, "a": true, "code": true,
	"pre": true, "blockquote": true, "tg-emoji": true}

func (s *Server) reply(w http.ResponseWriter, code int, desc string, retryAfter int) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	r := map[string]any{"ok": false, "error_code": code, "description": desc}
	if retryAfter > 0 {
		r["parameters"] = map[string]any{"retry_after": retryAfter}
	}
	json.NewEncoder(w).Encode(r)
}

func (s *Server) bad(w http.ResponseWriter, format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	s.mu.Lock()
	s.problems = append(s.problems, msg)
	s.mu.Unlock()
	s.reply(w, http.StatusBadRequest, "Bad Request: "+msg, 0)
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	// "All queries to the Telegram Bot API must be served over HTTPS and need to be presented
	// in this form: https://api.telegram.org/bot<token>/METHOD_NAME" (HTTP here: a local test).
	rest, ok := strings.CutPrefix(r.URL.Path, "/bot")
	if !ok {
		s.reply(w, http.StatusNotFound, "Not Found", 0)
		return
	}
	token, method, ok := strings.Cut(rest, "/")
	if !ok || token != s.Token {
		s.reply(w, http.StatusUnauthorized, "Unauthorized", 0)
		return
	}
	if r.Method != http.MethodPost {
		s.bad(w, "%s with %s: the client posts", method, r.Method)
		return
	}
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		s.bad(w, "%s: content type %q, want application/json", method, r.Header.Get("Content-Type"))
		return
	}
	dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	dec.DisallowUnknownFields()
	var req Request
	switch method {
	case "sendMessage":
		var b struct {
			ChatID             json.RawMessage `json:"chat_id"`
			Text               string          `json:"text"`
			ParseMode          string          `json:"parse_mode"`
			LinkPreviewOptions *struct {
				IsDisabled bool `json:"is_disabled"`
			} `json:"link_preview_options"`
		}
		if err := dec.Decode(&b); err != nil {
			s.bad(w, "sendMessage: %v", err)
			return
		}
		if n := utf8.RuneCountInString(b.Text); n < 1 || n > 4096 {
			s.bad(w, "sendMessage: text of %d characters, want 1-4096", n)
			return
		}
		switch b.ParseMode {
		case "", "MarkdownV2", "Markdown":
		case "HTML":
			for _, m := range telegramTag.FindAllStringSubmatch(b.Text, -1) {
				if !allowedTags[strings.ToLower(m[1])] {
					s.bad(w, "sendMessage: can't parse entities: unsupported start tag %q", m[1])
					return
				}
			}
		default:
			s.bad(w, "sendMessage: unsupported parse_mode %q", b.ParseMode)
			return
		}
		req = Request{Method: method, ChatID: b.ChatID, Text: b.Text, ParseMode: b.ParseMode}
	case "sendLocation":
		var b struct {
			ChatID    json.RawMessage `json:"chat_id"`
			Latitude  *float64        `json:"latitude"`
			Longitude *float64        `json:"longitude"`
		}
		if err := dec.Decode(&b); err != nil {
			s.bad(w, "sendLocation: %v", err)
			return
		}
		if b.Latitude == nil || b.Longitude == nil || *b.Latitude < -90 || *b.Latitude > 90 || *b.Longitude < -180 || *b.Longitude > 180 {
			s.bad(w, "sendLocation: latitude and longitude required and in range")
			return
		}
		req = Request{Method: method, ChatID: b.ChatID, Latitude: *b.Latitude, Longitude: *b.Longitude}
	default:
		s.reply(w, http.StatusNotFound, "Not Found: method not found", 0)
		return
	}
	// chat_id: "Integer or String: unique identifier for the target chat or username of the
	// target channel (in the format @channelusername)".
	var id int64
	var name string
	if json.Unmarshal(req.ChatID, &id) != nil && (json.Unmarshal(req.ChatID, &name) != nil || !strings.HasPrefix(name, "@")) {
		s.bad(w, "%s: chat_id %s is neither an integer nor @username", method, req.ChatID)
		return
	}

	s.mu.Lock()
	if len(s.failures) > 0 {
		f := s.failures[0]
		s.failures = s.failures[1:]
		s.mu.Unlock()
		desc := map[int]string{429: "Too Many Requests: retry after", 403: "Forbidden: bot was blocked by the user",
			400: "Bad Request: chat not found", 500: "Internal Server Error", 502: "Bad Gateway"}[f.Code]
		s.reply(w, f.Code, desc, f.RetryAfter)
		return
	}
	s.reqs = append(s.reqs, req)
	n := len(s.reqs)
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"ok":true,"result":{"message_id":%d,"date":0,"chat":{"id":%s,"type":"private"}}}`, n, req.ChatID)
}
