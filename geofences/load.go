package geofences

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
	"github.com/paulmach/orb/planar"
)

// A File is a named GeoJSON FeatureCollection, an input of NewSet. The
// name is used in error messages and in Feature.File.
type File struct {
	Name       string
	Collection *geojson.FeatureCollection
}

// A FeatureError describes a problem with one feature of a file.
type FeatureError struct {
	File  string // file name
	Index int    // position of the feature in the file's features array
	ID    string // properties.id, if it could be read
	Err   error
}

func (e *FeatureError) Error() string {
	var b strings.Builder
	b.WriteString("geofences: ")
	b.WriteString(e.File)
	b.WriteString(": feature ")
	b.WriteString(strconv.Itoa(e.Index))
	if e.ID != "" {
		b.WriteString(" (id ")
		b.WriteString(strconv.Quote(e.ID))
		b.WriteString(")")
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *FeatureError) Unwrap() error { return e.Err }

// isGeoJSONName reports whether a directory entry is loaded by Load and
// LoadFS: a visible file whose name ends in .geojson or .json.
func isGeoJSONName(name string) bool {
	if strings.HasPrefix(name, ".") {
		return false
	}
	ext := strings.ToLower(path.Ext(name))
	return ext == ".geojson" || ext == ".json"
}

// Load reads the GeoJSON FeatureCollection in the file at path, or every
// *.geojson and *.json file directly inside the directory at path (in name
// order; hidden files and subdirectories are skipped), and builds one Set
// of them, as NewSet does.
func Load(p string) (*Set, error) {
	st, err := os.Stat(p)
	if err != nil {
		return nil, fmt.Errorf("geofences: %w", err)
	}
	if !st.IsDir() {
		return loadFiles([]string{p}, os.ReadFile)
	}
	entries, err := os.ReadDir(p)
	if err != nil {
		return nil, fmt.Errorf("geofences: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && isGeoJSONName(e.Name()) {
			names = append(names, filepath.Join(p, e.Name()))
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("geofences: %s: no .geojson or .json files", p)
	}
	return loadFiles(names, os.ReadFile)
}

// LoadFS is like Load for the file or directory name in fsys.
func LoadFS(fsys fs.FS, name string) (*Set, error) {
	st, err := fs.Stat(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("geofences: %w", err)
	}
	read := func(name string) ([]byte, error) { return fs.ReadFile(fsys, name) }
	if !st.IsDir() {
		return loadFiles([]string{name}, read)
	}
	entries, err := fs.ReadDir(fsys, name)
	if err != nil {
		return nil, fmt.Errorf("geofences: %w", err)
	}
	var names []string
	for _, e := range entries {
		if !e.IsDir() && isGeoJSONName(e.Name()) {
			names = append(names, path.Join(name, e.Name()))
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("geofences: %s: no .geojson or .json files", name)
	}
	return loadFiles(names, read)
}

// Read reads one GeoJSON FeatureCollection from r and builds a Set of it;
// name stands for the file in error messages and in Feature.File.
func Read(r io.Reader, name string) (*Set, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("geofences: %s: %w", name, err)
	}
	fc, err := decodeCollection(name, data)
	if err != nil {
		return nil, err
	}
	return NewSet(File{Name: name, Collection: fc})
}

func loadFiles(names []string, read func(string) ([]byte, error)) (*Set, error) {
	var errs []error
	var files []File
	for _, name := range names {
		data, err := read(name)
		if err != nil {
			errs = append(errs, fmt.Errorf("geofences: %w", err))
			continue
		}
		fc, err := decodeCollection(name, data)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		files = append(files, File{Name: name, Collection: fc})
	}
	s, err := NewSet(files...)
	if err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return s, nil
}

func decodeCollection(name string, data []byte) (*geojson.FeatureCollection, error) {
	fc, err := geojson.UnmarshalFeatureCollection(data)
	if err != nil {
		return nil, fmt.Errorf("geofences: %s: not a GeoJSON FeatureCollection: %w", name, err)
	}
	return fc, nil
}

// NewSet validates the features of the files and builds a Set of them. It
// reports every problem it finds, joined with errors.Join, each as a
// *FeatureError naming the file, the feature and what is wrong: an id that
// is missing or not unique in the set, an unknown kind, a geometry type the
// kind does not allow, coordinates out of range, an open polygon ring,
// a missing or ill-typed property, a date or an opening_hours value that
// does not parse.
func NewSet(files ...File) (*Set, error) {
	var errs []error
	type where struct {
		file  string
		index int
	}
	seen := make(map[string]where)
	var features []*Feature
	for _, file := range files {
		if file.Collection == nil {
			errs = append(errs, fmt.Errorf("geofences: %s: no feature collection", file.Name))
			continue
		}
		for i, gf := range file.Collection.Features {
			f, ferrs := decodeFeature(gf)
			if f != nil && f.ID != "" {
				if w, dup := seen[f.ID]; dup {
					ferrs = append(ferrs, fmt.Errorf("duplicate id (first in %s, feature %d)", w.file, w.index))
				} else {
					seen[f.ID] = where{file.Name, i}
				}
			}
			id := ""
			if f != nil {
				id = f.ID
				f.File, f.Index = file.Name, i
			}
			for _, err := range ferrs {
				errs = append(errs, &FeatureError{File: file.Name, Index: i, ID: id, Err: err})
			}
			if len(ferrs) == 0 {
				features = append(features, f)
			}
		}
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return newSet(features), nil
}

// allowedGeometries returns the GeoJSON geometry types of a kind, or nil
// for an unknown kind.
func allowedGeometries(k Kind) []string {
	switch k {
	case KindSensitive, KindLandmark:
		return []string{"Point", "Polygon", "MultiPolygon"}
	case KindNBRZone, KindGarage, KindPublicRoad:
		return []string{"Polygon", "MultiPolygon"}
	case KindItinerary, KindStreet:
		return []string{"LineString", "MultiLineString"}
	case KindBoardingPoint:
		return []string{"Point"}
	}
	return nil
}

// decodeFeature validates gf and decodes its properties. It returns the
// feature (nil if gf is nil) and every problem found.
func decodeFeature(gf *geojson.Feature) (*Feature, []error) {
	if gf == nil {
		return nil, []error{errors.New("null feature")}
	}
	var errs []error
	addErr := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	props := propertyReader{p: gf.Properties, errs: &errs}
	f := &Feature{Properties: gf.Properties, Geometry: gf.Geometry}

	if _, ok := gf.Properties["id"]; !ok && gf.ID != nil {
		addErr(errors.New(`missing property "id" (the feature's own "id" member is not used)`))
	} else {
		f.ID, _ = props.str("id", true)
	}
	kind, ok := props.str("kind", true)
	f.Kind = Kind(kind)
	if ok && allowedGeometries(f.Kind) == nil {
		addErr(fmt.Errorf("unknown kind %q (want sensitive, nbr_zone, itinerary, boarding_point, garage, public_road, street or landmark)", kind))
	}

	// Geometry.
	if gf.Geometry == nil {
		addErr(errors.New("missing geometry"))
	} else {
		typ := gf.Geometry.GeoJSONType()
		if allowed := allowedGeometries(f.Kind); allowed != nil && !slices.Contains(allowed, typ) {
			addErr(fmt.Errorf("geometry %s not allowed for kind %s (want %s)", typ, f.Kind, strings.Join(allowed, ", ")))
		} else {
			errs = append(errs, checkGeometry(gf.Geometry)...)
		}
	}

	named := f.Kind == KindSensitive || f.Kind == KindStreet || f.Kind == KindLandmark
	f.Name, _ = props.str("name", named)
	f.Source, _ = props.str("source", f.Kind == KindSensitive)
	f.VerifiedBy, _ = props.str("verified_by", false)
	f.VerifiedAt = props.date("verified_at", true)
	if (gf.Properties["verified_by"] == nil) != (gf.Properties["verified_at"] == nil) {
		addErr(errors.New("verified_by and verified_at go together: set both or neither"))
	}

	switch f.Kind {
	case KindSensitive:
		cat, ok := props.str("category", true)
		f.Category = Category(cat)
		if ok && !slices.Contains(Categories(), f.Category) {
			addErr(fmt.Errorf("unknown category %q (want hospital, health, school, library, public_office or church)", cat))
		}
		if s, ok := props.str("opening_hours", false); ok {
			oh, err := ParseOpeningHours(s)
			if err != nil {
				addErr(fmt.Errorf("opening_hours: %w", err))
			}
			f.OpeningHours = oh
		}
	case KindNBRZone:
		f.Area, _ = props.str("area", true)
	case KindItinerary:
		f.Licensee, _ = props.str("licensee", true)
		f.CorridorM = props.positive("corridor_m", DefaultCorridorM)
		days, _ := props.str("days", false)
		hours, _ := props.str("hours", false)
		sched, err := ParseSchedule(days, hours)
		addErr(err)
		f.Schedule = sched
		f.ValidFrom = props.date("valid_from", false)
		f.ValidTo = props.date("valid_to", false)
		if !f.ValidFrom.IsZero() && !f.ValidTo.IsZero() && f.ValidTo.Before(f.ValidFrom) {
			addErr(fmt.Errorf("valid_to %s is before valid_from %s",
				f.ValidTo.Format(time.DateOnly), f.ValidFrom.Format(time.DateOnly)))
		}
	case KindBoardingPoint:
		f.RadiusM = props.positive("radius_m", DefaultRadiusM)
	case KindGarage:
		f.Licensee, _ = props.str("licensee", true)
	}

	if gf.Geometry != nil && len(errs) == 0 {
		f.bound = gf.Geometry.Bound()
		switch g := gf.Geometry.(type) {
		case orb.Polygon, orb.MultiPolygon:
			fr := newFrame(f.bound.Center())
			f.areaM2 = planar.Area(g) * fr.kx * fr.ky
		}
	}
	return f, errs
}

// propertyReader reads typed properties, recording problems in errs.
type propertyReader struct {
	p    geojson.Properties
	errs *[]error
}

func (r propertyReader) fail(format string, args ...any) {
	*r.errs = append(*r.errs, fmt.Errorf(format, args...))
}

// str returns the string property key; ok is false when it is absent or
// not a string. An empty string counts as a problem: unknown values are
// omitted, never written as "".
func (r propertyReader) str(key string, required bool) (s string, ok bool) {
	v, present := r.p[key]
	if !present || v == nil {
		if required {
			r.fail("missing property %q", key)
		}
		return "", false
	}
	s, isString := v.(string)
	switch {
	case !isString:
		r.fail("property %q must be a string, not %s", key, jsonType(v))
		return "", false
	case strings.TrimSpace(s) == "":
		r.fail("property %q is empty (omit it when unknown)", key)
		return "", false
	}
	return s, true
}

// positive returns the number property key, or def when it is absent.
func (r propertyReader) positive(key string, def float64) float64 {
	v, present := r.p[key]
	if !present || v == nil {
		return def
	}
	x, ok := v.(float64)
	switch {
	case !ok:
		r.fail("property %q must be a number, not %s", key, jsonType(v))
	case !(x > 0) || math.IsInf(x, 0):
		r.fail("property %q must be a positive number of metres, not %v", key, x)
	default:
		return x
	}
	return def
}

// date returns the date property key (YYYY-MM-DD, or an RFC 3339 time when
// withTime is set), or the zero time when it is absent or invalid.
func (r propertyReader) date(key string, withTime bool) time.Time {
	s, ok := r.str(key, false)
	if !ok {
		return time.Time{}
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t
	}
	if withTime {
		if t, err := time.Parse(time.RFC3339, s); err == nil {
			return t
		}
		r.fail("property %q: %q is not a date (YYYY-MM-DD) or an RFC 3339 time", key, s)
		return time.Time{}
	}
	r.fail("property %q: %q is not a date (YYYY-MM-DD)", key, s)
	return time.Time{}
}

func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	}
	return fmt.Sprintf("%T", v)
}

// checkGeometry checks coordinates, ring closure and vertex counts. It
// reports at most a few bad coordinates.
func checkGeometry(g orb.Geometry) []error {
	var errs []error
	point := func(where string, p orb.Point) {
		if len(errs) >= 5 {
			return // enough to fix the file
		}
		lon, lat := p[0], p[1]
		switch {
		case math.IsNaN(lon) || math.IsNaN(lat) || math.IsInf(lon, 0) || math.IsInf(lat, 0):
			errs = append(errs, fmt.Errorf("%s: coordinate is not a number", where))
		case lon < -180 || lon > 180:
			errs = append(errs, fmt.Errorf("%s: longitude %v out of range [-180, 180]", where, lon))
		case lat < -90 || lat > 90:
			errs = append(errs, fmt.Errorf("%s: latitude %v out of range [-90, 90] (coordinates are [longitude, latitude])", where, lat))
		}
	}
	line := func(where string, ls []orb.Point, minLen int) {
		if len(ls) < minLen {
			errs = append(errs, fmt.Errorf("%s: %d positions, want at least %d", where, len(ls), minLen))
		}
		for i, p := range ls {
			point(fmt.Sprintf("%s position %d", where, i), p)
		}
	}
	ring := func(where string, r orb.Ring) {
		line(where, r, 4)
		if len(r) > 0 && r[0] != r[len(r)-1] {
			errs = append(errs, fmt.Errorf("%s is not closed (first position %v, last %v)", where, r[0], r[len(r)-1]))
		}
	}
	polygon := func(where string, p orb.Polygon) {
		if len(p) == 0 {
			errs = append(errs, fmt.Errorf("%s has no rings", where))
		}
		for i, r := range p {
			ring(fmt.Sprintf("%sring %d", where, i), r)
		}
	}
	switch g := g.(type) {
	case orb.Point:
		point("point", g)
	case orb.LineString:
		line("line", g, 2)
	case orb.MultiLineString:
		if len(g) == 0 {
			errs = append(errs, errors.New("empty MultiLineString"))
		}
		for i, ls := range g {
			line(fmt.Sprintf("line %d", i), ls, 2)
		}
	case orb.Polygon:
		polygon("", g)
	case orb.MultiPolygon:
		if len(g) == 0 {
			errs = append(errs, errors.New("empty MultiPolygon"))
		}
		for i, p := range g {
			polygon(fmt.Sprintf("polygon %d ", i), p)
		}
	}
	for i, err := range errs {
		errs[i] = fmt.Errorf("geometry: %w", err)
	}
	return errs
}
