package configbundle

import (
	"encoding/json"

	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/geofences"
)

// Geofences selects from set what a bridge of licensee needs, as a GeoJSON FeatureCollection
// that geofences.Read loads again: every sensitive site (with its opening hours), NBR zone and
// boarding point, and the itineraries and garages of licensee only (another licensee's routes
// say nothing about this vehicle). Streets, landmarks and public roads are left out: they
// name places in autos or judge parking, which the monitor does, not the coach.
func Geofences(set *geofences.Set, licensee string) (json.RawMessage, error) {
	fc := geojson.NewFeatureCollection()
	for _, f := range set.Features() {
		switch f.Kind {
		case geofences.KindSensitive, geofences.KindNBRZone, geofences.KindBoardingPoint:
		case geofences.KindItinerary, geofences.KindGarage:
			if f.Licensee != licensee {
				continue
			}
		default:
			continue
		}
		g := geojson.NewFeature(f.Geometry)
		g.Properties = f.Properties
		fc.Append(g)
	}
	return json.Marshal(fc)
}
