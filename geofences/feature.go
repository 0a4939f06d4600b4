package geofences

import (
	"time"

	"github.com/paulmach/orb"
	"github.com/paulmach/orb/geojson"
)

// A Kind is the kind of a geofence feature, its kind property.
type Kind string

// The kinds of feature.
const (
	// KindSensitive is a site near which sound is restricted during its
	// opening hours (Art. 28): Point, Polygon or MultiPolygon.
	KindSensitive Kind = "sensitive"
	// KindNBRZone is an area of one NBR 10151 area type: Polygon or
	// MultiPolygon.
	KindNBRZone Kind = "nbr_zone"
	// KindItinerary is an authorised route of a licensee: LineString or
	// MultiLineString.
	KindItinerary Kind = "itinerary"
	// KindBoardingPoint is a place where passengers board and alight:
	// Point.
	KindBoardingPoint Kind = "boarding_point"
	// KindGarage is the garage of a licensee: Polygon or MultiPolygon.
	KindGarage Kind = "garage"
	// KindPublicRoad is a public road (via pública): a polygon of the carriageway and its
	// kerbside parking. Parked there outside authorised hours is Art. 13's infraction; parked
	// elsewhere outside the garage is at most an alert.
	KindPublicRoad Kind = "public_road"
	// KindStreet is a named street of the municipality's OpenStreetMap extract (a highway way
	// with a name): LineString or MultiLineString. It judges nothing; it names the place of an
	// auto (Set.ReverseGeocode).
	KindStreet Kind = "street"
	// KindLandmark is a named point of interest of the extract (an amenity, a square, a
	// beach, …): Point, Polygon or MultiPolygon. It judges nothing; it names the place of an
	// auto.
	KindLandmark Kind = "landmark"
)

// A Category is the category of a sensitive site, its category property.
type Category string

// The categories of sensitive sites named by Art. 28.
const (
	CategoryHospital     Category = "hospital"      // hospitals
	CategoryHealth       Category = "health"        // health units, clinics
	CategorySchool       Category = "school"        // schools and educational institutions
	CategoryLibrary      Category = "library"       // libraries
	CategoryPublicOffice Category = "public_office" // public offices
	CategoryChurch       Category = "church"        // churches and other places of worship
)

// Categories lists the known categories in a fixed order.
func Categories() []Category {
	return []Category{CategoryHospital, CategoryHealth, CategorySchool,
		CategoryLibrary, CategoryPublicOffice, CategoryChurch}
}

// Defaults of the optional numeric properties, in metres.
const (
	DefaultCorridorM = 50 // corridor_m of an itinerary
	DefaultRadiusM   = 30 // radius_m of a boarding point
)

// A Feature is one validated geofence: a GeoJSON feature with its
// properties decoded. Which fields are set depends on the Kind; the others
// are zero. A Feature belongs to a Set and must not be modified.
type Feature struct {
	ID       string       // properties.id, unique in the set
	Kind     Kind         // properties.kind
	Geometry orb.Geometry // longitude, latitude in degrees (WGS 84)

	// Properties holds every property as written in the file, including
	// the ones decoded below and any the package does not know.
	Properties geojson.Properties

	File  string // the file (or name given to Read) the feature came from
	Index int    // the feature's position in that file's features array

	Name   string // name; required for sensitive sites
	Source string // source, such as "osm", "survey" or "sample"

	// Sensitive sites.
	Category     Category
	OpeningHours *OpeningHours // nil when unknown: always open
	VerifiedBy   string        // who verified the site; "" if unverified
	VerifiedAt   time.Time     // when; zero if unverified

	// NBR zones.
	Area string // area type id, to be checked against the legal profile

	// Itineraries and garages.
	Licensee string

	// Itineraries.
	CorridorM float64       // half-width of the authorised corridor
	Schedule  *OpeningHours // from days and hours; nil: every day, all day
	ValidFrom time.Time     // first valid day (a date at 00:00 UTC); zero: no limit
	ValidTo   time.Time     // last valid day, inclusive; zero: no limit

	// Boarding points.
	RadiusM float64

	bound  orb.Bound
	areaM2 float64 // planar area of polygons, to rank overlapping zones
}

// Bound returns the bounding box of the feature's geometry.
func (f *Feature) Bound() orb.Bound { return f.bound }

// Verified reports whether someone is recorded as having verified the site
// (verified_by and verified_at are both set). A draft that relies on an
// unverified site must say so.
func (f *Feature) Verified() bool {
	return f.VerifiedBy != "" && !f.VerifiedAt.IsZero()
}

// Distance returns the distance in metres from p to the feature: to its
// nearest edge or vertex, 0 inside a polygon. See the package function
// Distance for its accuracy.
func (f *Feature) Distance(p orb.Point) float64 {
	return Distance(p, f.Geometry)
}

// ValidOn reports whether t's calendar day, in t's location, lies within
// the feature's valid_from and valid_to dates (both inclusive). Features
// without these dates are always valid.
func (f *Feature) ValidOn(t time.Time) bool {
	day := civilDay(t)
	if !f.ValidFrom.IsZero() && day < civilDay(f.ValidFrom) {
		return false
	}
	if !f.ValidTo.IsZero() && day > civilDay(f.ValidTo) {
		return false
	}
	return true
}

// ActiveAt reports whether an itinerary authorises service at t, local
// time: t's day lies within its validity and its days and hours are open
// at t. isHoliday tells whether t's day is a public holiday (see
// OpeningHours.Open). For the other kinds it reports whether the feature
// is valid on t's day.
func (f *Feature) ActiveAt(t time.Time, isHoliday bool) bool {
	return f.ValidOn(t) && f.Schedule.Open(t, isHoliday)
}

// civilDay returns a number that orders calendar days.
func civilDay(t time.Time) int {
	y, m, d := t.Date()
	return y*512 + int(m)*32 + d
}

// A Hit is a feature found near a point.
type Hit struct {
	Feature   *Feature
	DistanceM float64 // metres from the point to the feature's nearest edge; 0 inside
}
