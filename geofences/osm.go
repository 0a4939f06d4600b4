package geofences

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

// Stats counts what ImportOSM did.
type Stats struct {
	Features   int              // features read
	Imported   int              // sensitive features written
	ByCategory map[Category]int // imported features per category
	Streets    int              // named highway ways written as streets
	Landmarks  int              // named points of interest written as landmarks
	// Unused counts the features skipped because they are neither a sensitive site, nor a
	// named highway way, nor a named point of interest.
	Unused      int
	NoID        int // skipped: no OSM id
	BadGeometry int // skipped: geometry missing, not a point or area, or invalid
	Duplicates  int // skipped: OSM id already imported
	Unnamed     int // imported with a generated name
	// UnparsedOpeningHours counts sites whose opening_hours tag is outside
	// the supported syntax: they are imported without opening_hours
	// (always open), the tag kept as osm_opening_hours.
	UnparsedOpeningHours int
}

// osmTypedID matches "node/123", "way/123" and "relation/123".
var osmTypedID = regexp.MustCompile(`^(node|way|relation)/([0-9]+)$`)

// categoryLabel names a category in pt-BR, for generated names.
func categoryLabel(c Category) string {
	switch c {
	case CategoryHospital:
		return "Hospital"
	case CategoryHealth:
		return "Unidade de saúde"
	case CategorySchool:
		return "Escola"
	case CategoryLibrary:
		return "Biblioteca"
	case CategoryPublicOffice:
		return "Órgão público"
	case CategoryChurch:
		return "Templo religioso"
	}
	return string(c)
}

// ImportOSM converts an OpenStreetMap GeoJSON export (as produced by
// overpass-turbo or osmtogeojson), or an Overpass API JSON answer with
// geometry ([out:json] … out geom; see fromOverpass), into sensitive features, and the named
// streets and landmarks that name the place of an auto
// (Set.ReverseGeocode). Sensitive sites are:
//
//	amenity=hospital, healthcare=hospital         hospital
//	amenity=clinic|doctors, other healthcare=*    health
//	amenity=school|kindergarten|college|university school
//	amenity=library                               library
//	amenity=townhall|courthouse, office=government public_office
//	amenity=place_of_worship                      church
//
// A way with a highway tag of a road (highway=residential, primary, …; see
// streetHighways) and a name (or, lacking one, a ref such as "ES-060") is a
// street (kind street, osm_tag "highway=…"), its geometry a LineString or
// MultiLineString. Any other named feature with an amenity, tourism,
// leisure, historic, shop, man_made, natural, place or public_transport tag
// is a landmark (kind landmark), a Point or Polygon. A generated name of an
// unnamed sensitive site is marked name_generated: it never names a place.
//
// Tags may be flat properties or nested in a "tags" object; the OSM id is
// read from the feature id, "@id", "id" ("node/123") or "type" and a
// numeric "id". Each feature keeps its id as "osm-node-123" and osm_id
// "node/123", its name (or a generated pt-BR name when it has none), its
// opening_hours when they parse, and the tag that classified it (osm_tag);
// it gets source "osm" and no verified_by or verified_at, so it counts as
// unverified. Points and polygons are kept; a closed LineString becomes a
// Polygon; other geometries are skipped. Features are written in input
// order. The result is accepted by NewSet unless its ids clash with other
// files.
func ImportOSM(r io.Reader) (*geojson.FeatureCollection, Stats, error) {
	st := Stats{ByCategory: make(map[Category]int)}
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, st, fmt.Errorf("geofences: import OSM: %w", err)
	}
	in, isOverpass, err := decodeOverpass(data)
	switch {
	case err != nil:
		return nil, st, fmt.Errorf("geofences: import OSM: %w", err)
	case !isOverpass:
		if in, err = geojson.UnmarshalFeatureCollection(data); err != nil {
			return nil, st, fmt.Errorf("geofences: import OSM: neither a GeoJSON FeatureCollection nor Overpass JSON: %w", err)
		}
	}
	out := geojson.NewFeatureCollection()
	seen := make(map[string]bool)
	for _, gf := range in.Features {
		if gf == nil {
			continue
		}
		st.Features++
		tags := osmTags(gf)
		cat, tag := osmCategory(tags)
		kind := KindSensitive
		name := firstTag(tags, "name", "name:pt", "official_name", "short_name", "alt_name")
		switch {
		case cat != "":
		case streetHighways[tags["highway"]] && cmp.Or(name, tags["ref"]) != "":
			kind, tag, name = KindStreet, "highway="+tags["highway"], cmp.Or(name, strings.TrimSpace(tags["ref"]))
		default:
			if tag = landmarkTag(tags); tag == "" || name == "" {
				st.Unused++
				continue
			}
			kind = KindLandmark
		}
		typ, num, ok := osmID(gf)
		if !ok {
			st.NoID++
			continue
		}
		var geom orb.Geometry
		if kind == KindStreet {
			geom = streetGeometry(gf.Geometry)
		} else {
			geom = osmGeometry(gf.Geometry)
		}
		if geom == nil {
			st.BadGeometry++
			continue
		}
		osmRef := typ + "/" + num
		id := "osm-" + typ + "-" + num
		if seen[id] {
			st.Duplicates++
			continue
		}
		seen[id] = true

		f := geojson.NewFeature(geom)
		f.Properties["id"] = id
		f.Properties["kind"] = string(kind)
		f.Properties["source"] = "osm"
		f.Properties["osm_id"] = osmRef
		f.Properties["osm_tag"] = tag
		if kind != KindSensitive {
			f.Properties["name"] = name
			out.Append(f)
			if kind == KindStreet {
				st.Streets++
			} else {
				st.Landmarks++
			}
			continue
		}
		f.Properties["category"] = string(cat)
		if name == "" {
			name = categoryLabel(cat) + " sem nome (OSM " + osmRef + ")"
			f.Properties["name_generated"] = true
			st.Unnamed++
		}
		f.Properties["name"] = name
		if oh := strings.TrimSpace(tags["opening_hours"]); oh != "" {
			if _, err := ParseOpeningHours(oh); err == nil {
				f.Properties["opening_hours"] = oh
			} else {
				f.Properties["osm_opening_hours"] = oh
				st.UnparsedOpeningHours++
			}
		}
		out.Append(f)
		st.Imported++
		st.ByCategory[cat]++
	}
	return out, st, nil
}

// osmTags returns the OSM tags of a feature: its "tags" object if it has
// one (older osmtogeojson), else its string properties other than the
// metadata ("@id", "id", …).
func osmTags(f *geojson.Feature) map[string]string {
	tags := make(map[string]string)
	if nested, ok := f.Properties["tags"].(map[string]any); ok {
		for k, v := range nested {
			if s, ok := v.(string); ok {
				tags[k] = s
			}
		}
		return tags
	}
	for k, v := range f.Properties {
		if s, ok := v.(string); ok && k != "id" && !strings.HasPrefix(k, "@") {
			tags[k] = s
		}
	}
	return tags
}

func firstTag(tags map[string]string, keys ...string) string {
	for _, k := range keys {
		if v := strings.TrimSpace(tags[k]); v != "" {
			return v
		}
	}
	return ""
}

// osmCategory classifies the tags, returning the category and the tag
// ("amenity=school") that decided it, or "" for other features.
func osmCategory(tags map[string]string) (Category, string) {
	amenity := tags["amenity"]
	switch amenity {
	case "hospital":
		return CategoryHospital, "amenity=" + amenity
	case "clinic", "doctors":
		return CategoryHealth, "amenity=" + amenity
	case "school", "kindergarten", "college", "university":
		return CategorySchool, "amenity=" + amenity
	case "library":
		return CategoryLibrary, "amenity=" + amenity
	case "place_of_worship":
		return CategoryChurch, "amenity=" + amenity
	case "townhall", "courthouse":
		return CategoryPublicOffice, "amenity=" + amenity
	}
	if hc := tags["healthcare"]; hc != "" && hc != "no" {
		if hc == "hospital" {
			return CategoryHospital, "healthcare=" + hc
		}
		return CategoryHealth, "healthcare=" + hc
	}
	if tags["office"] == "government" {
		return CategoryPublicOffice, "office=government"
	}
	return "", ""
}

// osmID finds the OSM type and number of a feature.
func osmID(f *geojson.Feature) (typ, num string, ok bool) {
	for _, v := range []any{f.ID, f.Properties["@id"], f.Properties["id"]} {
		if s, isString := v.(string); isString {
			if m := osmTypedID.FindStringSubmatch(s); m != nil {
				return m[1], m[2], true
			}
		}
	}
	// Older osmtogeojson: "type": "node", "id": 123.
	typ, _ = f.Properties["type"].(string)
	if n, isNumber := f.Properties["id"].(float64); isNumber && n > 0 && n == float64(int64(n)) {
		switch typ {
		case "node", "way", "relation":
			return typ, strconv.FormatInt(int64(n), 10), true
		}
	}
	return "", "", false
}

// streetHighways are the highway values of roads a vehicle drives on (not
// footways, paths, cycleways or steps, nor nodes such as bus stops).
var streetHighways = map[string]bool{
	"motorway": true, "trunk": true, "primary": true, "secondary": true, "tertiary": true,
	"motorway_link": true, "trunk_link": true, "primary_link": true, "secondary_link": true, "tertiary_link": true,
	"unclassified": true, "residential": true, "living_street": true, "service": true,
	"pedestrian": true, "road": true, "track": true, "busway": true,
}

// landmarkKeys are the tags that make a named feature a landmark, in the
// order they are looked at.
var landmarkKeys = []string{"amenity", "tourism", "leisure", "historic", "shop", "man_made", "natural", "place", "public_transport"}

// landmarkTag returns the tag ("tourism=attraction") that makes a feature a
// landmark, or "".
func landmarkTag(tags map[string]string) string {
	for _, k := range landmarkKeys {
		if v := strings.TrimSpace(tags[k]); v != "" && v != "no" {
			return k + "=" + v
		}
	}
	return ""
}

// streetGeometry returns the geometry of a street to keep, or nil: a line,
// open or closed (a roundabout).
func streetGeometry(g orb.Geometry) orb.Geometry {
	switch g.(type) {
	case orb.LineString, orb.MultiLineString:
		if len(checkGeometry(g)) == 0 {
			return g
		}
	}
	return nil
}

// osmGeometry returns the geometry to keep, or nil.
func osmGeometry(g orb.Geometry) orb.Geometry {
	switch g := g.(type) {
	case orb.Point, orb.Polygon, orb.MultiPolygon:
		if len(checkGeometry(g)) == 0 {
			return g
		}
	case orb.LineString:
		if len(g) >= 4 && g[0] == g[len(g)-1] && len(checkGeometry(g)) == 0 {
			return orb.Polygon{orb.Ring(g)}
		}
	}
	return nil
}

// Write writes fc as GeoJSON to w with one feature per line, each as
// {"type":"Feature","id":…,"properties":{…},"geometry":{…}} with the
// properties id and kind first and the others sorted, so that files diff
// well. Foreign members of the
// collection and of the features are not written.
func Write(w io.Writer, fc *geojson.FeatureCollection) error {
	bw := bufio.NewWriter(w)
	bw.WriteString("{\n\"type\": \"FeatureCollection\",\n")
	if fc.BBox != nil {
		b, err := json.Marshal(fc.BBox)
		if err != nil {
			return fmt.Errorf("geofences: write: %w", err)
		}
		fmt.Fprintf(bw, "\"bbox\": %s,\n", b)
	}
	bw.WriteString("\"features\": [\n")
	for i, f := range fc.Features {
		if err := writeFeature(bw, f); err != nil {
			return fmt.Errorf("geofences: write feature %d: %w", i, err)
		}
		if i < len(fc.Features)-1 {
			bw.WriteByte(',')
		}
		bw.WriteByte('\n')
	}
	bw.WriteString("]\n}\n")
	return bw.Flush()
}

func writeFeature(w *bufio.Writer, f *geojson.Feature) error {
	w.WriteString(`{"type":"Feature"`)
	if f.ID != nil {
		b, err := json.Marshal(f.ID)
		if err != nil {
			return err
		}
		w.WriteString(`,"id":`)
		w.Write(b)
	}
	if f.BBox != nil {
		b, err := json.Marshal(f.BBox)
		if err != nil {
			return err
		}
		w.WriteString(`,"bbox":`)
		w.Write(b)
	}
	w.WriteString(`,"properties":{`)
	keys := slices.Sorted(maps.Keys(f.Properties))
	// id and kind first, for the reader.
	slices.SortStableFunc(keys, func(a, b string) int { return propertyRank(a) - propertyRank(b) })
	for i, k := range keys {
		if i > 0 {
			w.WriteByte(',')
		}
		kb, err := json.Marshal(k)
		if err != nil {
			return err
		}
		vb, err := json.Marshal(f.Properties[k])
		if err != nil {
			return fmt.Errorf("property %q: %w", k, err)
		}
		w.Write(kb)
		w.WriteByte(':')
		w.Write(vb)
	}
	w.WriteByte('}')
	w.WriteString(`,"geometry":`)
	if f.Geometry == nil {
		w.WriteString("null")
	} else {
		b, err := json.Marshal(geojson.NewGeometry(f.Geometry))
		if err != nil {
			return err
		}
		w.Write(b)
	}
	w.WriteByte('}')
	return nil
}

func propertyRank(key string) int {
	switch key {
	case "id":
		return 0
	case "kind":
		return 1
	}
	return 2
}
