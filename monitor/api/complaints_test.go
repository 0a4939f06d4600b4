package api_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/complaints"
	"github.com/trenzinho/trenzinho/monitor/notify/email"
	"github.com/trenzinho/trenzinho/monitor/notify/email/emailtest"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// complaintTown: a mixed residential NBR zone (55 dB(A) by day, 50 at night) crossed by a
// named street.
const complaintTown = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.7400,-20.8500],[-40.7200,-20.8500],[-40.7200,-20.8300],[-40.7400,-20.8300],[-40.7400,-20.8500]]]},
 "properties":{"id":"zone-res","kind":"nbr_zone","area":"mixed_residential","source":"survey"}},
{"type":"Feature","properties":{"id":"osm-way-1","kind":"street","name":"Avenida Beira-Mar","source":"osm"},"geometry":{"type":"LineString","coordinates":[[-40.74,-20.8418],[-40.72,-20.8418]]}}]}`

// memTelemetry is telemetry held in memory: the matcher's own logic is what these tests are
// about (the InfluxDB reader is tested through the real pipeline in internal/e2e).
type memTelemetry []complaints.Track

func (m memTelemetry) Tracks(_ context.Context, from, to time.Time) ([]complaints.Track, error) {
	var out []complaints.Track
	for _, tr := range m {
		c := complaints.Track{Vehicle: tr.Vehicle}
		for _, f := range tr.Fixes {
			if !f.T.Before(from) && !f.T.After(to) {
				c.Fixes = append(c.Fixes, f)
			}
		}
		for _, s := range tr.Sounds {
			if !s.T.Before(from) && !s.T.After(to) {
				c.Sounds = append(c.Sounds, s)
			}
		}
		out = append(out, c)
	}
	return out, nil
}

// driveBy is a vehicle driving east along the street at 18 km/h (5 m/s) through lon -40.7300 at
// pass, its meter at db the whole time.
func driveBy(vehicle string, pass time.Time, db float64) complaints.Track {
	tr := complaints.Track{Vehicle: vehicle}
	const mPerDegLon = 111320 * 0.9346
	for i := -300; i <= 300; i++ {
		t := pass.Add(time.Duration(i) * time.Second)
		kmh := 18.0
		tr.Fixes = append(tr.Fixes, complaints.Fix{T: t, Lat: -20.8418, Lon: -40.7300 + float64(i)*5/mPerDegLon, SpeedKmh: &kmh})
		tr.Sounds = append(tr.Sounds, complaints.SoundReading{T: t, DB: db, DurS: 1})
	}
	return tr
}

const (
	complaintToken      = "token-da-ouvidoria-156"
	complaintDifficulty = 6
)

func complaintFixture(t *testing.T, tracks memTelemetry, edit func(*api.ComplaintsConfig)) *fixture {
	t.Helper()
	places, err := geofences.Read(strings.NewReader(complaintTown), "town.geojson")
	if err != nil {
		t.Fatal(err)
	}
	p := profile.Piuma()
	f := newFixture(t, func(c *api.Config) {
		cc := &api.ComplaintsConfig{Store: c.Episodes.(*store.DB), Places: places, Location: p.Location(),
			Matcher:    &complaints.Matcher{Telemetry: tracks, Profile: p, Places: places},
			Difficulty: complaintDifficulty, Token: complaintToken}
		if edit != nil {
			edit(cc)
		}
		c.Complaints = cc
	})
	if _, err := f.db.CreateUser(context.Background(), "fiscal", fiscalPassword, store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	return f
}

// solve fetches a challenge and finds its nonce, as the form's script does.
func (f *fixture) solve(header ...string) (string, string) {
	f.t.Helper()
	code, b, _ := f.do("GET", "/api/v1/public/complaints/challenge", nil, session{}, header...)
	if code != http.StatusOK {
		f.t.Fatalf("challenge: %d %s", code, b)
	}
	var ch complaints.Challenge
	if err := json.Unmarshal(b, &ch); err != nil {
		f.t.Fatal(err)
	}
	for n := 0; ; n++ {
		nonce := fmt.Sprint(n)
		if complaints.LeadingZeroBits(ch.Challenge, nonce) >= ch.Difficulty {
			return ch.Challenge, nonce
		}
	}
}

func (f *fixture) complain(body map[string]any, header ...string) (int, api.ComplaintReceipt, string) {
	f.t.Helper()
	if _, ok := body["challenge"]; !ok {
		body["challenge"], body["nonce"] = f.solve(header...)
	}
	code, b, _ := f.do("POST", "/api/v1/public/complaints", body, session{}, header...)
	var rc api.ComplaintReceipt
	if code == http.StatusCreated {
		if err := json.Unmarshal(b, &rc); err != nil {
			f.t.Fatal(err)
		}
	}
	return code, rc, string(b)
}

// A complaint at the place and time a loud train passed is matched to it with its estimated
// level above the area's limit; one where no train passed gets "nenhum trenzinho"; the answer
// page at the receipt's URL says the same and never shows the contact.
func TestComplaintMatchedAndAnswered(t *testing.T) {
	pass := time.Now().Add(-time.Hour).Truncate(time.Second)
	f := complaintFixture(t, memTelemetry{driveBy("PIU-002", pass, 90)}, nil)
	loc := profile.Piuma().Location()
	at := pass.Add(3 * time.Minute).In(loc)
	// 45 m south of the street.
	code, rc, body := f.complain(map[string]any{"lat": -20.84220, "lon": -40.7300, "at": at.Format("2006-01-02T15:04"),
		"kind": "som_alto", "text": "Música muito alta", "contact": "maria@example.com"})
	if code != http.StatusCreated {
		t.Fatalf("complaint: %d %s", code, body)
	}
	// The public receipt carries the answer only (LGPD): no plate, no speed, no matching.
	if rc.Result != nil || strings.Contains(body, "PIU-002") || strings.Contains(body, "km/h") || strings.Contains(body, `"result"`) {
		t.Errorf("the public receipt shows the matching: %s", body)
	}
	// The staff read the matching and its detail.
	_, fiscal := f.login("fiscal", fiscalPassword)
	code, b, _ := f.do("GET", "/api/v1/complaints/"+rc.ID, nil, session{bearer: fiscal})
	var staff struct {
		store.Complaint
		Result complaints.Result `json:"result"`
	}
	if code != http.StatusOK || json.Unmarshal(b, &staff) != nil || len(staff.Result.Matches) != 1 {
		t.Fatalf("staff: %d %s", code, b)
	}
	m := staff.Result.Matches[0]
	// 90 dB(A) at r₁ = 2 m, 44.5 m away: 90 − 20·log10(44.5/2) ≈ 63 dB(A), above 55 (day) or 50.
	if m.Vehicle != "PIU-002" || m.DistanceM < 40 || m.DistanceM > 50 || m.LevelDB == nil || *m.LevelDB < 62 || *m.LevelDB > 64 ||
		!m.Above || !m.Estimate || m.At.Sub(pass).Abs() > time.Second || m.SpeedKmh == nil || *m.SpeedKmh != 18 {
		t.Errorf("match: %+v (level %v)", m, m.LevelDB)
	}
	wantDetail := fmt.Sprintf("PIU-002 passou às %s a cerca de 45 m, a 18 km/h, com nível estimado de 63 dB(A) — acima do limite da área (%.0f dB(A)).",
		pass.In(loc).Format("15:04"), *m.LimitDB)
	if len(staff.Detail) != 1 || staff.Detail[0] != wantDetail {
		t.Errorf("detail %q\nwant   %q", staff.Detail, wantDetail)
	}
	want := fmt.Sprintf("Um trenzinho passou às %s a cerca de 45 m do local, com nível sonoro estimado de 63 dB(A) no local, acima do limiar de triagem da área (limite de %.0f dB(A) mais a tolerância do medidor); o caso foi encaminhado à fiscalização.",
		pass.In(loc).Format("15:04"), *m.LimitDB)
	if len(rc.Answer) != 1 || rc.Answer[0] != want {
		t.Errorf("answer %q\nwant   %q", rc.Answer, want)
	}
	if !strings.HasPrefix(rc.AnswerURL, "/r/") || !store.ValidPublicCode(strings.TrimPrefix(rc.AnswerURL, "/r/")) {
		t.Fatalf("answer URL %q", rc.AnswerURL)
	}
	code, page, _ := f.do("GET", rc.AnswerURL, nil, session{})
	if code != http.StatusOK || !strings.Contains(string(page), "Um trenzinho passou às") || !strings.Contains(string(page), "estimativa") ||
		strings.Contains(string(page), "maria@example.com") || strings.Contains(string(page), "PIU-002") || strings.Contains(string(page), "km/h") {
		t.Errorf("answer page %d:\n%s", code, page)
	}

	// Far from every train: nobody within 300 m in the window.
	code, rc, body = f.complain(map[string]any{"lat": -20.8300, "lon": -40.7300, "at": at.Format(time.RFC3339), "kind": "som_alto"})
	from, to := at.Add(-15*time.Minute), at.Add(15*time.Minute)
	want = fmt.Sprintf("Nenhum trenzinho a menos de 300 m entre %s e %s.", from.Format("15:04"), to.Format("15:04"))
	if code != http.StatusCreated || len(rc.Answer) != 1 || rc.Answer[0] != want && from.Day() == to.Day() {
		t.Errorf("no train: %d %q (want %q) %s", code, rc.Answer, want, body)
	}
	// The same place an hour later: the train had gone.
	code, rc, _ = f.complain(map[string]any{"lat": -20.84220, "lon": -40.7300, "at": at.Add(time.Hour).Format(time.RFC3339), "kind": "som_alto"})
	if code != http.StatusCreated || rc.Result != nil || !strings.HasPrefix(rc.Answer[0], "Nenhum trenzinho a menos de 300 m") {
		t.Errorf("an hour later: %d %+v", code, rc)
	}

	// A typed address is placed on the street.
	code, rc, body = f.complain(map[string]any{"address": "Av. Beira Mar, 120", "at": at.Format(time.RFC3339), "kind": "velocidade"})
	if code != http.StatusCreated || rc.Place.Matched != "Avenida Beira-Mar" || len(rc.Answer) != 1 || !strings.HasPrefix(rc.Answer[0], "Um trenzinho passou às") {
		t.Errorf("typed address: %d %+v %s", code, rc.Place, body)
	}
	code, _, body = f.complain(map[string]any{"address": "Rua que não existe", "at": at.Format(time.RFC3339), "kind": "outro"})
	if code != http.StatusUnprocessableEntity {
		t.Errorf("unknown address: %d %s", code, body)
	}
	code, b, _ = f.do("GET", "/api/v1/public/geocode?q=beira", nil, session{})
	if code != http.StatusOK || !strings.Contains(string(b), "Avenida Beira-Mar") {
		t.Errorf("geocode: %d %s", code, b)
	}
}

// The proof of work is required, checked and single use; malformed and oversized input is
// refused before any matching.
func TestComplaintChallengeAndInput(t *testing.T) {
	f := complaintFixture(t, nil, func(c *api.ComplaintsConfig) { c.PerAddress = 100 }) // every request counts
	at := time.Now().Add(-time.Hour).Format(time.RFC3339)
	ch, nonce := f.solve()
	body := map[string]any{"lat": -20.84, "lon": -40.73, "at": at, "kind": "som_alto", "challenge": ch, "nonce": nonce}
	if code, _, b := f.complain(body); code != http.StatusCreated {
		t.Fatalf("first use: %d %s", code, b)
	}
	if code, _, b := f.complain(body); code != http.StatusForbidden || !strings.Contains(b, "já utilizado") {
		t.Errorf("second use: %d %s", code, b)
	}
	for name, b := range map[string]map[string]any{
		"no challenge": {"lat": -20.84, "lon": -40.73, "at": at, "kind": "som_alto", "challenge": "", "nonce": ""},
		"wrong nonce":  {"lat": -20.84, "lon": -40.73, "at": at, "kind": "som_alto", "challenge": ch[:len(ch)-2] + "AA", "nonce": nonce},
	} {
		if code, _, msg := f.complain(b); code != http.StatusForbidden {
			t.Errorf("%s: %d %s", name, code, msg)
		}
	}
	for name, b := range map[string]map[string]any{
		"bad kind":  {"lat": -20.84, "lon": -40.73, "at": at, "kind": "barulho"},
		"no place":  {"at": at, "kind": "som_alto"},
		"old":       {"lat": -20.84, "lon": -40.73, "at": time.Now().Add(-8 * 24 * time.Hour).Format(time.RFC3339), "kind": "som_alto"},
		"bad email": {"lat": -20.84, "lon": -40.73, "at": at, "kind": "som_alto", "contact": "Maria <maria@example.com>"},
		"long text": {"lat": -20.84, "lon": -40.73, "at": at, "kind": "som_alto", "text": strings.Repeat("a", 1001)},
		"ref":       {"lat": -20.84, "lon": -40.73, "at": at, "kind": "som_alto", "external_ref": "156-1"},
	} {
		if code, _, msg := f.complain(b); code != http.StatusBadRequest {
			t.Errorf("%s: %d %s", name, code, msg)
		}
	}
	if code, b, _ := f.do("POST", "/api/v1/public/complaints", `{"text":"`+strings.Repeat("a", 9000)+`"}`, session{}); code != http.StatusRequestEntityTooLarge {
		t.Errorf("oversized: %d %s", code, b)
	}
}

// 100 complaints from one address in a minute: the first PerAddress are accepted, every later
// one is refused with 429 and Retry-After, and no more are stored.
func TestComplaintsPerAddressLimit(t *testing.T) {
	f := complaintFixture(t, nil, func(c *api.ComplaintsConfig) { c.Reads = 1000 })
	at := time.Now().Add(-time.Hour).Format(time.RFC3339)
	accepted, refused := 0, 0
	for i := range 100 {
		code, _, b := f.complain(map[string]any{"lat": -20.84, "lon": -40.73, "at": at, "kind": "som_alto", "text": fmt.Sprint("reclamação ", i)})
		switch code {
		case http.StatusCreated:
			if refused > 0 {
				t.Fatalf("complaint %d accepted after a refusal", i)
			}
			accepted++
		case http.StatusTooManyRequests:
			refused++
		default:
			t.Fatalf("complaint %d: %d %s", i, code, b)
		}
	}
	if accepted != 10 || refused != 90 {
		t.Errorf("accepted %d, refused %d; want 10 and 90", accepted, refused)
	}
	items, _, err := f.db.Complaints(context.Background(), store.ComplaintFilter{}, 500, "")
	if err != nil || len(items) != 10 {
		t.Errorf("stored %d complaints (%v), want 10", len(items), err)
	}
}

// The 156 system posts with its token (no proof of work) and reads the complaint back; without
// the token it gets 401, and the public form's route does not take the token's place.
func TestOuvidoriaAPI(t *testing.T) {
	pass := time.Now().Add(-time.Hour).Truncate(time.Second)
	f := complaintFixture(t, memTelemetry{driveBy("PIU-001", pass, 70)}, nil)
	body := map[string]any{"lat": -20.8419, "lon": -40.7300, "at": pass.Format(time.RFC3339), "kind": "som_alto", "external_ref": "156-2026-000123"}
	if code, b, _ := f.do("POST", "/api/v1/ouvidoria/complaints", body, session{}); code != http.StatusUnauthorized {
		t.Errorf("without token: %d %s", code, b)
	}
	if code, b, _ := f.do("POST", "/api/v1/ouvidoria/complaints", body, session{bearer: "errado"}); code != http.StatusUnauthorized {
		t.Errorf("wrong token: %d %s", code, b)
	}
	code, b, _ := f.do("POST", "/api/v1/ouvidoria/complaints", body, session{bearer: complaintToken})
	var rc api.ComplaintReceipt
	if code != http.StatusCreated || json.Unmarshal(b, &rc) != nil || len(rc.Result.Matches) != 1 || rc.Result.Matches[0].Vehicle != "PIU-001" {
		t.Fatalf("156: %d %s", code, b)
	}
	code, b, _ = f.do("GET", "/api/v1/ouvidoria/complaints/"+rc.ID, nil, session{bearer: complaintToken})
	var got api.OuvidoriaComplaint
	if code != http.StatusOK || json.Unmarshal(b, &got) != nil || got.ExternalRef != "156-2026-000123" || got.Status != store.ComplaintPending {
		t.Errorf("156 read: %d %s", code, b)
	}
}

// Inspectors: the list never carries the contact; reading it is audited; moderation and
// confirmation against the matched vehicle's episode are audited and the episode lists the
// complaint; a viewer sees nothing; erasing the contact is an admin's, audited.
func TestComplaintInspectors(t *testing.T) {
	ctx := context.Background()
	pass := time.Now().Add(-time.Hour).Truncate(time.Second)
	f := complaintFixture(t, memTelemetry{driveBy("PIU-002", pass, 90)}, nil)
	code, rc, msg := f.complain(map[string]any{"lat": -20.84220, "lon": -40.7300, "at": pass.Format(time.RFC3339), "kind": "som_alto", "contact": "maria@example.com"})
	if code != http.StatusCreated {
		t.Fatalf("complaint: %d %s", code, msg)
	}
	var b []byte
	_, fiscal := f.login("fiscal", fiscalPassword)
	_, viewer := f.login("maria", viewerPassword)
	_, admin := f.login("admin", adminPassword)
	if code, _, _ := f.do("GET", "/api/v1/complaints", nil, session{bearer: viewer}); code != http.StatusForbidden {
		t.Errorf("viewer list: %d", code)
	}
	code, b, _ = f.do("GET", "/api/v1/complaints?status=pending", nil, session{bearer: fiscal})
	if code != http.StatusOK || !strings.Contains(string(b), rc.ID) || strings.Contains(string(b), "maria@example.com") || !strings.Contains(string(b), `"has_contact":true`) {
		t.Errorf("list: %d %s", code, b)
	}
	if code, b, _ = f.do("GET", "/api/v1/complaints/"+rc.ID, nil, session{bearer: fiscal}); code != http.StatusOK || strings.Contains(string(b), "maria@") {
		t.Errorf("detail: %d %s", code, b)
	}
	if code, b, _ = f.do("GET", "/api/v1/complaints/"+rc.ID+"/contact", nil, session{bearer: fiscal}); code != http.StatusOK || !strings.Contains(string(b), "maria@example.com") {
		t.Errorf("contact: %d %s", code, b)
	}
	audit, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: "complaint.contact_read"}, 10, "")
	if err != nil || len(audit) != 1 || audit[0].User != "fiscal" || audit[0].Object != "complaint:"+rc.ID {
		t.Errorf("contact read audit: %+v %v", audit, err)
	}

	// An episode of another vehicle is refused; the matched vehicle's is attached.
	other := testEpisode("PIU-001", "noise_limit", pass.Add(-time.Minute), false)
	mine := testEpisode("PIU-002", "noise_limit", pass.Add(-time.Minute), false)
	for _, ep := range []*rules.Episode{other, mine} {
		if err := f.db.UpsertEpisode(ctx, ep, testEvidence(2)); err != nil {
			t.Fatal(err)
		}
	}
	if code, b, _ = f.do("POST", "/api/v1/complaints/"+rc.ID+"/confirm", map[string]string{"episode_id": other.ID}, session{bearer: fiscal}); code != http.StatusUnprocessableEntity {
		t.Errorf("other vehicle's episode: %d %s", code, b)
	}
	if code, b, _ = f.do("POST", "/api/v1/complaints/"+rc.ID+"/confirm", map[string]string{"episode_id": mine.ID}, session{bearer: viewer}); code != http.StatusForbidden {
		t.Errorf("viewer confirms: %d %s", code, b)
	}
	if code, b, _ = f.do("POST", "/api/v1/complaints/"+rc.ID+"/confirm", map[string]string{"episode_id": mine.ID}, session{bearer: fiscal}); code != http.StatusOK ||
		!strings.Contains(string(b), `"episode_id":"`+mine.ID+`"`) {
		t.Fatalf("confirm: %d %s", code, b)
	}
	if code, b, _ = f.do("GET", "/api/v1/episodes/"+mine.ID+"/complaints", nil, session{bearer: fiscal}); code != http.StatusOK || !strings.Contains(string(b), rc.ID) {
		t.Errorf("episode's complaints: %d %s", code, b)
	}
	if code, b, _ = f.do("POST", "/api/v1/complaints/"+rc.ID+"/moderation", map[string]string{"status": "rejected"}, session{bearer: fiscal}); code != http.StatusConflict {
		t.Errorf("rejecting a confirmed complaint: %d %s", code, b)
	}
	if _, page, _ := f.do("GET", rc.AnswerURL, nil, session{}); !strings.Contains(string(page), "Confirmada pela fiscalização") {
		t.Errorf("answer page after confirmation:\n%s", page)
	}

	// Erasing the contact: not a fiscal's; an admin's with a reason, audited without the contact.
	if code, _, _ = f.do("DELETE", "/api/v1/complaints/"+rc.ID+"/contact", map[string]string{"reason": "pedido"}, session{bearer: fiscal}); code != http.StatusForbidden {
		t.Errorf("fiscal erases: %d", code)
	}
	if code, b, _ = f.do("DELETE", "/api/v1/complaints/"+rc.ID+"/contact", map[string]string{"reason": "pedido da titular por e-mail à ouvidoria"}, session{bearer: admin}); code != http.StatusOK || !strings.Contains(string(b), `"erased":true`) {
		t.Errorf("admin erases: %d %s", code, b)
	}
	if c, _ := f.db.Complaint(ctx, rc.ID); c.HasContact || c.Contact != "" {
		t.Errorf("contact kept: %+v", c)
	}
	all, _, _ := f.db.ListAudit(ctx, store.AuditFilter{}, 100, "")
	var actions []string
	for _, e := range all {
		if strings.Contains(string(e.Before)+string(e.After), "maria@example.com") {
			t.Errorf("the audit log holds the contact: %+v", e)
		}
		if strings.HasPrefix(e.Action, "complaint.") {
			actions = append(actions, e.Action)
		}
	}
	if strings.Join(actions, ",") != "complaint.contact_erase,complaint.confirm,complaint.contact_read" &&
		strings.Join(actions, ",") != "complaint.contact_read,complaint.confirm,complaint.contact_erase" {
		t.Errorf("audited: %v", actions)
	}
}

// A complainant who left an e-mail receives the answer and the link to the answer page through
// the notifications' SMTP channel (a real SMTP server); one who left none gets nothing.
func TestComplaintAnswerEmailed(t *testing.T) {
	srv := emailtest.Start(t, emailtest.Options{})
	sender, err := email.New(email.Config{Addr: srv.Addr, Username: srv.Username, Password: srv.Password,
		From: "Monitor <monitor@piuma.example>", TLS: &tls.Config{RootCAs: srv.Roots}})
	if err != nil {
		t.Fatal(err)
	}
	pass := time.Now().Add(-time.Hour).Truncate(time.Second)
	f := complaintFixture(t, memTelemetry{driveBy("PIU-002", pass, 90)}, func(c *api.ComplaintsConfig) {
		c.Mail, c.PublicURL = sender.Send, "https://monitor.piuma.example"
	})
	code, _, b := f.complain(map[string]any{"lat": -20.8419, "lon": -40.7300, "at": pass.Format(time.RFC3339), "kind": "som_alto"})
	if code != http.StatusCreated {
		t.Fatalf("%d %s", code, b)
	}
	code, rc, b := f.complain(map[string]any{"lat": -20.84220, "lon": -40.7300, "at": pass.Format(time.RFC3339), "kind": "som_alto", "contact": "maria@example.com"})
	if code != http.StatusCreated {
		t.Fatalf("%d %s", code, b)
	}
	box := srv.Wait(1, 20*time.Second)
	if len(box) != 1 || len(box[0].To) != 1 || box[0].To[0] != "maria@example.com" {
		t.Fatalf("mailbox: %+v", box)
	}
	subject, text, _ := box[0].Read(t)
	if subject != "Sua reclamação sobre os trenzinhos" || !strings.Contains(text, rc.Answer[0]) ||
		!strings.Contains(text, "https://monitor.piuma.example"+rc.AnswerURL) || !strings.Contains(text, "estimativa") {
		t.Errorf("e-mail %q:\n%s", subject, text)
	}
	testenvWait(t, func() bool {
		c, err := f.db.Complaint(context.Background(), rc.ID)
		return err == nil && c.EmailSentAt != nil
	})
	if len(srv.Wait(2, 500*time.Millisecond)) != 1 {
		t.Error("an e-mail for the complaint without contact")
	}
}

func testenvWait(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met in 10 s")
}
