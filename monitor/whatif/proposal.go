package whatif

import (
	"fmt"

	"github.com/paulmach/orb/geojson"

	"github.com/trenzinho/trenzinho/geofences"
)

// WithFeatures is the geofences of a proposal: the set in force with the features of a GeoJSON
// FeatureCollection (a new school, a boarding point, an itinerary). A feature of the upload
// replaces the feature in force of the same id; with licensee set, the upload may hold only
// that licensee's itineraries, and they replace every itinerary of the licensee in force ("e
// se eu mudar o itinerário?"). The errors are in pt-BR, for the person who sent the file, with
// the geofences package's own description of each feature's problem.
func WithFeatures(base *geofences.Set, name string, data []byte, licensee string) (*geofences.Set, error) {
	fc, err := geojson.UnmarshalFeatureCollection(data)
	if err != nil {
		return nil, fmt.Errorf("o arquivo %s não é uma FeatureCollection GeoJSON: %v", name, err)
	}
	if len(fc.Features) == 0 {
		return nil, fmt.Errorf("o arquivo %s não tem nenhuma feição", name)
	}
	ids := map[string]bool{}
	for k, f := range fc.Features {
		id, _ := f.Properties["id"].(string)
		ids[id] = true
		if licensee == "" {
			continue
		}
		kind, _ := f.Properties["kind"].(string)
		owner, _ := f.Properties["licensee"].(string)
		if kind != string(geofences.KindItinerary) {
			return nil, fmt.Errorf("feição %d (%s) do arquivo %s: o portal aceita só itinerários (kind \"itinerary\"), não %q", k, id, name, kind)
		}
		if owner != licensee {
			return nil, fmt.Errorf("feição %d (%s) do arquivo %s: o itinerário deve ser do permissionário %s (licensee), não %q", k, id, name, licensee, owner)
		}
	}
	inForce := geojson.NewFeatureCollection()
	if base != nil {
		for _, f := range base.Features() {
			if ids[f.ID] || (licensee != "" && f.Kind == geofences.KindItinerary && f.Licensee == licensee) {
				continue
			}
			g := geojson.NewFeature(f.Geometry)
			g.Properties = f.Properties
			inForce.Append(g)
		}
	}
	set, err := geofences.NewSet(geofences.File{Name: "vigente", Collection: inForce}, geofences.File{Name: name, Collection: fc})
	if err != nil {
		return nil, fmt.Errorf("geocercas propostas inválidas: %w", err)
	}
	return set, nil
}
