package rules

import (
	"math"
	"testing"
	"time"
)

// Outside every NBR zone, with no default area in the profile (Piúma's), noise_limit is not
// evaluated; inside a zone its episode is an indício that needs the agent's NBR 10151
// measurement.
func TestNoiseLimitIsAnIndicio(t *testing.T) {
	loud := 80 + 20*math.Log10(7.5/2)
	r := newPlacesRun(t, "")
	tr := newTrip(localTime(t, "2026-11-26 15:00:00"))
	tr.lat, tr.lon = -20.90, -40.80 // no zone
	r.apply(t, standing(tr, 150, 10, loud), time.Second)
	if n := len(r.rule(RuleNoiseLimit)); n != 0 {
		t.Fatalf("%d noise episodes outside every zone without a default area", n)
	}

	r = newPlacesRun(t, "")
	tr = newTrip(localTime(t, "2026-11-26 15:00:00"))
	tr.lat, tr.lon = -20.85, -40.65 // the leisure zone: 65 dB(A) by day
	r.apply(t, standing(tr, 150, 10, loud), time.Second)
	r.apply(t, standing(tr, 90, 10, 40), time.Second)
	eps := r.rule(RuleNoiseLimit)
	if len(eps) != 1 {
		t.Fatalf("%d noise episodes in a zone", len(eps))
	}
	ep := eps[0]
	if ep.GroundsAuto || ep.Needs != VerifyNBR10151 || ep.GroundsNote != noteEstimate || ep.Draftable() {
		t.Fatalf("the estimate grounds an auto: %+v", ep)
	}
	ep.Verification = &Verification{Kind: VerifyMusic}
	if ep.Draftable() {
		t.Error("a music confirmation made the estimate a draft")
	}
	// Art. 45, VII fines "executar músicas": the measurement proves the level, the agent's
	// confirmation of music the conduct; both make the draft.
	ep.Verification = &Verification{Kind: VerifyNBR10151, Measurement: &Measurement{LAeqDB: 70}}
	if ep.Penalty != PenaltyMusic || ep.Draftable() {
		t.Errorf("the NBR measurement without the music confirmation makes an %s draft", ep.Penalty)
	}
	music := true
	ep.Verification.MusicAudible = &music
	if !ep.Draftable() {
		t.Error("the NBR measurement with the music confirmation does not make the episode a draft")
	}
}
