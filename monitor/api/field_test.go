package api_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/api"
	"github.com/trenzinho/trenzinho/monitor/photo"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/monitor/view"
	"github.com/trenzinho/trenzinho/rules"
)

// fieldSecret is the test server's field-verification secret.
var fieldSecret = []byte("segredo-de-campo-de-teste-32-bytes!")

// photoJPEG is a small camera-like JPEG stating taken and a position in its EXIF.
func photoJPEG(t *testing.T, taken time.Time) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, 40, 30))
	for i := range img.Pix {
		img.Pix[i] = byte(i * 7)
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, nil); err != nil {
		t.Fatal(err)
	}
	lat, lon := -20.83671, -40.72923
	out, err := photo.WithEXIF(b.Bytes(), taken, &lat, &lon)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// Photos are accepted by content, not by the declared type: JPEG and PNG only, bounded in size,
// stored once by SHA-256 with the EXIF capture time and position read on the server and kept
// apart from the receipt time; only fiscal and above send or see them, never cached.
func TestPhotoUploadBoundsAndSniffing(t *testing.T) {
	// Without a photo store, there is no such route.
	f := newFixture(t, nil)
	_, admin0 := f.login("admin", adminPassword)
	if code, _, _ := f.do("POST", "/api/v1/photos", "x", session{bearer: admin0}, "Content-Type", "image/jpeg"); code != http.StatusNotFound {
		t.Fatalf("photos without a store: %d", code)
	}
	g := newPhotoFixture(t)
	_, viewer := g.login("maria", viewerPassword)
	_, admin := g.login("admin", adminPassword)
	sp := time.FixedZone("", -3*3600)
	taken := time.Date(2026, 11, 27, 21, 14, 5, 0, sp)
	jpg := photoJPEG(t, taken)

	if code, b, _ := g.do("POST", "/api/v1/photos", string(jpg), session{bearer: viewer}, "Content-Type", "image/jpeg"); code != http.StatusForbidden {
		t.Fatalf("a viewer uploads: %d %s", code, b)
	}
	for name, body := range map[string]string{
		"html declared as JPEG": "<html><script>alert(1)</script></html>",
		"gif":                   "GIF89a\x01\x00\x01\x00\x00\x00\x00;",
		"truncated JPEG":        string(jpg[:30]),
		"empty":                 "",
	} {
		if code, b, _ := g.do("POST", "/api/v1/photos", body, session{bearer: admin}, "Content-Type", "image/jpeg"); code != http.StatusUnsupportedMediaType {
			t.Errorf("%s: %d %s", name, code, b)
		}
	}
	big := append(append([]byte(nil), jpg...), make([]byte, photo.MaxBytes)...)
	if code, b, _ := g.do("POST", "/api/v1/photos", string(big), session{bearer: admin}, "Content-Type", "image/jpeg"); code != http.StatusRequestEntityTooLarge {
		t.Fatalf("too large: %d %s", code, b)
	}

	// A real JPEG, declared as anything: recognised by its bytes.
	code, b, _ := g.do("POST", "/api/v1/photos", string(jpg), session{bearer: admin}, "Content-Type", "application/octet-stream")
	if code != http.StatusCreated {
		t.Fatalf("upload: %d %s", code, b)
	}
	var p rules.Photo
	if err := json.Unmarshal(b, &p); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(jpg)
	if p.SHA256 != hex.EncodeToString(sum[:]) || p.ContentType != "image/jpeg" || p.Size != len(jpg) || p.Width != 40 ||
		p.EXIFTakenAt != "2026-11-27T21:14:05-03:00" || !p.EXIFZoneStated || p.EXIFLat == nil || *p.EXIFLat > -20.8366 || *p.EXIFLat < -20.8368 ||
		p.ReceivedAt.IsZero() || p.ReceivedAt.Sub(taken) < 24*time.Hour {
		t.Fatalf("photo %s", b)
	}
	// The same bytes again: 200, the first receipt kept.
	code, b2, _ := g.do("POST", "/api/v1/photos", string(jpg), session{bearer: admin}, "Content-Type", "image/jpeg")
	var p2 rules.Photo
	if code != http.StatusOK || json.Unmarshal(b2, &p2) != nil || !p2.ReceivedAt.Equal(p.ReceivedAt.Time) {
		t.Fatalf("again: %d %s", code, b2)
	}
	code, got, h := g.do("GET", "/api/v1/photos/"+p.SHA256, nil, session{bearer: admin})
	if code != http.StatusOK || !bytes.Equal(got, jpg) || h.Get("Content-Type") != "image/jpeg" || !strings.Contains(h.Get("Cache-Control"), "no-store") ||
		h.Get("X-Content-Type-Options") != "nosniff" {
		t.Fatalf("get: %d %v", code, h)
	}
	if code, _, _ := g.do("GET", "/api/v1/photos/"+p.SHA256, nil, session{bearer: viewer}); code != http.StatusForbidden {
		t.Fatalf("a viewer sees a photo: %d", code)
	}
	if code, _, _ := g.do("GET", "/api/v1/photos/"+strings.Repeat("0", 64), nil, session{bearer: admin}); code != http.StatusNotFound {
		t.Fatalf("unknown photo: %d", code)
	}
	if code, _, _ := g.do("GET", "/api/v1/photos/..%2f..%2fetc", nil, session{bearer: admin}); code != http.StatusNotFound {
		t.Fatalf("bad hash: %d", code)
	}
	audit, _, err := g.db.ListAudit(context.Background(), store.AuditFilter{Action: "photo.upload"}, 0, "")
	if err != nil || len(audit) != 1 || audit[0].User != "admin" {
		t.Fatalf("audit %+v %v", audit, err)
	}
}

// newPhotoFixture is the API with the store as its photo store and a field secret.
func newPhotoFixture(t *testing.T) *fixture {
	t.Helper()
	return newFixture(t, func(c *api.Config) {
		c.FieldSecret = fieldSecret
		c.Photos = c.Episodes.(*store.DB)
	})
}

// fieldSign signs a field verification as the dashboard does (static/js/field.js): HMAC-SHA256
// under the session's key of each field as "<byte length>:<value>\n".
func fieldSign(key []byte, episode string, form map[string]any, photos []string, client string) string {
	str := func(k string) string {
		switch v := form[k].(type) {
		case nil:
			return ""
		case bool:
			return fmt.Sprint(v)
		default:
			return v.(string)
		}
	}
	m := hmac.New(sha256.New, key)
	for _, f := range []string{"trenzinho-constatacao-v1", episode, str("kind"), str("captured_at"), str("music_audible"),
		str("boarding"), str("note"), strings.Join(photos, ","), client} {
		fmt.Fprintf(m, "%d:%s\n", len(f), f)
	}
	return base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// A field verification made on a phone: the session's key (handed at login to a fiscal, not to a
// viewer) signs it; the monitor checks the signature, keeps the phone's capture time apart from
// its receipt time, attaches the photos with their EXIF statements, and takes a resent item as
// the one recorded. A tampered item, a capture time ahead of the clock, a photo not sent and a
// "music not audible" offered as a music confirmation are refused.
func TestFieldVerificationSigned(t *testing.T) {
	f := newPhotoFixture(t)
	ctx := context.Background()
	if _, err := f.db.CreateUser(ctx, "joao", "senha-do-joao", store.RoleFiscal); err != nil {
		t.Fatal(err)
	}
	loginKey := func(user, password string) (string, map[string]string) {
		code, b, _ := f.do("POST", "/api/v1/login", map[string]string{"user": user, "password": password}, session{})
		var out struct {
			Token    string            `json:"token"`
			FieldKey map[string]string `json:"field_key"`
		}
		if code != 200 || json.Unmarshal(b, &out) != nil {
			t.Fatalf("login %s: %d %s", user, code, b)
		}
		return out.Token, out.FieldKey
	}
	if _, k := loginKey("maria", viewerPassword); k != nil {
		t.Fatalf("a viewer got a field key: %v", k)
	}
	token, fk := loginKey("joao", "senha-do-joao")
	key, err := base64.StdEncoding.DecodeString(fk["key"])
	if err != nil || len(key) != 32 || len(fk["session"]) != 32 || strings.Contains(token, fk["session"]) {
		t.Fatalf("field key %v %v", fk, err)
	}
	// GET /api/v1/session hands the same key to the same session.
	_, b, _ := f.do("GET", "/api/v1/session", nil, session{bearer: token})
	if !strings.Contains(string(b), fk["key"]) {
		t.Fatalf("session: %s", b)
	}

	start := time.Now().Add(-10 * time.Minute).UTC().Truncate(time.Millisecond)
	ep := testEpisode("PIU-001", rules.RuleSpeed, start, true)
	if err := f.db.UpsertEpisode(ctx, ep, nil); err != nil {
		t.Fatal(err)
	}
	jpg := photoJPEG(t, start.Add(2*time.Minute))
	code, b, _ := f.do("POST", "/api/v1/photos", string(jpg), session{bearer: token}, "Content-Type", "image/jpeg")
	var p rules.Photo
	if code != http.StatusCreated || json.Unmarshal(b, &p) != nil {
		t.Fatalf("upload %d %s", code, b)
	}
	captured := start.Add(3 * time.Minute).Format(time.RFC3339Nano)
	form := map[string]any{"kind": rules.VerifyField, "note": "trenzinho parado com passageiros subindo, som desligado",
		"music_audible": false, "boarding": true, "captured_at": captured, "photos": []string{p.SHA256}}
	sign := func(form map[string]any, client string) map[string]any {
		out := map[string]any{}
		for k, v := range form {
			out[k] = v
		}
		out["signature"] = map[string]string{"session": fk["session"], "client_id": client,
			"hmac": fieldSign(key, ep.ID, form, form["photos"].([]string), client)}
		return out
	}
	path := "/api/v1/episodes/" + ep.ID + "/verification"

	// Refused: tampered after signing, captured ahead of the clock, a photo never sent, a signature
	// by another session's key, "no music" as a music confirmation.
	tampered := sign(form, "c-1")
	tampered["note"] = "outra coisa escrita depois da assinatura"
	future := map[string]any{}
	for k, v := range form {
		future[k] = v
	}
	future["captured_at"] = time.Now().Add(time.Hour).UTC().Format(time.RFC3339Nano)
	unsent := map[string]any{}
	for k, v := range form {
		unsent[k] = v
	}
	unsent["photos"] = []string{strings.Repeat("ab", 32)}
	other := sign(form, "c-1")
	other["signature"].(map[string]string)["session"] = strings.Repeat("0", 32)
	noMusic := map[string]any{"kind": rules.VerifyMusic, "note": "não ouvi música nenhuma", "music_audible": false}
	for name, body := range map[string]map[string]any{"tampered": tampered, "future": sign(future, "c-2"),
		"unsent photo": sign(unsent, "c-3"), "other session": other, "no music": noMusic} {
		if code, b, _ := f.do("POST", path, body, session{bearer: token}); code != http.StatusBadRequest && code != http.StatusConflict {
			t.Errorf("%s: %d %s", name, code, b)
		}
	}

	code, b, _ = f.do("POST", path, sign(form, "c-1"), session{bearer: token})
	if code != http.StatusOK {
		t.Fatalf("verification: %d %s", code, b)
	}
	var got rules.Episode
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	v := got.Verification
	if v == nil || v.Kind != rules.VerifyField || v.By != "joao" || v.CapturedAt == nil || v.CapturedAt.Format(time.RFC3339Nano) != captured ||
		v.At.Sub(v.CapturedAt.Time) < 6*time.Minute || v.Boarding == nil || !*v.Boarding || v.MusicAudible == nil || *v.MusicAudible ||
		len(v.Photos) != 1 || v.Photos[0].SHA256 != p.SHA256 || v.Photos[0].EXIFTakenAt == "" || v.Signature == nil || !v.Signature.Verified ||
		v.Signature.Session != fk["session"] || got.Draftable() {
		t.Fatalf("verification recorded: %s", b)
	}
	// The phone resends the item (the answer was lost): the recorded one stands.
	code, b, _ = f.do("POST", path, sign(form, "c-1"), session{bearer: token})
	var again rules.Episode
	if code != http.StatusOK || json.Unmarshal(b, &again) != nil || !again.Verification.At.Equal(v.At.Time) {
		t.Fatalf("resent: %d %s", code, b)
	}
	audit, _, err := f.db.ListAudit(ctx, store.AuditFilter{Action: "episode.verify"}, 0, "")
	if err != nil || len(audit) != 1 {
		t.Fatalf("audit %d %v", len(audit), err)
	}
}

// "Perto de mim": the vehicles within the radius, nearest first, with their open alerts; a
// vehicle farther away or without a position is left out; the position is validated.
func TestNearby(t *testing.T) {
	pos := func(lat, lon float64) (*float64, *float64) { return &lat, &lon }
	speed, db, on, off := 18.0, 71.5, true, false
	aLat, aLon := pos(-20.8367, -40.7292) // the agent's position
	nLat, nLon := pos(-20.8400, -40.7292) // ~367 m south
	fLat, fLon := pos(-20.8600, -40.7292) // ~2.6 km
	start := time.Now().Add(-5 * time.Minute).UTC().Truncate(time.Millisecond)
	ep := testEpisode("NEAR-1", rules.RuleSpeed, start, true)
	fleet := fakeFleet{
		{ID: "NEAR-1", Online: &on, Lat: nLat, Lon: nLon, SpeedKmh: &speed, LAeqDB: &db, OpenEpisodes: []string{ep.ID}},
		{ID: "HERE-0", Online: &off, Lat: aLat, Lon: aLon, OpenEpisodes: []string{}},
		{ID: "FAR-2", Online: &on, Lat: fLat, Lon: fLon, OpenEpisodes: []string{}},
		{ID: "NOPOS", OpenEpisodes: []string{}},
	}
	f := newFixture(t, func(c *api.Config) { c.Fleet = fleet })
	if err := f.db.UpsertEpisode(context.Background(), ep, nil); err != nil {
		t.Fatal(err)
	}
	_, viewer := f.login("maria", viewerPassword)
	code, b, _ := f.do("GET", fmt.Sprintf("/api/v1/nearby?lat=%v&lon=%v", *aLat, *aLon), nil, session{bearer: viewer})
	var out struct {
		RadiusM  float64 `json:"radius_m"`
		Vehicles []struct {
			view.Vehicle
			DistanceM float64 `json:"distance_m"`
			Alerts    []struct {
				ID   string `json:"id"`
				Rule string `json:"rule"`
			} `json:"alerts"`
		} `json:"vehicles"`
	}
	if code != 200 || json.Unmarshal(b, &out) != nil {
		t.Fatalf("nearby: %d %s", code, b)
	}
	if out.RadiusM != 1000 || len(out.Vehicles) != 2 || out.Vehicles[0].ID != "HERE-0" || out.Vehicles[1].ID != "NEAR-1" ||
		out.Vehicles[1].DistanceM < 340 || out.Vehicles[1].DistanceM > 400 || *out.Vehicles[1].SpeedKmh != 18 || *out.Vehicles[1].LAeqDB != 71.5 ||
		len(out.Vehicles[1].Alerts) != 1 || out.Vehicles[1].Alerts[0].ID != ep.ID || *out.Vehicles[0].Online {
		t.Fatalf("nearby: %s", b)
	}
	code, b, _ = f.do("GET", fmt.Sprintf("/api/v1/nearby?lat=%v&lon=%v&radius_m=5000", *aLat, *aLon), nil, session{bearer: viewer})
	if code != 200 || strings.Count(string(b), `"distance_m"`) != 3 {
		t.Fatalf("5 km: %d %s", code, b)
	}
	for _, q := range []string{"", "lat=91&lon=0", "lat=x&lon=1", "lat=1&lon=1&radius_m=99999", "lat=NaN&lon=1"} {
		if code, b, _ := f.do("GET", "/api/v1/nearby?"+q, nil, session{bearer: viewer}); code != http.StatusBadRequest {
			t.Errorf("%q: %d %s", q, code, b)
		}
	}
	if code, _, _ := f.do("GET", "/api/v1/nearby?lat=1&lon=1", nil, session{}); code != http.StatusUnauthorized {
		t.Errorf("without a session: %d", code)
	}
}
