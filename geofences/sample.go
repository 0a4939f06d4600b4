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
