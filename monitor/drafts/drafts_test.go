package drafts_test

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// A school open on weekdays at (-20.8400, -40.7300), in a mixed residential NBR zone.
const town = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.7300,-20.8400]},
 "properties":{"id":"school","kind":"sensitive","category":"school","name":"EMEF Teste","opening_hours":"Mo-Fr 07:00-18:00","source":"survey","verified_by":"fiscal","verified_at":"2026-10-01"}},
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.7400,-20.8500],[-40.7200,-20.8500],[-40.7200,-20.8300],[-40.7400,-20.8300],[-40.7400,-20.8500]]]},
 "properties":{"id":"zone-res","kind":"nbr_zone","area":"mixed_residential","source":"survey"}}]}`

// verify records the agent's verification on every episode that needs one of that kind, as
// POST /api/v1/episodes/{id}/verification does.
func (f *fixture) verify(t *testing.T, kind string) int {
	t.Helper()
	ctx := context.Background()
	eps, _, err := f.db.Episodes(ctx, store.EpisodeFilter{}, 100, "")
	if err != nil {
		t.Fatal(err)
	}
	n, music := 0, true
	for _, ep := range eps {
		if ep.Needs != kind {
			continue
		}
		v := &rules.Verification{Kind: kind, By: "joao", At: wire.NewTime(time.Now()), Note: "música alta audível da calçada"}
		if kind == rules.VerifyNBR10151 {
			v.Note, v.MusicAudible = "", &music
			v.Measurement = &rules.Measurement{Meter: "B&K 2250 nº 3012345", Class: 1, Calibration: "RBC 1234/2026",
				Position: "calçada, 1,2 m de altura", LAeqDB: 67.3, ResidualDB: 49.8, LimitDB: 55, Date: ep.Start}
		}
		if _, _, err := f.db.RecordVerification(ctx, ep.ID, v); err != nil {
			t.Fatal(err)
		}
		n++
	}
	return n
}

type fixture struct {
	db      *store.DB
	engine  *rules.Engine
	drafter *drafts.Drafter
	key     ed25519.PrivateKey
	seq     uint64
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	places, err := geofences.Read(strings.NewReader(town), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "m.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	p := fleettest.WithCalendars(profile.Piuma())
	return &fixture{db: db, engine: rules.New(p, places), key: key,
		drafter: drafts.NewDrafter(drafts.Config{Store: db, Profile: p, ProfileYAML: profile.PiumaYAML(), Places: places, Key: key, Software: "test", Settle: time.Minute})}
}

// play sends batches of a vehicle standing 50 m north of the school with its meter at db for
// the given seconds, starting at t, and commits them as the judge does.
func (f *fixture) play(t *testing.T, start time.Time, seconds int, db float64) time.Time {
	t.Helper()
	return fleettest.Play(t, f.engine, f.db, &f.seq, fleettest.Trip{Vehicle: "PIU-001", Start: start,
		Seconds: fleettest.Stand(-20.8400+50.0/110700, -40.7300, 5, db, seconds)})
}

func TestLoudMusicNearASchoolMakesOneDraftWithTwoFacts(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	loc := profile.Piuma().Location()
	start := time.Date(2026, 11, 27, 10, 0, 0, 0, loc) // a Friday, the school is open
	end := f.play(t, start, 120, 80)                   // 80 dB(A) at the meter: Art. 28 and, estimated 68.5 at the façade, Art. 27
	f.play(t, end, 200, 50)                            // quiet: both episodes close, then 2 minutes of evidence

	// Both episodes are alerts until the agent verifies: the music near the school (Art. 28
	// and Art. 45, VII "executar músicas") and the NBR measurement (Art. 27).
	made, err := f.drafter.Run(ctx, time.Now().Add(5*time.Minute))
	if err != nil || len(made) != 0 {
		t.Fatalf("drafted %d before the agent's verification: %v", len(made), err)
	}
	if n := f.verify(t, rules.VerifyMusic); n != 1 {
		t.Fatalf("%d episodes needed the music confirmed", n)
	}
	// The music alone confirmed: the same act's NBR episode still waits for its measurement,
	// and holds the draft (one conduct, one draft).
	if made, err = f.drafter.Run(ctx, time.Now().Add(5*time.Minute)); err != nil || len(made) != 0 {
		t.Fatalf("drafted %d with the measurement pending: %v", len(made), err)
	}
	if n := f.verify(t, rules.VerifyNBR10151); n != 1 {
		t.Fatalf("%d episodes needed the measurement", n)
	}
	// Before the settle time (receive clock: when the episodes were stored) nothing is drafted.
	made, err = f.drafter.Run(ctx, time.Now())
	if err != nil || len(made) != 0 {
		t.Fatalf("drafted %d before settling: %v", len(made), err)
	}
	made, err = f.drafter.Run(ctx, time.Now().Add(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if len(made) != 1 {
		t.Fatalf("%d drafts, want 1", len(made))
	}
	d := made[0].Draft
	if len(d.Facts) != 2 || len(d.EpisodeIDs) != 2 || d.Penalty != "Art. 45, VII" || d.FineUFMP != 300 {
		t.Fatalf("draft %+v", d)
	}
	if strings.Join(d.Rules, ",") != "sensitive_zone_sound,noise_limit" && strings.Join(d.Rules, ",") != "noise_limit,sensitive_zone_sound" {
		t.Errorf("rules %v", d.Rules)
	}
	if !(contains(d.Articles, "Art. 28") && contains(d.Articles, "Art. 27")) {
		t.Errorf("articles %v", d.Articles)
	}
	for _, fct := range d.Facts {
		if fct.Rule == "noise_limit" && (strings.Contains(fct.Description, "ESTIMADO") || !strings.Contains(fct.Description, "L_Aeq de 67,3 dB(A), nível de som residual de 49,8 dB(A)")) {
			t.Errorf("the noise fact does not cite the agent's measurement: %s", fct.Description)
		}
		if fct.Rule == "sensitive_zone_sound" && (!strings.Contains(fct.Description, "no máximo 54 m de estabelecimento de ensino \"EMEF Teste\"") ||
			!strings.Contains(fct.Description, "música ou outro som do sistema de som") || !strings.Contains(fct.Description, "música executada pelo sistema de som")) {
			t.Errorf("the sensitive fact: %s", fct.Description)
		}
	}

	// The bundle verifies, carries the raw batches of the episodes ± 2 minutes and the school.
	b, err := drafts.Verify(&made[0].Sealed, f.key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Batches) < 24+20 || len(b.Places) != 1 || len(b.Episodes) != 2 || b.Profile.YAML == "" || b.Episodes[0].Verification == nil {
		t.Errorf("bundle: %d batches, %d places, %d episodes", len(b.Batches), len(b.Places), len(b.Episodes))
	}
	for _, rb := range b.Batches {
		if _, err := wire.Decode("", []byte(rb.Payload), time.Now()); err != nil {
			t.Fatalf("raw batch %d is not the payload as received: %v", rb.Seq, err)
		}
	}

	// Replays and restarts never make a second draft.
	again, err := f.drafter.Run(ctx, time.Now().Add(10*time.Minute))
	if err != nil || len(again) != 0 {
		t.Fatalf("second run drafted %d: %v", len(again), err)
	}
	sealed := made[0].Sealed
	if err := f.db.InsertDraft(ctx, drafts.Seal(sealed.ID, sealed.Seq+1, sealed.Bundle, sealed.Hash, f.key), &d); !errors.Is(err, store.ErrExists) {
		t.Fatalf("inserting the same draft again: %v", err)
	}
}

func TestTamperingIsDetected(t *testing.T) {
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	now := wire.NewTime(time.Now())
	bundle, err := json.Marshal(drafts.Bundle{Format: 1, Draft: drafts.Draft{ID: "X", FineUFMP: 300, Start: now, End: now, CreatedAt: now}})
	if err != nil {
		t.Fatal(err)
	}
	s := drafts.Seal("X", 1, bundle, "", key)
	if _, err := drafts.Verify(&s, key.Public().(ed25519.PublicKey)); err != nil {
		t.Fatal(err)
	}
	edited := s
	edited.Bundle = []byte(strings.Replace(string(bundle), `"fine_ufmp":300`, `"fine_ufmp":600`, 1))
	if _, err := drafts.Verify(&edited, nil); !errors.Is(err, drafts.ErrHashMismatch) {
		t.Errorf("edited bundle: %v", err)
	}
	rehashed := drafts.Seal("X", 1, edited.Bundle, "", key)
	rehashed.Signature = s.Signature
	if _, err := drafts.Verify(&rehashed, nil); !errors.Is(err, drafts.ErrBadSignature) {
		t.Errorf("re-hashed without the key: %v", err)
	}
	_, other, _ := ed25519.GenerateKey(rand.Reader)
	forged := drafts.Seal("X", 1, edited.Bundle, "", other)
	if _, err := drafts.Verify(&forged, key.Public().(ed25519.PublicKey)); !errors.Is(err, drafts.ErrWrongKey) {
		t.Errorf("signed by another key: %v", err)
	}
	relinked := s
	relinked.PrevHash = strings.Repeat("0", 64)
	if _, err := drafts.Verify(&relinked, nil); !errors.Is(err, drafts.ErrBadSignature) {
		t.Errorf("moved in the chain: %v", err)
	}
}

func TestDescriptionsArePortuguese(t *testing.T) {
	if got := drafts.Num(37.10, 2); got != "37,1" {
		t.Errorf("Num = %q", got)
	}
	if got := drafts.Num(45, 2); got != "45" {
		t.Errorf("Num = %q", got)
	}
}

func contains(s []string, x string) bool {
	for _, v := range s {
		if v == x {
			return true
		}
	}
	return false
}

// Hours (Art. 29) and an expired licence (Art. 7) overlapping in time are two conducts: two
// drafts, although Art. 47 fines both (Art. 41 §3).
func TestDifferentConductsAreSeparateDrafts(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	start := time.Date(2026, 11, 28, 2, 0, 0, 0, time.UTC)
	ep := func(rule, detail string, from, to time.Duration) *rules.Episode {
		s, e := wire.NewTime(start.Add(from)), wire.NewTime(start.Add(to))
		closed := rules.ClosedCleared
		x := &rules.Episode{ID: rules.EpisodeID("PIU-001", rule, s.Time) + detail, Vehicle: "PIU-001", Rule: rule,
			Article: "Art. 29", Penalty: "Art. 47", Start: s, End: &e, Closed: &closed, DurationS: (to - from).Seconds(),
			Unit: "min", GroundsAuto: true}
		if detail != "" {
			x.Detail, x.Article, x.Unit = detail, "Art. 7", "dias"
		}
		return x
	}
	for _, e := range []*rules.Episode{ep("hours", "", 0, 30*time.Minute), ep("document_expired", "licenca", 10*time.Minute, 40*time.Minute)} {
		if err := f.db.UpsertEpisode(ctx, e, nil); err != nil {
			t.Fatal(err)
		}
	}
	made, err := f.drafter.Run(ctx, time.Now().Add(5*time.Minute))
	if err != nil || len(made) != 2 {
		t.Fatalf("%d drafts, want 2: %v", len(made), err)
	}
	for _, m := range made {
		if m.Draft.Penalty != "Art. 47" || len(m.Draft.Facts) != 1 || m.Draft.FineUFMP != 250 {
			t.Errorf("draft %s: %s, %d facts, %v UFMP", m.Draft.ID, m.Draft.Penalty, len(m.Draft.Facts), m.Draft.FineUFMP)
		}
	}
	if made[0].Draft.ID == made[1].Draft.ID {
		t.Errorf("one id for two drafts: %s", made[0].Draft.ID)
	}
}
