package main

import (
	"context"
	"io"
	"path/filepath"
	"testing"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
)

// `monitor geofences import-osm` turns the extract into a geofences file the monitor loads, with
// the streets and landmarks that name an auto's place.
func TestImportOSMCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "osm.geojson")
	if code := run(context.Background(), []string{"geofences", "import-osm", "../geofences/testdata/piuma-osm-extract.geojson", out}, io.Discard, io.Discard); code != 0 {
		t.Fatalf("exit %d", code)
	}
	set, err := geofences.Load(out)
	if err != nil {
		t.Fatal(err)
	}
	pl := set.ReverseGeocode(orb.Point{-40.7245, -20.8418}, geofences.DefaultStreetRadiusM, geofences.DefaultLandmarkRadiusM)
	if !set.HasStreets() || pl.Street == nil || pl.Street.Feature.Name != "Avenida Beira-Mar" || pl.Landmark == nil || pl.Landmark.Feature.Name != "Praça Oceânica" {
		t.Errorf("place %+v", pl)
	}
}
