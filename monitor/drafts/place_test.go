package drafts_test

import (
	"context"
	"crypto/ed25519"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/internal/testkit/fleettest"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// streetExtract imports the synthetic Piúma street extract as `monitor geofences import-osm`
// does, keeping only its streets and landmarks (its church would be one more sensitive site
// for the rules).
func streetExtract(t *testing.T) geofences.File {
	t.Helper()
	in, err := os.Open("../../geofences/testdata/piuma-osm-extract.geojson")
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	fc, _, err := geofences.ImportOSM(in)
	if err != nil {
		t.Fatal(err)
	}
	out := geojson.NewFeatureCollection()
	for _, f := range fc.Features {
		if k := f.Properties["kind"]; k == string(geofences.KindStreet) || k == string(geofences.KindLandmark) {
			out.Append(f)
		}
	}
	return geofences.File{Name: "piuma-osm.geojson", Collection: out}
}

// townWithStreets is the test town with the street extract.
func townWithStreets(t *testing.T) *geofences.Set {
	t.Helper()
	set, err := geofences.NewSet(townFile(t), streetExtract(t))
	if err != nil {
		t.Fatal(err)
	}
	return set
}

func townFile(t *testing.T) geofences.File {
	t.Helper()
	fc, err := geojson.UnmarshalFeatureCollection([]byte(town))
	if err != nil {
		t.Fatal(err)
	}
	return geofences.File{Name: "town.geojson", Collection: fc}
}

func TestPlaceAt(t *testing.T) {
	set := townWithStreets(t)
	// On the avenue, 55 m south of the square.
	pl := drafts.PlaceAt(set, -20.8418, -40.7245)
	if pl == nil || pl.Street != "Avenida Beira-Mar" || pl.StreetDistanceM > 2 || pl.StreetOSMID != "way/910001" ||
		pl.Landmark != "Praça Oceânica" || pl.LandmarkDistanceM < 54 || pl.LandmarkDistanceM > 57 || pl.Source != "osm" {
		t.Fatalf("place %+v", pl)
	}
	if got, want := pl.Text(), `Avenida Beira-Mar, a cerca de 55 m de "Praça Oceânica"`; got != want {
		t.Errorf("Text() = %q, want %q", got, want)
	}
	// On the avenue, no landmark within 300 m: the street alone.
	if pl := drafts.PlaceAt(set, -20.8418, -40.7275); pl == nil || pl.Text() != "Avenida Beira-Mar" {
		t.Errorf("street alone: %+v", pl)
	}
	// Out of town, no extract, no position: nothing is named.
	if pl := drafts.PlaceAt(set, -20.80, -40.70); pl != nil {
		t.Errorf("out of town: %+v", pl)
	}
	noStreets, err := geofences.NewSet(townFile(t))
	if err != nil {
		t.Fatal(err)
	}
	// The town's school is a named site, but without a street extract nothing is named: the
	// coordinates state the place.
	if pl := drafts.PlaceAt(noStreets, -20.8400, -40.7300); pl != nil {
		t.Errorf("without an extract: %+v", pl)
	}
	if pl := drafts.PlaceAt(set, 0, 0); pl != nil {
		t.Errorf("no position: %+v", pl)
	}
	for m, want := range map[float64]float64{0: 5, 3.2: 5, 54.9: 55, 56.5: 55, 57.6: 60, 116.2: 120, 304: 300} {
		if got := drafts.About(m); got != want {
			t.Errorf("About(%v) = %v, want %v", m, got, want)
		}
	}
}

// A draft made with the street extract names the place of each fact, as observed data.
func TestDraftNamesThePlace(t *testing.T) {
	f := newFixture(t)
	set := townWithStreets(t)
	p := fleettest.WithCalendars(profile.Piuma())
	f.engine = rules.New(p, set)
	f.drafter = drafts.NewDrafter(drafts.Config{Store: f.db, Profile: p, ProfileYAML: profile.PiumaYAML(), Places: set, Key: f.key, Software: "test", Settle: time.Minute})
	start := time.Date(2026, 11, 27, 10, 0, 0, 0, p.Location())
	f.play(t, f.play(t, start, 120, 80), 200, 50)
	f.verify(t, rules.VerifyMusic)
	f.verify(t, rules.VerifyNBR10151)
	made, err := f.drafter.Run(context.Background(), time.Now().Add(5*time.Minute))
	if err != nil || len(made) != 1 {
		t.Fatalf("%d drafts: %v", len(made), err)
	}
	// The vehicle stood on Rua Quintino Bocaiúva, 50 m north of the school (a named site of
	// the survey: a landmark too).
	const want = `Local aproximado da posição registrada no instante do valor máximo: nas proximidades de Rua Quintino Bocaiúva, a cerca de 50 m de "EMEF Teste".`
	b, err := drafts.Verify(&made[0].Sealed, f.key.Public().(ed25519.PublicKey))
	if err != nil {
		t.Fatal(err)
	}
	// The bundle keeps the street's geometry with the school's (the landmark), for the map.
	var ids []string
	for _, raw := range b.Places {
		f, err := geojson.UnmarshalFeature(raw)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, f.Properties.MustString("id", ""))
	}
	if strings.Join(ids, ",") != "school,osm-way-910002" {
		t.Errorf("bundle places %v", ids)
	}
	for _, fct := range b.Draft.Facts {
		if fct.Place == nil || fct.Place.Street != "Rua Quintino Bocaiúva" || fct.Place.Landmark != "EMEF Teste" {
			t.Errorf("fact %s: place %+v", fct.Rule, fct.Place)
		}
		if !strings.HasSuffix(fct.Description, want) {
			t.Errorf("fact %s: %s", fct.Rule, fct.Description)
		}
	}
}
