package geofences

import (
	"embed"
	"io/fs"
)

// sampleFiles holds the sample set for Piúma.
//
//go:embed piuma/*.geojson
var sampleFiles embed.FS

// Sample returns the sample set for Piúma-ES shipped in the piuma
// directory of this package: sensitive sites, NBR zones, the itineraries,
// boarding points and garages of two fictitious licensees, L1 and L2.
// Positions are plausible but invented; every feature has source "sample"
// and a note saying so. It lets the demonstration run without files and
// must never back a real notice.
func Sample() (*Set, error) {
	return LoadFS(sampleFiles, "piuma")
}

// SampleFS returns the files of the sample set, in a directory named
// piuma, for writing them out as a starting point.
func SampleFS() fs.FS {
	return sampleFiles
}

// sampleStreets holds the sample street base map for Piúma.
//
//go:embed basemap/*.geojson
var sampleStreets embed.FS

// SampleStreets returns the sample street base map for Piúma-ES shipped in the basemap
// directory of this package: the streets (kind street) of the synthetic extract in testdata,
// every one with source "sample". It is a sample, not a survey — invented geometry, not
// OpenStreetMap data — and only goes with the sample set (Sample): the dashboard draws it under
// the sample geofences when no map tiles load. It never names the place of an auto (sample
// data names no place, Set.ReverseGeocode).
func SampleStreets() (*Set, error) {
	return LoadFS(sampleStreets, "basemap")
}

// SampleStreetsFS returns the file of the sample street base map, in a directory named
// basemap, for writing it out.
func SampleStreetsFS() fs.FS {
	return sampleStreets
}
