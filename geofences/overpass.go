package geofences

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

// overpassElement is an element of an Overpass API JSON answer ([out:json]), with its geometry
// as `out geom` gives it (or its centre, with `out center`).
type overpassElement struct {
	Type     string            `json:"type"`
	ID       int64             `json:"id"`
	Lat      *float64          `json:"lat"`
	Lon      *float64          `json:"lon"`
	Tags     map[string]string `json:"tags"`
	Geometry []overpassLatLon  `json:"geometry"`
	Center   *overpassLatLon   `json:"center"`
	Members  []struct {
		Type     string           `json:"type"`
		Role     string           `json:"role"`
		Geometry []overpassLatLon `json:"geometry"`
	} `json:"members"`
}

type overpassLatLon struct {
	Lat float64 `json:"lat"`
	Lon float64 `json:"lon"`
}

// fromOverpass converts an Overpass JSON answer into the GeoJSON features ImportOSM reads, as
// osmtogeojson would for the cases the importer uses: a node is a Point; a way with geometry
// a LineString (the importer closes a closed one into a Polygon where it needs an area); a
// multipolygon relation whose outer members are closed rings a MultiPolygon of them (inner
// members and outer rings split over several ways are not assembled: such a relation falls
// back to its centre, or is skipped); an element with only a centre (`out center`) a Point.
// Elements without tags (the nodes of ways) are left out.
func fromOverpass(elements []overpassElement) *geojson.FeatureCollection {
	fc := geojson.NewFeatureCollection()
	for _, e := range elements {
		if len(e.Tags) == 0 {
			continue
		}
		var g orb.Geometry
		switch {
		case e.Type == "node" && e.Lat != nil && e.Lon != nil:
			g = orb.Point{*e.Lon, *e.Lat}
		case e.Type == "way" && len(e.Geometry) > 0:
			g = overpassLine(e.Geometry)
		case e.Type == "relation" && e.Tags["type"] == "multipolygon":
			var mp orb.MultiPolygon
			for _, m := range e.Members {
				if m.Role != "outer" {
					continue
				}
				ls := overpassLine(m.Geometry)
				if len(ls) < 4 || ls[0] != ls[len(ls)-1] {
					mp = nil
					break
				}
				mp = append(mp, orb.Polygon{orb.Ring(ls)})
			}
			if len(mp) > 0 {
				g = mp
			}
		}
		if g == nil && e.Center != nil {
			g = orb.Point{e.Center.Lon, e.Center.Lat}
		}
		if g == nil {
			g = orb.Collection{} // no usable geometry: counted as BadGeometry by the importer
		}
		f := geojson.NewFeature(g)
		ref := e.Type + "/" + strconv.FormatInt(e.ID, 10)
		f.ID = ref
		f.Properties["@id"] = ref
		for k, v := range e.Tags {
			if k != "id" && k != "@id" {
				f.Properties[k] = v
			}
		}
		fc.Append(f)
	}
	return fc
}

func overpassLine(pts []overpassLatLon) orb.LineString {
	ls := make(orb.LineString, 0, len(pts))
	for _, p := range pts {
		ls = append(ls, orb.Point{p.Lon, p.Lat})
	}
	return ls
}

// decodeOverpass reads an Overpass JSON answer, or reports that data is not one.
func decodeOverpass(data []byte) (*geojson.FeatureCollection, bool, error) {
	var probe struct {
		Elements json.RawMessage `json:"elements"`
	}
	if json.Unmarshal(data, &probe) != nil || probe.Elements == nil {
		return nil, false, nil
	}
	var elements []overpassElement
	if err := json.Unmarshal(probe.Elements, &elements); err != nil {
		return nil, true, fmt.Errorf("bad Overpass JSON: %w", err)
	}
	return fromOverpass(elements), true, nil
}
