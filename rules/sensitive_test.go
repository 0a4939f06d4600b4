package rules

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
)

// sitesTown: sensitive sites far enough apart that each is judged alone.
const sitesTown = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.7000,-20.8000]},
 "properties":{"id":"school-ok","kind":"sensitive","category":"school","name":"EMEF Verificada","opening_hours":"Mo-Fr 07:00-18:00","source":"survey","verified_by":"fiscal","verified_at":"2026-10-01"}},
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.6000,-20.8000]},
 "properties":{"id":"church-nohours","kind":"sensitive","category":"church","name":"Igreja Sem Horário","source":"survey","verified_by":"fiscal","verified_at":"2026-10-01"}},
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.5000,-20.8000]},
 "properties":{"id":"library-osm","kind":"sensitive","category":"library","name":"Biblioteca OSM","opening_hours":"Mo-Su 00:00-24:00","source":"osm"}},
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.4000,-20.8000]},
 "properties":{"id":"office-sample","kind":"sensitive","category":"public_office","name":"Repartição Exemplo","opening_hours":"Mo-Su 00:00-24:00","source":"sample","verified_by":"fiscal","verified_at":"2026-10-01"}},
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.3000,-20.8000]},
 "properties":{"id":"hospital-247","kind":"sensitive","category":"hospital","name":"Hospital 24h","opening_hours":"24/7","source":"survey","verified_by":"fiscal","verified_at":"2026-10-01"}},
{"type":"Feature","geometry":{"type":"Point","coordinates":[-40.2000,-20.8000]},
 "properties":{"id":"church-daily","kind":"sensitive","category":"church","name":"Igreja Diária","opening_hours":"Mo-Su 07:00-21:00","source":"survey","verified_by":"fiscal","verified_at":"2026-10-01"}}
]}`

// soundNear plays loud music for 30 s, standing dist metres north of a site at local time
// when, and returns the sensitive_zone_sound episodes.
func soundNear(t *testing.T, p *profile.Profile, siteID string, dist float64, when string) []Episode {
	t.Helper()
	set, err := geofences.Read(strings.NewReader(sitesTown), "sites.geojson")
	if err != nil {
		t.Fatal(err)
	}
	f, _ := set.Feature(siteID)
	c := f.Geometry.Bound().Center()
	r := &run{e: New(p, set), episodes: map[string]Episode{}, evidence: map[string]int{}}
	tr := newTrip(localTime(t, when))
	tr.lat, tr.lon = atDistance(t, f, c.Lat(), c.Lon(), dist)
	r.apply(t, standing(tr, 30, 8, 80), time.Second)
	r.apply(t, standing(tr, 30, 8, 50), time.Second)
	return r.rule(RuleSensitiveZoneSound)
}

const (
	weekday = "2026-11-26 10:00:00" // a Thursday
	holiday = "2026-11-20 10:00:00" // Consciência Negra, a Friday
)

func TestSensitiveSiteGrounds(t *testing.T) {
	p := withCalendars(profile.Piuma())
	// A verified school with hours, open: an episode that lacks only the agent's confirmation
	// of the music.
	eps := soundNear(t, p, "school-ok", 50, weekday)
	if len(eps) != 1 || eps[0].GroundsAuto || eps[0].Needs != VerifyMusic || eps[0].Draftable() {
		t.Fatalf("verified school: %+v", eps)
	}
	ep := eps[0]
	ep.Verification = &Verification{Kind: VerifyMusic}
	if !ep.Draftable() {
		t.Error("the music confirmed does not make the episode a draft")
	}
	// A verified site with no opening hours: shown, cannot ground an auto, and no
	// verification of the music makes it one.
	eps = soundNear(t, p, "church-nohours", 50, weekday)
	if len(eps) != 1 || eps[0].GroundsAuto || eps[0].Needs != "" || !strings.Contains(eps[0].GroundsNote, noteHoursUnknown) || !eps[0].Site.Verified {
		t.Fatalf("site without hours: %+v", eps)
	}
	ep = eps[0]
	ep.Verification = &Verification{Kind: VerifyMusic}
	if ep.Draftable() {
		t.Error("a site without hours became a draft")
	}
	// OSM-imported but unverified, and sample data: never an auto.
	for _, id := range []string{"library-osm", "office-sample"} {
		eps = soundNear(t, p, id, 50, weekday)
		if len(eps) != 1 || eps[0].GroundsAuto || eps[0].Needs != "" {
			t.Fatalf("%s: %+v", id, eps)
		}
	}
	// With the profile naming a penalty for unconfirmed sound, a verified site with hours
	// grounds an auto by itself.
	q := withCalendars(profile.Piuma())
	q.Sensitive.UnconfirmedSoundPenalty = "Art. 47"
	if eps = soundNear(t, q, "school-ok", 50, weekday); len(eps) != 1 || !eps[0].GroundsAuto || eps[0].Penalty != "Art. 47" {
		t.Fatalf("unconfirmed sound penalty: %+v", eps)
	}
}

func TestSensitiveSiteCalendars(t *testing.T) {
	p := profile.Piuma()
	// On a holiday a site is closed unless its hours name PH; a hospital keeps its hours.
	if eps := soundNear(t, p, "church-daily", 50, holiday); len(eps) != 0 {
		t.Errorf("a church without PH in its hours, on a holiday: %d episodes", len(eps))
	}
	if eps := soundNear(t, p, "church-daily", 50, weekday); len(eps) != 1 {
		t.Errorf("the same church on a weekday: %d episodes", len(eps))
	}
	if eps := soundNear(t, p, "hospital-247", 50, holiday); len(eps) != 1 {
		t.Errorf("a 24/7 hospital on a holiday: %d episodes", len(eps))
	}
	q := profile.Piuma()
	q.Sensitive.HolidayOpen = nil
	if eps := soundNear(t, q, "hospital-247", 50, holiday); len(eps) != 0 {
		t.Errorf("without holiday_open_categories, a hospital on a holiday: %d episodes", len(eps))
	}
	// A school on a recess day is closed.
	q = profile.Piuma()
	q.Calendars.SchoolRecess = []profile.DateRange{{From: "2026-11-23", To: "2026-11-27", Name: "recesso"}}
	if eps := soundNear(t, q, "school-ok", 50, weekday); len(eps) != 0 {
		t.Errorf("a school on a recess day: %d episodes", len(eps))
	}
}

// With a 10 m margin, a site at 195 m gives no episode (195 + 10 > 200) and one at 185 m an
// episode that states "no máximo 195 m".
func TestSensitiveSiteMargin(t *testing.T) {
	p := profile.Piuma()
	p.Sensitive.PositionMargin.FixedM = 10
	if eps := soundNear(t, p, "school-ok", 195, weekday); len(eps) != 0 {
		t.Fatalf("195 m with a 10 m margin: %+v", eps)
	}
	eps := soundNear(t, p, "school-ok", 185, weekday)
	if len(eps) != 1 || eps[0].Site.MarginM != 10 || eps[0].Site.MaxDistanceM < 194.99 || eps[0].Site.MaxDistanceM > 195.01 {
		t.Fatalf("185 m with a 10 m margin: %+v", eps)
	}
	// By default the margin is 5 m per unit of HDOP (0.8 here: 4 m).
	if m := profile.Piuma().MarginM(ptr(0.8)); m != 4 {
		t.Errorf("default margin %v", m)
	}
	if m := profile.Piuma().MarginM(nil); m != 25 {
		t.Errorf("margin without an HDOP %v, want 5 × evidence.max_hdop", m)
	}
}
