package api

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/photo"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// The dashboard in the inspector's pocket (docs/api.md, "Em campo"): the photos of field
// verifications, the key each session signs its field verifications with, and "Perto de mim".

// Photos stores the photos of field verifications by SHA-256; *store.DB implements it.
type Photos interface {
	PutPhoto(ctx context.Context, info *photo.Info, data []byte, by string) (*rules.Photo, error)
	PhotoInfo(ctx context.Context, sha256hex string) (*rules.Photo, error)
	PhotoData(ctx context.Context, sha256hex string) ([]byte, string, error)
}

// Bounds of field verifications.
const (
	maxVerificationPhotos = 10
	photoConcurrency      = 2 // photos read and checked at once (each up to photo.MaxBytes)
	defaultNearbyM        = 1000
	maxNearbyM            = 5000
)

func (s *Server) fieldRoutes(a *http.ServeMux) {
	a.Handle("GET /api/v1/nearby", s.requireRole(store.RoleViewer, s.handleNearby))
	if s.photos == nil {
		return
	}
	a.Handle("POST /api/v1/photos", s.requireRole(store.RoleFiscal, s.handlePhotoUpload))
	// A photo may show people: personal data, fiscal and above.
	a.Handle("GET /api/v1/photos/{sha256}", s.requireRole(store.RoleFiscal, s.handlePhoto))
}

// fieldKey is the key a session signs its field verifications with, as the session and login
// answers hand it to the dashboard.
type fieldKey struct {
	Session string `json:"session"` // the session's public id: not its token
	Key     string `json:"key"`     // base64 of the 32-byte HMAC-SHA256 key
}

// sessionID is the public id of a session: the first 16 bytes of the SHA-256 of its token, hex.
// It names the session in a signature without revealing the token.
func sessionID(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:16])
}

// sessionFieldKey derives the key of user's session id from the server's field secret:
// HMAC-SHA256(secret, "trenzinho field key v1" 0 user 0 session). Nothing is stored: the monitor
// recomputes it to check a signature, even after the session ended (an item queued offline may
// arrive after its session expired and the agent signed in again).
func (s *Server) sessionFieldKey(user, session string) []byte {
	m := hmac.New(sha256.New, s.fieldSecret)
	m.Write([]byte("trenzinho field key v1\x00" + user + "\x00" + session))
	return m.Sum(nil)
}

// fieldKeyFor is the key handed to the session of r, nil when the user cannot record
// verifications or the server signs none.
func (s *Server) fieldKeyFor(token string, u *store.User) *fieldKey {
	if len(s.fieldSecret) == 0 || !u.Role.AtLeast(store.RoleFiscal) || token == "" {
		return nil
	}
	id := sessionID(token)
	return &fieldKey{Session: id, Key: base64.StdEncoding.EncodeToString(s.sessionFieldKey(u.Name, id))}
}

// fieldMessage is what a field verification's signature covers: each field as its length in
// bytes, ":", the value and a line feed (unambiguous whatever the note holds). The dashboard
// builds the same bytes (static/js/field.js).
func fieldMessage(episode string, req *verificationRequest) []byte {
	boolean := func(b *bool) string {
		if b == nil {
			return ""
		}
		return strconv.FormatBool(*b)
	}
	var sb strings.Builder
	for _, f := range []string{"trenzinho-constatacao-v1", episode, req.Kind, req.CapturedAt, boolean(req.MusicAudible),
		boolean(req.Boarding), req.Note, strings.Join(req.Photos, ","), req.Signature.Client} {
		sb.WriteString(strconv.Itoa(len(f)))
		sb.WriteByte(':')
		sb.WriteString(f)
		sb.WriteByte('\n')
	}
	return []byte(sb.String())
}

// checkSignature verifies a field verification's signature by the key of the session it names,
// derived for the signed-in user. It returns the problem in Portuguese, "" when it verifies.
func (s *Server) checkSignature(user, episode string, req *verificationRequest) string {
	sig := req.Signature
	if len(s.fieldSecret) == 0 {
		return "este servidor não recebe constatações assinadas"
	}
	if len(sig.Session) != 32 || !isHex(sig.Session) || sig.Client == "" || len(sig.Client) > 64 {
		return "signature.session ou signature.client_id inválido"
	}
	got, err := base64.StdEncoding.DecodeString(sig.HMAC)
	if err != nil || len(got) != sha256.Size {
		return "signature.hmac deve ser o HMAC-SHA256 em base64"
	}
	m := hmac.New(sha256.New, s.sessionFieldKey(user, sig.Session))
	m.Write(fieldMessage(episode, req))
	if !hmac.Equal(got, m.Sum(nil)) {
		return "a assinatura da constatação não confere com a chave da sessão"
	}
	return ""
}

func isHex(s string) bool {
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

// handlePhotoUpload serves POST /api/v1/photos: the body is the photo (JPEG or PNG, recognised
// by content; at most photo.MaxBytes). It answers 201 with what the monitor read of it — its
// SHA-256, type, size, and the capture time and position its EXIF states — or 200 when those
// bytes were received before (the first receipt is kept). A verification then names it by hash.
func (s *Server) handlePhotoUpload(w http.ResponseWriter, r *http.Request) {
	select {
	case s.photoSlots <- struct{}{}:
		defer func() { <-s.photoSlots }()
	case <-r.Context().Done():
		return
	}
	b, err := io.ReadAll(http.MaxBytesReader(w, r.Body, photo.MaxBytes))
	var tooLarge *http.MaxBytesError
	if errors.As(err, &tooLarge) {
		s.writeError(w, r, http.StatusRequestEntityTooLarge, "foto grande demais (máximo "+strconv.Itoa(photo.MaxBytes>>20)+" MiB)")
		return
	}
	if err != nil {
		s.writeError(w, r, http.StatusBadRequest, "corpo da requisição ilegível")
		return
	}
	info, err := photo.Check(b)
	if err != nil {
		s.writeError(w, r, http.StatusUnsupportedMediaType, "a foto deve ser JPEG ou PNG (o conteúdo é verificado, não o nome)")
		return
	}
	user := userFrom(r.Context())
	status := http.StatusCreated
	if _, err := s.photos.PhotoInfo(r.Context(), info.SHA256); err == nil {
		status = http.StatusOK
	}
	p, err := s.photos.PutPhoto(r.Context(), info, b, user.Name)
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	if status == http.StatusCreated {
		s.record(r, store.AuditEntry{User: user.Name, Action: "photo.upload", Object: "photo:" + p.SHA256})
	}
	s.writeJSON(w, r, status, p)
}

// handlePhoto serves GET /api/v1/photos/{sha256}: the bytes, never cached by the browser (a
// photo may show people).
func (s *Server) handlePhoto(w http.ResponseWriter, r *http.Request) {
	sum := r.PathValue("sha256")
	if !photo.ValidSHA256(sum) {
		s.writeError(w, r, http.StatusNotFound, "foto não encontrada")
		return
	}
	b, ct, err := s.photos.PhotoData(r.Context(), sum)
	if err != nil {
		s.fail(w, r, err, "foto")
		return
	}
	h := w.Header()
	h.Set("Content-Type", ct)
	h.Set("Content-Length", strconv.Itoa(len(b)))
	h.Set("Cache-Control", "private, no-store")
	h.Set("Content-Disposition", `inline; filename="`+sum+map[string]string{photo.JPEG: ".jpg", photo.PNG: ".png"}[ct]+`"`)
	h.Set("ETag", `"`+sum+`"`)
	w.WriteHeader(http.StatusOK)
	if r.Method != http.MethodHead {
		_, _ = w.Write(b)
	}
}

// nearbyVehicle is a vehicle in the answer of GET /api/v1/nearby: its live state, its distance
// from the agent, the place it is at (the municipality's street extract) and its open alerts.
type nearbyVehicle struct {
	view.Vehicle
	DistanceM float64       `json:"distance_m"`
	Place     *nearbyPlace  `json:"place,omitempty"`
	Alerts    []nearbyAlert `json:"alerts"`
}

type nearbyPlace struct {
	Street     string   `json:"street,omitempty"`
	StreetM    *float64 `json:"street_m,omitempty"`
	Landmark   string   `json:"landmark,omitempty"`
	LandmarkM  *float64 `json:"landmark_m,omitempty"`
	LandmarkID string   `json:"landmark_id,omitempty"`
}

// nearbyAlert is an open episode of a nearby vehicle and the site it is near.
type nearbyAlert struct {
	ID           string      `json:"id"`
	Rule         string      `json:"rule"`
	Start        wire.Time   `json:"start"`
	Peak         float64     `json:"peak"`
	Unit         string      `json:"unit"`
	Limit        float64     `json:"limit"`
	Site         *rules.Site `json:"site"`
	Needs        string      `json:"needs_verification,omitempty"`
	Verification string      `json:"verification,omitempty"` // the kind recorded, if any
}

type nearbyResponse struct {
	Lat      float64         `json:"lat"`
	Lon      float64         `json:"lon"`
	RadiusM  float64         `json:"radius_m"`
	Vehicles []nearbyVehicle `json:"vehicles"`
}

// handleNearby serves GET /api/v1/nearby?lat=&lon=[&radius_m=]: the vehicles whose last
// position lies within radius_m (default 1000, at most 5000) of the agent, nearest first, online
// or not, with their speed and sound now, the place they are at and their open alerts. The
// agent's position is used for this answer only: neither stored nor logged.
func (s *Server) handleNearby(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	num := func(name string) (float64, bool) {
		v, err := strconv.ParseFloat(q.Get(name), 64)
		return v, err == nil && !math.IsNaN(v) && !math.IsInf(v, 0)
	}
	lat, okLat := num("lat")
	lon, okLon := num("lon")
	if !okLat || !okLon || lat < -90 || lat > 90 || lon < -180 || lon > 180 {
		s.writeError(w, r, http.StatusBadRequest, "lat e lon são obrigatórios (graus WGS 84)")
		return
	}
	radius := float64(defaultNearbyM)
	if q.Has("radius_m") {
		v, ok := num("radius_m")
		if !ok || v <= 0 || v > maxNearbyM {
			s.writeError(w, r, http.StatusBadRequest, "radius_m deve estar entre 0 e "+strconv.Itoa(maxNearbyM))
			return
		}
		radius = v
	}
	out := nearbyResponse{Lat: lat, Lon: lon, RadiusM: radius, Vehicles: []nearbyVehicle{}}
	if s.fleet == nil {
		s.writeJSON(w, r, http.StatusOK, out)
		return
	}
	vehicles, err := s.fleet.Vehicles(r.Context())
	if err != nil {
		s.internalError(w, r, err)
		return
	}
	for _, v := range vehicles {
		if v.Lat == nil || v.Lon == nil {
			continue
		}
		d := haversineM(lat, lon, *v.Lat, *v.Lon)
		if d > radius {
			continue
		}
		nv := nearbyVehicle{Vehicle: v, DistanceM: math.Round(d), Alerts: []nearbyAlert{}}
		if g := s.mapCfg.Geofences; g != nil {
			pl := g.ReverseGeocode(orb.Point{*v.Lon, *v.Lat}, geofences.DefaultStreetRadiusM, geofences.DefaultLandmarkRadiusM)
			if pl.Street != nil || pl.Landmark != nil {
				nv.Place = &nearbyPlace{}
				if h := pl.Street; h != nil {
					m := math.Round(h.DistanceM)
					nv.Place.Street, nv.Place.StreetM = h.Feature.Name, &m
				}
				if h := pl.Landmark; h != nil {
					m := math.Round(h.DistanceM)
					nv.Place.Landmark, nv.Place.LandmarkM, nv.Place.LandmarkID = h.Feature.Name, &m, h.Feature.ID
				}
			}
		}
		for _, id := range v.OpenEpisodes {
			ep, err := s.episodes.Episode(r.Context(), id)
			if errors.Is(err, store.ErrNotFound) {
				continue // closed and gone between the two reads
			}
			if err != nil {
				s.internalError(w, r, err)
				return
			}
			a := nearbyAlert{ID: ep.ID, Rule: ep.Rule, Start: ep.Start, Peak: ep.Peak, Unit: ep.Unit, Limit: ep.Limit, Site: ep.Site, Needs: ep.Needs}
			if ep.Verification != nil {
				a.Verification = ep.Verification.Kind
			}
			nv.Alerts = append(nv.Alerts, a)
		}
		out.Vehicles = append(out.Vehicles, nv)
	}
	sort.SliceStable(out.Vehicles, func(i, j int) bool { return out.Vehicles[i].DistanceM < out.Vehicles[j].DistanceM })
	s.writeJSON(w, r, http.StatusOK, out)
}

// haversineM is the great-circle distance in metres between two WGS 84 positions.
func haversineM(lat1, lon1, lat2, lon2 float64) float64 {
	const earthM = 6371008.8
	rad := math.Pi / 180
	dLat, dLon := (lat2-lat1)*rad, (lon2-lon1)*rad
	a := math.Sin(dLat/2)*math.Sin(dLat/2) + math.Cos(lat1*rad)*math.Cos(lat2*rad)*math.Sin(dLon/2)*math.Sin(dLon/2)
	return 2 * earthM * math.Asin(math.Min(1, math.Sqrt(a)))
}
