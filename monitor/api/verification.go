package api

import (
	"encoding/json"
	"errors"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/monitor/photo"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// verificationRequest is the body of POST /api/v1/episodes/{id}/verification.
type verificationRequest struct {
	Kind        string             `json:"kind"`
	Note        string             `json:"note"`
	Measurement *rules.Measurement `json:"measurement"`

	// A field verification (constatação em campo, field.go): the agent's answers, the phone's
	// capture time (RFC 3339, as signed), the photos uploaded before (POST /api/v1/photos) by
	// SHA-256, and the session's signature.
	MusicAudible *bool                  `json:"music_audible"`
	Boarding     *bool                  `json:"boarding"`
	CapturedAt   string                 `json:"captured_at"`
	Photos       []string               `json:"photos"`
	Signature    *verificationSignature `json:"signature"`
}

// verificationSignature is a field verification's signature as the dashboard sends it.
type verificationSignature struct {
	Session string `json:"session"`
	Client  string `json:"client_id"`
	HMAC    string `json:"hmac"`
}

// How far a field verification's capture time may lie from its receipt: ahead, the phone's
// clock is wrong; behind, longer than an offline queue is kept.
const (
	maxCaptureAhead = 5 * time.Minute
	maxCaptureAge   = 7 * 24 * time.Hour
)

// Bounds of a verification's free text.
const (
	maxVerificationText = 2000
	minMusicNote        = 10
)

// check validates a verification request; it returns the problem in Portuguese, "" when none.
func (v *verificationRequest) check() string {
	text := func(name, s string, min int) string {
		n := utf8.RuneCountInString(strings.TrimSpace(s))
		if n < min {
			if min <= 1 {
				return name + " é obrigatório"
			}
			return name + " deve descrever o que foi verificado"
		}
		if n > maxVerificationText || !utf8.ValidString(s) {
			return name + " longo demais"
		}
		return ""
	}
	if len(v.Photos) > maxVerificationPhotos {
		return "no máximo " + strconv.Itoa(maxVerificationPhotos) + " fotos por constatação"
	}
	for i, p := range v.Photos {
		if !photo.ValidSHA256(p) || slices.Contains(v.Photos[:i], p) {
			return "photos deve listar hashes SHA-256 (hex minúsculo) distintos"
		}
	}
	if v.Signature != nil && v.CapturedAt == "" {
		return "captured_at é obrigatório numa constatação assinada"
	}
	if v.Kind != rules.VerifyNBR10151 && v.Measurement != nil {
		return "measurement só vale para kind " + rules.VerifyNBR10151
	}
	switch v.Kind {
	case rules.VerifyMusic:
		if v.MusicAudible != nil && !*v.MusicAudible {
			return "music_audible falso não confirma música: use kind " + rules.VerifyField
		}
		return text("note", v.Note, minMusicNote)
	case rules.VerifyField:
		if len(v.Photos) == 0 {
			return text("note", v.Note, minMusicNote)
		}
		if v.Note != "" {
			return text("note", v.Note, 0)
		}
		return ""
	case rules.VerifyNBR10151:
		m := v.Measurement
		if m == nil {
			return "measurement é obrigatório para kind " + rules.VerifyNBR10151
		}
		if v.Note != "" {
			if p := text("note", v.Note, 0); p != "" {
				return p
			}
		}
		for _, f := range []struct{ name, v string }{{"measurement.meter", m.Meter}, {"measurement.calibration", m.Calibration}, {"measurement.position", m.Position}} {
			if p := text(f.name, f.v, 1); p != "" {
				return p
			}
		}
		if m.Class != 1 && m.Class != 2 {
			return "measurement.class deve ser 1 ou 2 (classe do medidor, IEC 61672)"
		}
		level := func(x float64) bool { return !math.IsNaN(x) && x >= 20 && x <= 140 }
		if !level(m.LAeqDB) || !level(m.ResidualDB) {
			return "measurement.laeq_db e residual_db devem estar entre 20 e 140 dB(A)"
		}
		if m.Date.IsZero() {
			return "measurement.date é obrigatório"
		}
		return ""
	}
	return `kind deve ser "` + rules.VerifyMusic + `", "` + rules.VerifyNBR10151 + `" ou "` + rules.VerifyField + `"`
}

// handleVerification serves POST /api/v1/episodes/{id}/verification: a fiscal records on an
// episode what they verified in person (music audible; an NBR 10151 measurement). An episode
// whose only missing ground is that verification becomes a draft on the drafter's next run.
// The verification must be of a kind the episode can use, and a measurement must prove the
// excess (rules.JudgeMeasurement): the NBR table's limit for the place and period at its time,
// the level corrected for the residual sound above it, taken within the episode's window — a
// measurement of another time proves another fact. A refused measurement is a 409 with why.
func (s *Server) handleVerification(w http.ResponseWriter, r *http.Request) {
	var req verificationRequest
	if !s.decodeBody(w, r, &req) {
		return
	}
	if p := req.check(); p != "" {
		s.writeError(w, r, http.StatusBadRequest, p)
		return
	}
	id := r.PathValue("id")
	ep, err := s.episodes.Episode(r.Context(), id)
	if err != nil {
		s.fail(w, r, err, "episódio")
		return
	}
	if !acceptsVerification(ep, req.Kind) {
		s.writeError(w, r, http.StatusConflict, "este episódio não admite verificação do tipo "+req.Kind)
		return
	}
	if m := req.Measurement; m != nil {
		// The limit is the NBR table's for the place and the period at the measurement's time,
		// never a typed one; the corrected level must exceed it, within the episode's window.
		p := s.mapCfg.Profile
		if p == nil {
			s.writeError(w, r, http.StatusConflict, "o perfil legal não está carregado: o limite da NBR 10151 do local e do período não pode ser calculado")
			return
		}
		limit, corrected, problem := rules.JudgeMeasurement(p, ep, m)
		if problem != "" {
			s.writeError(w, r, http.StatusConflict, "medição recusada: "+problem)
			return
		}
		m.LimitDB, m.CorrectedDB = limit, corrected
	}
	user := userFrom(r.Context())
	now := s.now()
	v := &rules.Verification{Kind: req.Kind, By: user.Name, At: wire.NewTime(now), Note: strings.TrimSpace(req.Note), Measurement: req.Measurement,
		MusicAudible: req.MusicAudible, Boarding: req.Boarding}
	if req.Signature != nil {
		// A replay of the item already recorded (the phone resends when the answer was lost):
		// the verification stands as first received.
		if cur := ep.Verification; cur != nil && cur.Signature != nil && cur.Signature.Client == req.Signature.Client &&
			cur.Signature.Session == req.Signature.Session && cur.By == user.Name {
			ep.Readings = nil
			s.writeJSON(w, r, http.StatusOK, ep)
			return
		}
		if p := s.checkSignature(user.Name, id, &req); p != "" {
			s.writeError(w, r, http.StatusBadRequest, p)
			return
		}
		v.Signature = &rules.FieldSignature{Session: req.Signature.Session, Client: req.Signature.Client, HMAC: req.Signature.HMAC, Verified: true}
	}
	if req.CapturedAt != "" {
		t, err := time.Parse(time.RFC3339Nano, req.CapturedAt)
		if err != nil {
			s.writeError(w, r, http.StatusBadRequest, "captured_at deve ser RFC 3339")
			return
		}
		if t.After(now.Add(maxCaptureAhead)) || t.Before(now.Add(-maxCaptureAge)) || t.Before(ep.Start.Add(-time.Hour)) {
			s.writeError(w, r, http.StatusBadRequest, "captured_at fora do intervalo aceito (relógio do aparelho errado, constatação anterior ao episódio ou com mais de 7 dias)")
			return
		}
		ct := wire.NewTime(t)
		v.CapturedAt = &ct
	}
	for _, sum := range req.Photos {
		if s.photos == nil {
			s.writeError(w, r, http.StatusBadRequest, "este servidor não recebe fotos")
			return
		}
		p, err := s.photos.PhotoInfo(r.Context(), sum)
		if errors.Is(err, store.ErrNotFound) {
			s.writeError(w, r, http.StatusBadRequest, "a foto "+sum[:12]+"… não foi enviada (POST /api/v1/photos antes da constatação)")
			return
		}
		if err != nil {
			s.internalError(w, r, err)
			return
		}
		v.Photos = append(v.Photos, *p)
	}
	before, after, err := s.episodes.RecordVerification(r.Context(), id, v)
	if err != nil {
		s.fail(w, r, err, "episódio")
		return
	}
	b, _ := json.Marshal(before.Verification)
	a, _ := json.Marshal(after.Verification)
	s.record(r, store.AuditEntry{User: user.Name, Action: "episode.verify", Object: "episode:" + id, Before: b, After: a})
	after.Readings = nil
	if s.hub != nil {
		s.hub.Publish(EventEpisode, struct {
			Event string `json:"event"`
			*rules.Episode
		}{"verification", after})
	}
	s.writeJSON(w, r, http.StatusOK, after)
}

// acceptsVerification reports whether an episode can use a verification of kind: the one it
// needs, or — for the sound rules — either kind (a measurement or a confirmation is evidence the
// agent may attach to a manual notice even when the episode lacks something else).
func acceptsVerification(ep *rules.Episode, kind string) bool {
	if ep.Needs == kind {
		return true
	}
	switch kind {
	case rules.VerifyField:
		return true
	case rules.VerifyNBR10151:
		return ep.Rule == rules.RuleNoiseLimit
	case rules.VerifyMusic:
		return ep.Unit == "dB(A)"
	}
	return false
}
