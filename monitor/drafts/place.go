package drafts

import (
	"math"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
)

// Place names where a fact happened, from the street extract the municipality imported with
// its geofences (geofences.Set.ReverseGeocode), as it stood when the draft was made: the
// named street nearest to the fact's position and the nearest named landmark, each with its
// distance in metres from the position. It describes the position, which the coordinates
// state exactly: it is approximate, and no rule judges it. Either name is empty when none lies
// within its radius.
//
// StreetID and LandmarkID are the geofence ids of the features, whose geometry the bundle
// keeps with the sites (Bundle.Places) so that the mini-map draws them.
type Place struct {
	Street          string  `json:"street,omitempty"`
	StreetID        string  `json:"street_id,omitempty"`
	StreetOSMID     string  `json:"street_osm_id,omitempty"`
	StreetDistanceM float64 `json:"street_distance_m,omitempty"`

	Landmark          string  `json:"landmark,omitempty"`
	LandmarkID        string  `json:"landmark_id,omitempty"`
	LandmarkOSMID     string  `json:"landmark_osm_id,omitempty"`
	LandmarkDistanceM float64 `json:"landmark_distance_m,omitempty"`

	// Source is where the names come from: the source property of the features
	// ("osm": an OpenStreetMap extract).
	Source string `json:"source,omitempty"`
}

// PlaceAt names the position (lat, lon) from the street and landmark features of set; nil
// when set is nil, has no street extract, the position is unknown (0, 0), or nothing named
// lies near: the place is then stated by its coordinates only, never guessed.
func PlaceAt(set *geofences.Set, lat, lon float64) *Place {
	if set == nil || !set.HasStreets() || (lat == 0 && lon == 0) {
		return nil
	}
	g := set.ReverseGeocode(orb.Point{lon, lat}, geofences.DefaultStreetRadiusM, geofences.DefaultLandmarkRadiusM)
	if g.Street == nil && g.Landmark == nil {
		return nil
	}
	pl := &Place{}
	if h := g.Street; h != nil {
		pl.Street, pl.StreetID, pl.StreetDistanceM, pl.Source = h.Feature.Name, h.Feature.ID, round1(h.DistanceM), h.Feature.Source
		pl.StreetOSMID, _ = h.Feature.Properties["osm_id"].(string)
	}
	if h := g.Landmark; h != nil {
		pl.Landmark, pl.LandmarkID, pl.LandmarkDistanceM = h.Feature.Name, h.Feature.ID, round1(h.DistanceM)
		pl.LandmarkOSMID, _ = h.Feature.Properties["osm_id"].(string)
		if pl.Source == "" {
			pl.Source = h.Feature.Source
		}
	}
	return pl
}

func round1(x float64) float64 { return math.Round(x*10) / 10 }

// About rounds a distance for the text: to 5 m below 100 m, to 10 m above; "a cerca de".
func About(m float64) float64 {
	if m < 100 {
		return max(5, math.Round(m/5)*5)
	}
	return math.Round(m/10) * 10
}

// Text states the place in Portuguese as the auto prints it, approximate and in the accused's
// favour ("nas proximidades de"): `Avenida Beira-Mar, a cerca de 60 m de "Praça Oceânica"`,
// `Avenida Beira-Mar`, or `a cerca de 120 m de "Praça Oceânica"`.
func (p *Place) Text() string {
	if p == nil {
		return ""
	}
	landmark := ""
	if p.Landmark != "" {
		landmark = "a cerca de " + Num(About(p.LandmarkDistanceM), 0) + " m de \"" + p.Landmark + "\""
	}
	switch {
	case p.Street != "" && landmark != "":
		return p.Street + ", " + landmark
	case p.Street != "":
		return p.Street
	}
	return landmark
}
