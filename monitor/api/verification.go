package api

import (
	"encoding/json"
	"math"
	"net/http"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// verificationRequest is the body of POST /api/v1/episodes/{id}/verification.
type verificationRequest struct {
	Kind        string             `json:"kind"`
	Note        string             `json:"note"`
	Measurement *rules.Measurement `json:"measurement"`
}

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
	switch v.Kind {
	case rules.VerifyMusic:
		if v.Measurement != nil {
			return "measurement só vale para kind " + rules.VerifyNBR10151
		}
		return text("note", v.Note, minMusicNote)
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
		if !level(m.LAeqDB) || !level(m.ResidualDB) || !level(m.LimitDB) {
			return "measurement.laeq_db, residual_db e limit_db devem estar entre 20 e 140 dB(A)"
		}
		if m.Date.IsZero() {
			return "measurement.date é obrigatório"
		}
		return ""
	}
	return `kind deve ser "` + rules.VerifyMusic + `" ou "` + rules.VerifyNBR10151 + `"`
}

// handleVerification serves POST /api/v1/episodes/{id}/verification: a fiscal records on an
// episode what they verified in person (music audible; an NBR 10151 measurement). An episode
// whose only missing ground is that verification becomes a draft on the drafter's next run.
// The verification must be of a kind the episode can use, and the measurement must be taken
// within a day of the episode (a measurement of another day proves another fact).
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
		end := ep.Start.Time
		if ep.End != nil {
			end = ep.End.Time
		}
		if m.Date.Before(ep.Start.Add(-24*time.Hour)) || m.Date.After(end.Add(24*time.Hour)) {
			s.writeError(w, r, http.StatusBadRequest, "measurement.date deve estar a menos de 24 h do episódio")
			return
		}
	}
	user := userFrom(r.Context())
	v := &rules.Verification{Kind: req.Kind, By: user.Name, At: wire.NewTime(time.Now()), Note: strings.TrimSpace(req.Note), Measurement: req.Measurement}
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
	case rules.VerifyNBR10151:
		return ep.Rule == rules.RuleNoiseLimit
	case rules.VerifyMusic:
		return ep.Unit == "dB(A)"
	}
	return false
}
