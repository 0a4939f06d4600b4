package drafts_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// parkedTown: L1's garage far east, and a public road around the centre of Piúma.
const parkedTown = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.5500,-20.8000],[-40.5490,-20.8000],[-40.5490,-20.7990],[-40.5500,-20.7990],[-40.5500,-20.8000]]]},
 "properties":{"id":"garage-l1","kind":"garage","licensee":"L1","source":"survey"}},
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.7300,-20.8370],[-40.7280,-20.8370],[-40.7280,-20.8364],[-40.7300,-20.8364],[-40.7300,-20.8370]]]},
 "properties":{"id":"rua-central","kind":"public_road","name":"Avenida Central","source":"survey"}}
]}`

// Parking on a public_road geofence for 40 min outside authorised hours: a 250 UFMP draft
// (Art. 13, sole paragraph, c/c Art. 47). The same stop where no public_road geofence is, is an
// alert and no draft.
func TestParkedOnAPublicRoadIsFined(t *testing.T) {
	for _, onRoad := range []bool{true, false} {
		f := newRegFixture(t)
		town := parkedTown
		if !onRoad {
			town = strings.Replace(town, `"kind":"public_road"`, `"kind":"nbr_zone","area":"mixed_leisure"`, 1)
		}
		places, err := geofences.Read(strings.NewReader(town), "parked.geojson")
		if err != nil {
			t.Fatal(err)
		}
		p := profile.Piuma()
		f.engine = rules.New(p, places)
		f.engine.SetRegistry(rules.FromRegistry(f.reg))
		f.drafter = drafts.NewDrafter(drafts.Config{Store: f.db, Profile: p, ProfileYAML: profile.PiumaYAML(), Key: f.key,
			Software: "test", Settle: time.Minute, Registry: f.reg, Places: places})
		start := time.Date(2026, 11, 27, 6, 0, 0, 0, time.UTC)                                               // 03:00 in Piúma: outside Art. 29's hours
		f.play(t, "PIU-002", start, "", append(make([]float64, 40*60), slices.Repeat([]float64{15}, 90)...)) // then drives off
		var made []drafts.Made
		for _, m := range f.drafts(t) {
			if m.Draft.Rules[0] == rules.RuleParkedPublicRoad {
				made = append(made, m)
			}
		}
		if !onRoad {
			if len(made) != 0 {
				t.Fatalf("parked off the public road: %d drafts", len(made))
			}
			continue
		}
		if len(made) != 1 {
			t.Fatalf("parked on the public road: %d drafts", len(made))
		}
		d := made[0].Draft
		if d.Penalty != "Art. 47" || d.FineUFMP != 250 || d.Articles[0] != "Art. 13, parágrafo único" ||
			!strings.Contains(d.Facts[0].Description, "em via pública (Avenida Central)") || d.Facts[0].Peak < 39 {
			t.Errorf("draft %s / %v UFMP / %v: %s (peak %v)", d.Penalty, d.FineUFMP, d.Articles, d.Facts[0].Description, d.Facts[0].Peak)
		}
	}
}
