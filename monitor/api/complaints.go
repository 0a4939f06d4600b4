package api

// Citizens' complaints (docs/api.md "Citizens' complaints"): a public form (no login,
// rate-limited per client address, a proof-of-work challenge, bounded input), an API for the
// city's 156/ouvidoria system (a token of its own), the matching of each complaint against the
// telemetry at once, the complainant's answer page at an unguessable URL (/r/{code}), and the
// inspectors' moderation queue and confirmation against an episode. The complainant's contact is
// personal data: never in a list, read through its own audited route, erased by the retention
// sweep or by an admin on request (audited).

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"io"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/complaints"
	"github.com/trenzinho/trenzinho/monitor/notify"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// ComplaintStore keeps the complaints; *store.DB implements it.
type ComplaintStore interface {
	AddComplaint(ctx context.Context, c *store.Complaint) error
	Complaint(ctx context.Context, id string) (*store.Complaint, error)
	ComplaintByCode(ctx context.Context, code string) (*store.Complaint, error)
	Complaints(ctx context.Context, f store.ComplaintFilter, limit int, cursor string) ([]store.Complaint, string, error)
	ModerateComplaint(ctx context.Context, id, status, user, note string) (*store.Complaint, error)
	ConfirmComplaint(ctx context.Context, id, vehicle, episodeID, user string) (*store.Complaint, error)
	MarkComplaintEmailed(ctx context.Context, id string) error
	EraseComplaintContact(ctx context.Context, id, reason string) (bool, error)
}

// ComplaintMatcher matches a complaint against the telemetry (*complaints.Matcher).
type ComplaintMatcher interface {
	Match(ctx context.Context, lat, lon float64, at time.Time) (*complaints.Result, error)
}

// ComplaintsConfig serves the complaints. Store and Matcher are required for any route.
type ComplaintsConfig struct {
	Store   ComplaintStore
	Matcher ComplaintMatcher
	// Places matches a typed address to the streets and landmarks of the geofences
	// (geofences.Set.Geocode); nil: only places picked on the map.
	Places *geofences.Set
	// Location is the time zone of the form's local times and of the answers. Default UTC.
	Location *time.Location
	// PoW issues and checks the form's challenges; nil: complaints.NewPoW(Difficulty, 0, nil).
	PoW        *complaints.PoW
	Difficulty int
	// Token authenticates the 156/ouvidoria system (TRENZINHO_COMPLAINTS_TOKEN); empty: no
	// 156 routes.
	Token string
	// PerAddress complaints are accepted from one client address per Window (default 10 in
	// 10 min); Reads bounds the other public requests (the form, the challenge, the address
	// lookup, the answer page) per address and minute (default 60).
	PerAddress int
	Window     time.Duration
	Reads      int
	// Mail sends the answer to a complainant who left an e-mail (the notifications' e-mail
	// channel); nil: no e-mail. PublicURL is the monitor's public base URL for its link.
	Mail      func(ctx context.Context, to string, m notify.Message) error
	PublicURL string
	// MatchTimeout bounds the matching of one complaint (default 20 s): past it the complaint is
	// stored and answered without the data.
	MatchTimeout time.Duration
}

// Complaint defaults.
const (
	defaultComplaintsPerAddress = 10
	defaultComplaintsWindow     = 10 * time.Minute
	defaultComplaintReads       = 60
	defaultMatchTimeout         = 20 * time.Second
	complaintMatches            = 4 // matchings at once
	complaintMails              = 4 // e-mails in flight at once; more are not sent
)

// complaintsRoutes registers the routes when configured.
func (s *Server) complaintsRoutes(a, root *http.ServeMux, static http.Handler) {
	c := s.complaints
	if c == nil || c.Store == nil || c.Matcher == nil {
		s.complaints = nil
		return
	}
	cp := *c
	c = &cp
	s.complaints = c
	if c.Location == nil {
		c.Location = time.UTC
	}
	if c.PoW == nil {
		c.PoW = complaints.NewPoW(c.Difficulty, 0, nil)
	}
	if c.PerAddress <= 0 {
		c.PerAddress = defaultComplaintsPerAddress
	}
	if c.Window <= 0 {
		c.Window = defaultComplaintsWindow
	}
	if c.Reads <= 0 {
		c.Reads = defaultComplaintReads
	}
	if c.MatchTimeout <= 0 {
		c.MatchTimeout = defaultMatchTimeout
	}
	s.complaintPosts = newThrottle(c.PerAddress, c.Window, time.Now)
	s.complaintPosts.maxKeys = publicAddresses
	s.complaintReads = newThrottle(c.Reads, time.Minute, time.Now)
	s.complaintReads.maxKeys = publicAddresses
	s.complaintSlots = make(chan struct{}, complaintMatches)
	s.complaintMails = make(chan struct{}, complaintMails)

	limited := func(t *throttle, h http.HandlerFunc) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			ip := remoteIP(r)
			if left, ok := t.admit(ip); !ok {
				w.Header().Set("Retry-After", strconv.Itoa(int(math.Ceil(max(left, time.Second).Seconds()))))
				s.writeError(w, r, http.StatusTooManyRequests, "muitas reclamações deste endereço: tente de novo mais tarde")
				return
			}
			t.done(ip, true) // every request counts
			h(w, r)
		})
	}
	a.Handle("GET /api/v1/public/complaints/config", limited(s.complaintReads, s.handleComplaintFormConfig))
	a.Handle("GET /api/v1/public/complaints/challenge", limited(s.complaintReads, s.handleComplaintChallenge))
	a.Handle("GET /api/v1/public/geocode", limited(s.complaintReads, s.handleGeocode))
	a.Handle("POST /api/v1/public/complaints", limited(s.complaintPosts, s.handlePublicComplaint))
	root.Handle("GET /r/{code}", limited(s.complaintReads, s.handleComplaintAnswer))
	if static != nil {
		root.Handle("GET /reclamacao", limited(s.complaintReads, func(w http.ResponseWriter, r *http.Request) {
			r2 := r.Clone(r.Context())
			r2.URL.Path = "/reclamacao.html"
			static.ServeHTTP(w, r2)
		}))
	}
	if c.Token != "" {
		a.HandleFunc("POST /api/v1/ouvidoria/complaints", s.requireComplaintsToken(s.handleOuvidoriaComplaint))
		a.HandleFunc("GET /api/v1/ouvidoria/complaints/{id}", s.requireComplaintsToken(s.handleOuvidoriaGet))
	}
	a.Handle("GET /api/v1/complaints", s.requireRole(store.RoleFiscal, s.handleComplaints))
	a.Handle("GET /api/v1/complaints/{id}", s.requireRole(store.RoleFiscal, s.handleComplaint))
	a.Handle("GET /api/v1/complaints/{id}/contact", s.requireRole(store.RoleFiscal, s.handleComplaintContact))
	a.Handle("POST /api/v1/complaints/{id}/moderation", s.requireRole(store.RoleFiscal, s.handleComplaintModeration))
	a.Handle("POST /api/v1/complaints/{id}/confirm", s.requireRole(store.RoleFiscal, s.handleComplaintConfirm))
	a.Handle("DELETE /api/v1/complaints/{id}/contact", s.requireRole(store.RoleAdmin, s.handleComplaintErase))
	a.Handle("GET /api/v1/episodes/{id}/complaints", s.requireRole(store.RoleFiscal, s.handleEpisodeComplaints))
}

// requireComplaintsToken admits the 156 system's requests: "Authorization: Bearer <token>"
// compared in constant time. A wrong token counts against the address like a failed login.
func (s *Server) requireComplaintsToken(h http.HandlerFunc) http.HandlerFunc {
	want := sha256.Sum256([]byte(s.complaints.Token))
	return func(w http.ResponseWriter, r *http.Request) {
		ip := remoteIP(r)
		if _, ok := s.throttle.admit(ip); !ok {
			s.writeError(w, r, http.StatusTooManyRequests, "muitas tentativas: tente de novo mais tarde")
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		got := sha256.Sum256([]byte(tok))
		good := ok && subtle.ConstantTimeCompare(got[:], want[:]) == 1
		s.throttle.done(ip, !good)
		if !good {
			s.writeError(w, r, http.StatusUnauthorized, "token da ouvidoria inválido")
			return
		}
		h(w, r)
	}
}

// ComplaintFormConfig is what the public form needs to draw its map and explain itself.
type ComplaintFormConfig struct {
	TileURL   string     `json:"tile_url"` // the dashboard's (TRENZINHO_TILE_URL); "": no tiles
	Center    [2]float64 `json:"center"`   // lat, lon: the middle of the geofences
	RadiusM   float64    `json:"radius_m"`
	WindowMin float64    `json:"window_min"`
	TimeZone  string     `json:"time_zone"`
	Kinds     []struct {
		ID    string `json:"id"`
		Label string `json:"label"`
	} `json:"kinds"`
}

func (s *Server) handleComplaintFormConfig(w http.ResponseWriter, r *http.Request) {
	out := ComplaintFormConfig{TileURL: s.mapCfg.TileURL, TimeZone: s.complaints.Location.String(), RadiusM: 300, WindowMin: 15}
	if p := s.mapCfg.Profile; p != nil {
		out.RadiusM, out.WindowMin = p.Complaints.Radius(), p.Complaints.Window().Minutes()
	}
	if set := s.complaints.Places; set != nil && set.Len() > 0 {
		var b orb.Bound
		for i, f := range set.Features() {
			if i == 0 {
				b = f.Bound()
			} else {
				b = b.Union(f.Bound())
			}
		}
		c := b.Center()
		out.Center = [2]float64{c.Lat(), c.Lon()}
	}
	for _, k := range complaints.Kinds {
		out.Kinds = append(out.Kinds, struct {
			ID    string `json:"id"`
			Label string `json:"label"`
		}{string(k), k.Label()})
	}
	s.writeJSON(w, r, http.StatusOK, out)
}

func (s *Server) handleComplaintChallenge(w http.ResponseWriter, r *http.Request) {
	s.writeJSON(w, r, http.StatusOK, s.complaints.PoW.Issue())
}

// GeocodeHit is one answer of GET /api/v1/public/geocode.
type GeocodeHit struct {
	Name string  `json:"name"`
	Kind string  `json:"kind"`
	Lat  float64 `json:"lat"`
	Lon  float64 `json:"lon"`
}

func (s *Server) handleGeocode(w http.ResponseWriter, r *http.Request) {
	out := []GeocodeHit{}
	if q := r.URL.Query().Get("q"); s.complaints.Places != nil && q != "" {
		for _, h := range s.complaints.Places.Geocode(q, 8) {
			out = append(out, GeocodeHit{Name: h.Feature.Name, Kind: string(h.Feature.Kind), Lat: h.Point.Lat(), Lon: h.Point.Lon()})
		}
	}
	s.writeJSON(w, r, http.StatusOK, map[string]any{"items": out})
}

// ComplaintReceipt is the answer to a new complaint.
type ComplaintReceipt struct {
	ID        string   `json:"id"`
	AnswerURL string   `json:"answer_url"`
	Answer    []string `json:"answer"`
	// Result is the matching with plates and speeds: for the 156 system (the municipality's),
	// never in the public form's receipt (LGPD: the public reads only Answer).
	Result *complaints.Result `json:"result,omitempty"`
	Place  *ComplaintPlace    `json:"place"`
}

// ComplaintPlace is where the complaint was placed (the map's point or the address's match).
type ComplaintPlace struct {
	Lat     float64 `json:"lat"`
	Lon     float64 `json:"lon"`
	Matched string  `json:"matched,omitempty"` // the name the typed address matched
}

// readComplaint reads and checks a complaint body; on error it has answered.
func (s *Server) readComplaint(w http.ResponseWriter, r *http.Request) (*complaints.Input, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, complaints.MaxBodyBytes))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		s.writeError(w, r, http.StatusRequestEntityTooLarge, "reclamação grande demais")
		return nil, false
	}
	if err != nil {
		s.writeError(w, r, http.StatusBadRequest, "reclamação malformada")
		return nil, false
	}
	in, err := complaints.ParseInput(body, s.now(), s.complaints.Location)
	if err != nil {
		var ie *complaints.InputError
		if errors.As(err, &ie) {
			s.writeError(w, r, http.StatusBadRequest, ie.Msg)
		} else {
			s.writeError(w, r, http.StatusBadRequest, "reclamação malformada")
		}
		return nil, false
	}
	return in, true
}

func (s *Server) handlePublicComplaint(w http.ResponseWriter, r *http.Request) {
	in, ok := s.readComplaint(w, r)
	if !ok {
		return
	}
	if in.ExternalRef != "" {
		s.writeError(w, r, http.StatusBadRequest, "protocolo só pela API da ouvidoria")
		return
	}
	if err := s.complaints.PoW.Verify(in.Challenge, in.Nonce); err != nil {
		s.writeError(w, r, http.StatusForbidden, err.Error())
		return
	}
	s.newComplaint(w, r, in, "form")
}

func (s *Server) handleOuvidoriaComplaint(w http.ResponseWriter, r *http.Request) {
	in, ok := s.readComplaint(w, r)
	if !ok {
		return
	}
	s.newComplaint(w, r, in, "156")
}

// newComplaint places, matches, stores and answers a checked complaint.
func (s *Server) newComplaint(w http.ResponseWriter, r *http.Request, in *complaints.Input, source string) {
	c := s.complaints
	place := &ComplaintPlace{Lat: in.Lat, Lon: in.Lon}
	if !in.HasPlace {
		var hits []geofences.GeocodeHit
		if c.Places != nil {
			hits = c.Places.Geocode(in.Address, 1)
		}
		if len(hits) == 0 {
			s.writeError(w, r, http.StatusUnprocessableEntity, "endereço não encontrado: marque o local no mapa")
			return
		}
		place = &ComplaintPlace{Lat: hits[0].Point.Lat(), Lon: hits[0].Point.Lon(), Matched: hits[0].Feature.Name}
	}
	rec := &store.Complaint{Source: source, ExternalRef: in.ExternalRef, Lat: place.Lat, Lon: place.Lon, Address: in.Address,
		At: in.At, Kind: string(in.Kind), Text: in.Text, Contact: in.Contact}
	res, err := s.matchComplaint(r.Context(), place.Lat, place.Lon, in.At)
	if err != nil {
		s.log.Error("complaint matching", "err", err)
		rec.Answer = []string{"Não foi possível consultar os dados dos trenzinhos agora. A reclamação foi registrada e será analisada pela fiscalização."}
		rec.Result = json.RawMessage("null")
	} else {
		rec.Answer = complaints.Answer(res, c.Location)
		if rec.Result, err = json.Marshal(res); err != nil {
			s.internalError(w, r, err)
			return
		}
	}
	if err := c.Store.AddComplaint(r.Context(), rec); err != nil {
		s.internalError(w, r, err)
		return
	}
	s.log.Info("complaint received", "id", rec.ID, "source", source, "kind", rec.Kind, "matches", matchCount(res))
	if rec.Contact != "" && c.Mail != nil {
		s.mailComplaint(rec)
	}
	rc := ComplaintReceipt{ID: rec.ID, AnswerURL: "/r/" + rec.Code, Answer: rec.Answer, Place: place}
	if source != "form" {
		rc.Result = res
	}
	s.writeJSON(w, r, http.StatusCreated, rc)
}

// withDetail sets the staff's reading of each complaint's matching (complaints.Detail).
func (s *Server) withDetail(cs ...*store.Complaint) {
	for _, c := range cs {
		c.Detail = nil
		var res complaints.Result
		if len(c.Result) > 0 && json.Unmarshal(c.Result, &res) == nil && !res.From.IsZero() {
			c.Detail = complaints.Detail(&res, s.complaints.Location)
		}
	}
}

func matchCount(res *complaints.Result) int {
	if res == nil {
		return -1
	}
	return len(res.Matches)
}

// matchComplaint runs the matcher, at most complaintMatches at once and within MatchTimeout.
func (s *Server) matchComplaint(ctx context.Context, lat, lon float64, at time.Time) (*complaints.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, s.complaints.MatchTimeout)
	defer cancel()
	select {
	case s.complaintSlots <- struct{}{}:
		defer func() { <-s.complaintSlots }()
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	return s.complaints.Matcher.Match(ctx, lat, lon, at)
}

// mailComplaint e-mails the answer in the background; a failure is logged (the answer page
// remains). At most complaintMails are in flight: past that the e-mail is not sent.
func (s *Server) mailComplaint(rec *store.Complaint) {
	select {
	case s.complaintMails <- struct{}{}:
	default:
		s.log.Warn("complaint e-mail skipped: too many in flight", "id", rec.ID)
		return
	}
	link := strings.TrimRight(s.complaints.PublicURL, "/") + "/r/" + rec.Code
	text := "Recebemos a sua reclamação sobre os trenzinhos turísticos.\n\n" + strings.Join(rec.Answer, "\n") +
		"\n\n" + complaints.EstimateNote + "\n\nAcompanhe em: " + link +
		"\n\nSeu e-mail será apagado após o prazo de guarda previsto; você pode pedir a exclusão antes à ouvidoria.\n"
	msg := notify.Message{Subject: "Sua reclamação sobre os trenzinhos", Text: text, Link: link, Tag: rec.ID, Count: 1}
	go func() {
		defer func() { <-s.complaintMails }()
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := s.complaints.Mail(ctx, rec.Contact, msg); err != nil {
			s.log.Warn("complaint e-mail", "id", rec.ID, "err", err)
			return
		}
		if err := s.complaints.Store.MarkComplaintEmailed(ctx, rec.ID); err != nil {
			s.log.Error("complaint e-mail", "id", rec.ID, "err", err)
		}
	}()
}

// OuvidoriaComplaint is what the 156 system reads of a complaint: never the contact.
type OuvidoriaComplaint struct {
	ID          string          `json:"id"`
	ExternalRef string          `json:"external_ref,omitempty"`
	Status      string          `json:"status"`
	AnswerURL   string          `json:"answer_url"`
	Answer      []string        `json:"answer"`
	Result      json.RawMessage `json:"result"`
	EpisodeID   string          `json:"episode_id,omitempty"`
	CreatedAt   time.Time       `json:"created_at"`
}

func (s *Server) handleOuvidoriaGet(w http.ResponseWriter, r *http.Request) {
	c, err := s.complaints.Store.Complaint(r.Context(), r.PathValue("id"))
	if err != nil || c.Source != "156" {
		if err == nil || errors.Is(err, store.ErrNotFound) {
			s.writeError(w, r, http.StatusNotFound, "reclamação não encontrada")
			return
		}
		s.internalError(w, r, err)
		return
	}
	s.writeJSON(w, r, http.StatusOK, OuvidoriaComplaint{ID: c.ID, ExternalRef: c.ExternalRef, Status: c.Status,
		AnswerURL: "/r/" + c.Code, Answer: c.Answer, Result: c.Result, EpisodeID: c.EpisodeID, CreatedAt: c.CreatedAt})
}

// The inspectors' routes.

func (s *Server) handleComplaints(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	f := store.ComplaintFilter{Status: q.Get("status"), EpisodeID: q.Get("episode")}
	switch f.Status {
	case "", store.ComplaintPending, store.ComplaintAccepted, store.ComplaintRejected:
	default:
		s.writeError(w, r, http.StatusBadRequest, "status inválido: pending, accepted ou rejected")
		return
	}
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			s.writeError(w, r, http.StatusBadRequest, "limit inválido: 1 a 500")
			return
		}
		limit = n
	}
	items, next, err := s.complaints.Store.Complaints(r.Context(), f, limit, q.Get("cursor"))
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	for i := range items {
		s.withDetail(&items[i])
	}
	s.writeJSON(w, r, http.StatusOK, newList(items, next))
}

// complaintOr404 loads the complaint of the path; on error it has answered.
func (s *Server) complaintOr404(w http.ResponseWriter, r *http.Request) (*store.Complaint, bool) {
	c, err := s.complaints.Store.Complaint(r.Context(), r.PathValue("id"))
	if errors.Is(err, store.ErrNotFound) {
		s.writeError(w, r, http.StatusNotFound, "reclamação não encontrada")
		return nil, false
	}
	if err != nil {
		s.internalError(w, r, err)
		return nil, false
	}
	return c, true
}

// handleComplaint serves one complaint, without its contact (GET …/contact reads it, audited).
func (s *Server) handleComplaint(w http.ResponseWriter, r *http.Request) {
	c, ok := s.complaintOr404(w, r)
	if !ok {
		return
	}
	c.Contact = ""
	s.withDetail(c)
	s.writeJSON(w, r, http.StatusOK, c)
}

// handleComplaintContact reads the complainant's contact: personal data, every read audited.
func (s *Server) handleComplaintContact(w http.ResponseWriter, r *http.Request) {
	c, ok := s.complaintOr404(w, r)
	if !ok {
		return
	}
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: "complaint.contact_read", Object: "complaint:" + c.ID})
	s.writeJSON(w, r, http.StatusOK, map[string]any{"contact": c.Contact, "has_contact": c.HasContact,
		"contact_erased_at": c.ContactErasedAt, "contact_erased_reason": c.ContactErasedWhy})
}

func (s *Server) handleComplaintModeration(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Status string `json:"status"`
		Note   string `json:"note"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	if len(body.Note) > 1000 {
		s.writeError(w, r, http.StatusBadRequest, "observação longa demais")
		return
	}
	u := userFrom(r.Context())
	c, err := s.complaints.Store.ModerateComplaint(r.Context(), r.PathValue("id"), body.Status, u.Name, body.Note)
	if !s.complaintChanged(w, r, err) {
		return
	}
	after, _ := json.Marshal(map[string]string{"status": c.Status, "note": c.ModerationNote})
	s.record(r, store.AuditEntry{User: u.Name, Action: "complaint.moderate", Object: "complaint:" + c.ID, After: after})
	c.Contact = ""
	s.writeJSON(w, r, http.StatusOK, c)
}

// complaintChanged answers a store error of a change; it reports whether there was none.
func (s *Server) complaintChanged(w http.ResponseWriter, r *http.Request, err error) bool {
	switch {
	case err == nil:
		return true
	case errors.Is(err, store.ErrNotFound):
		s.writeError(w, r, http.StatusNotFound, "reclamação não encontrada")
	case errors.Is(err, store.ErrComplaintState):
		msg := "a situação da reclamação não permite"
		if strings.Contains(err.Error(), "status") {
			msg = "status inválido: accepted ou rejected"
			s.writeError(w, r, http.StatusBadRequest, msg)
			return false
		}
		s.writeError(w, r, http.StatusConflict, msg)
	default:
		s.internalError(w, r, err)
	}
	return false
}

// handleComplaintConfirm attaches the complaint to an episode of one of its matched vehicles
// as supporting evidence (never the ground of an auto: docs/process.md).
func (s *Server) handleComplaintConfirm(w http.ResponseWriter, r *http.Request) {
	var body struct {
		EpisodeID string `json:"episode_id"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	c, ok := s.complaintOr404(w, r)
	if !ok {
		return
	}
	ep, err := s.episodes.Episode(r.Context(), body.EpisodeID)
	if errors.Is(err, store.ErrNotFound) {
		s.writeError(w, r, http.StatusUnprocessableEntity, "episódio não encontrado")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	var res complaints.Result
	matched := false
	if json.Unmarshal(c.Result, &res) == nil {
		for _, m := range res.Matches {
			matched = matched || m.Vehicle == ep.Vehicle
		}
	}
	if !matched {
		s.writeError(w, r, http.StatusUnprocessableEntity, "o veículo do episódio não passou pelo local da reclamação")
		return
	}
	// The episode must overlap the complaint's window: the same vehicle's episode of another day
	// is not what the citizen heard.
	end := s.now()
	if ep.End != nil {
		end = ep.End.Time
	}
	if ep.Start.Time.After(res.To) || end.Before(res.From) {
		s.writeError(w, r, http.StatusUnprocessableEntity, "o episódio não coincide com o horário da reclamação")
		return
	}
	u := userFrom(r.Context())
	c, err = s.complaints.Store.ConfirmComplaint(r.Context(), c.ID, ep.Vehicle, ep.ID, u.Name)
	if !s.complaintChanged(w, r, err) {
		return
	}
	after, _ := json.Marshal(map[string]string{"vehicle": ep.Vehicle, "episode_id": ep.ID})
	s.record(r, store.AuditEntry{User: u.Name, Action: "complaint.confirm", Object: "complaint:" + c.ID, After: after})
	c.Contact = ""
	s.writeJSON(w, r, http.StatusOK, c)
}

// handleComplaintErase erases the contact on its holder's request (LGPD art. 18, VI): admin,
// audited with the reason, never with the contact.
func (s *Server) handleComplaintErase(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Reason string `json:"reason"`
	}
	if !s.decodeBody(w, r, &body) {
		return
	}
	body.Reason = strings.TrimSpace(body.Reason)
	if body.Reason == "" || len(body.Reason) > 500 {
		s.writeError(w, r, http.StatusBadRequest, "informe o motivo (até 500 caracteres), por exemplo o pedido do titular")
		return
	}
	id := r.PathValue("id")
	erased, err := s.complaints.Store.EraseComplaintContact(r.Context(), id, body.Reason)
	if errors.Is(err, store.ErrNotFound) {
		s.writeError(w, r, http.StatusNotFound, "reclamação não encontrada")
		return
	}
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	after, _ := json.Marshal(map[string]any{"erased": erased, "reason": body.Reason})
	s.record(r, store.AuditEntry{User: userFrom(r.Context()).Name, Action: "complaint.contact_erase", Object: "complaint:" + id, After: after})
	s.writeJSON(w, r, http.StatusOK, map[string]bool{"erased": erased})
}

// handleEpisodeComplaints lists the complaints confirmed against an episode: supporting
// evidence shown with it.
func (s *Server) handleEpisodeComplaints(w http.ResponseWriter, r *http.Request) {
	items, _, err := s.complaints.Store.Complaints(r.Context(), store.ComplaintFilter{EpisodeID: r.PathValue("id")}, 100, "")
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	for i := range items {
		s.withDetail(&items[i])
	}
	s.writeJSON(w, r, http.StatusOK, newList(items, ""))
}

// The answer page.

type complaintPage struct {
	Found     bool
	Message   string
	Kind      string
	At        string
	Address   string
	Place     string
	Answer    []string
	Estimate  bool
	Note      string
	Status    string
	Confirmed bool
	Received  string
}

func (s *Server) handleComplaintAnswer(w http.ResponseWriter, r *http.Request) {
	c, err := s.complaints.Store.ComplaintByCode(r.Context(), r.PathValue("code"))
	if errors.Is(err, store.ErrNotFound) {
		s.complaintAnswer(w, http.StatusNotFound, &complaintPage{Message: "Reclamação não encontrada."})
		return
	}
	if err != nil {
		s.log.Error("complaint answer page", "err", err)
		s.complaintAnswer(w, http.StatusInternalServerError, &complaintPage{Message: "Erro interno do servidor."})
		return
	}
	loc := s.complaints.Location
	p := &complaintPage{Found: true, Kind: complaints.Kind(c.Kind).Label(), At: c.At.In(loc).Format("02/01/2006 15:04"),
		Address: c.Address, Place: fmt.Sprintf("%.5f, %.5f", c.Lat, c.Lon), Answer: c.Answer, Note: complaints.EstimateNote,
		Received: c.CreatedAt.In(loc).Format("02/01/2006 15:04")}
	var res complaints.Result
	if json.Unmarshal(c.Result, &res) == nil {
		for _, m := range res.Matches {
			p.Estimate = p.Estimate || m.LevelDB != nil
		}
	}
	switch {
	case c.EpisodeID != "":
		p.Status, p.Confirmed = "Confirmada pela fiscalização e juntada a um episódio como indício.", true
	case c.Status == store.ComplaintAccepted:
		p.Status = "Analisada pela fiscalização."
	case c.Status == store.ComplaintRejected:
		p.Status = "Arquivada pela fiscalização."
	default:
		p.Status = "Aguardando análise da fiscalização."
	}
	s.complaintAnswer(w, http.StatusOK, p)
}

func (s *Server) complaintAnswer(w http.ResponseWriter, status int, p *complaintPage) {
	var buf bytes.Buffer
	if err := complaintTemplate.Execute(&buf, p); err != nil {
		s.log.Error("complaint answer page", "err", err)
		http.Error(w, "erro interno do servidor", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Cache-Control", "no-store")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src '"+complaintStyleHash+"'; form-action 'none'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Robots-Tag", "noindex")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

const complaintStyle = `body{font-family:system-ui,sans-serif;max-width:40rem;margin:1rem auto;padding:0 1rem;color:#1b1b1b;line-height:1.5}
h1{font-size:1.3rem}dt{font-weight:600;margin-top:.6rem}dd{margin:0}.answer{background:#eef3fb;border-left:4px solid #1a56a8;padding:.6rem .9rem}
.bad{background:#fdecea;border:2px solid #b3261e;padding:.8rem}small{color:#555}a{color:#1a56a8}`

var complaintStyleHash = func() string {
	sum := sha256.Sum256([]byte(complaintStyle))
	return "sha256-" + base64.StdEncoding.EncodeToString(sum[:])
}()

var complaintTemplate = template.Must(template.New("complaint").Parse(`<!doctype html>
<html lang="pt-BR"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<meta name="robots" content="noindex">
<title>Resposta à sua reclamação — trenzinhos</title><style>` + complaintStyle + `</style></head><body>
<h1>Resposta à sua reclamação</h1>
{{if .Message}}<p class="bad">{{.Message}}</p>{{end}}
{{if .Found}}
<section class="answer" id="resposta" aria-label="O que os dados mostram">
{{range .Answer}}<p>{{.}}</p>{{end}}
</section>
{{if .Estimate}}<p><small>{{.Note}}</small></p>{{end}}
<dl>
<dt>Situação</dt><dd id="situacao">{{.Status}}</dd>
<dt>Tipo</dt><dd>{{.Kind}}</dd>
<dt>Horário informado</dt><dd>{{.At}}</dd>
{{if .Address}}<dt>Endereço informado</dt><dd>{{.Address}}</dd>{{end}}
<dt>Local considerado</dt><dd>{{.Place}}</dd>
<dt>Recebida em</dt><dd>{{.Received}}</dd>
</dl>
<p><small>Guarde o endereço desta página: ele é a única forma de consultá-la. Esta página não mostra seus dados de contato.</small></p>
{{end}}
<p><a href="/reclamacao">Fazer outra reclamação</a></p>
</body></html>
`))
