// Package geofences loads, validates and queries the geofences that the
// trenzinho monitor judges vehicles against: sensitive sites, NBR 10151
// noise zones, authorised itineraries, boarding points, garages and public roads.
//
// # Files
//
// Geofences are GeoJSON FeatureCollection files (RFC 7946: longitude and
// latitude in degrees, WGS 84); a directory of them is loaded as one Set.
// Every feature has a unique string properties.id and a properties.kind:
//
//	kind            geometry                   properties
//	sensitive       Point, Polygon,            category (hospital, health, school, library,
//	                MultiPolygon                 public_office, church), name, source (osm,
//	                                             survey, sample, …); optional opening_hours
//	                                             (missing: unknown — the monitor then grounds
//	                                             no auto on the site), verified_by and
//	                                             verified_at (together; missing: unverified)
//	nbr_zone        Polygon, MultiPolygon      area: an area type id of the legal profile
//	itinerary       LineString,                licensee; optional corridor_m (default 50),
//	                MultiLineString              days ("Fr-Su,PH"; default every day), hours
//	                                             ("18:00-23:00"; default all day), valid_from
//	                                             and valid_to (YYYY-MM-DD, inclusive)
//	boarding_point  Point                      optional radius_m (default 30)
//	garage          Polygon, MultiPolygon      licensee
//	public_road     Polygon, MultiPolygon      (none): a public road (via pública), its
//	                                             carriageway and kerbside parking
//	street          LineString,                name; a named street of the OpenStreetMap
//	                MultiLineString              extract (judges nothing: names places)
//	landmark        Point, Polygon,            name; a named point of interest of the
//	                MultiPolygon                 extract (judges nothing: names places)
//
// Other properties (name, note, …) are kept in Feature.Properties. A value
// that is not known is omitted, never written as "". Load, LoadFS, Read
// and NewSet report every problem they find, each naming the file, the
// feature's index and id, and what is wrong. The package does not know the
// legal profile: the caller checks the area ids (Set.Areas) against it.
//
// # Distances
//
// Distances are in metres on the WGS 84 ellipsoid, measured in a tangent
// plane centred on the query point (an equirectangular projection scaled by
// the ellipsoid's radii of curvature there). To a polygon they are measured
// to its nearest edge, and are 0 inside it. At a few hundred metres they
// agree with the geodesic distance to about a millimetre; the tests check
// them against Vincenty's formulae at random bearings. Geometries must not
// cross the antimeridian.
//
// # Lookups
//
// A Set keeps a uniform grid of the bounding boxes of each kind, about one
// cell per feature, so a lookup reads the few cells around the point and
// computes exact distances only for the features whose boxes are within
// reach. The result does not depend on the index: the tests compare every
// lookup with a scan of all features. Where NBR
// zones overlap, ZoneAt picks the one with the smallest area (the most
// specific), then the smallest id; ZonesAt lists them all. A Set is
// immutable and safe for concurrent use.
//
// # Opening hours
//
// ParseOpeningHours reads the subset of the OpenStreetMap opening_hours
// syntax described at OpeningHours; ParseSchedule reads the days and hours
// of an itinerary with the same machinery. Times are local: the caller
// passes time.Time values in the municipality's time zone and says which
// days are public holidays.
//
// # OpenStreetMap and sample data
//
// ImportOSM converts an OpenStreetMap GeoJSON export (or an Overpass API
// JSON answer) into sensitive
// features marked source "osm" and unverified, and into the named streets
// and landmarks with which ReverseGeocode names the place of an auto
// offline (the nearest street within a few tens of metres, the nearest
// landmark within a few hundred, each with its distance). Write writes a
// FeatureCollection one feature per line. Sample returns an invented but
// plausible set for Piúma-ES, every feature marked source "sample".
package geofences
