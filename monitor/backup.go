package main

import (
	"context"
	"flag"
	"fmt"
	"os"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/store"
)

// cmdBackup copies the database online (VACUUM INTO): the monitor may keep running.
func cmdBackup(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("backup", flag.ContinueOnError)
	b := config.NewBinder(fs)
	var dbPath string
	b.String(&dbPath, "TRENZINHO_DB", "trenzinho-monitor.db", "SQLite database to back up")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: monitor backup [flags] DEST\n\nCopies the database online to DEST, which must not exist.")
		fs.PrintDefaults()
	}
	if err := b.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return usageErr("want one argument, DEST; got %d", fs.NArg())
	}
	db, err := store.Open(ctx, dbPath)
	if err != nil {
		return err
	}
	defer db.Close()
	if err := db.Backup(ctx, fs.Arg(0)); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "backup written to %s\n", fs.Arg(0))
	return nil
}

// cmdGeofences runs the geofence tools.
func cmdGeofences(args []string) error {
	fs := flag.NewFlagSet("geofences import-osm", flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: monitor geofences import-osm IN.geojson|IN.json OUT.geojson\n\n"+
			"Converts an OpenStreetMap GeoJSON export (overpass-turbo, osmtogeojson) or an Overpass\n"+
			"API JSON answer (out geom) of hospitals,\n"+
			"health units, schools, libraries, places of worship and public offices into sensitive\n"+
			"sites (source: osm, unverified), keeping OSM ids and opening_hours, and its named streets\n"+
			"(highway ways) and points of interest into street and landmark features, with which the\n"+
			"autos name their place offline. Put OUT in the geofences directory.")
	}
	if len(args) == 0 || args[0] != "import-osm" {
		fs.Usage()
		if len(args) > 0 && args[0] != "-h" && args[0] != "--help" && args[0] != "help" {
			return usageErr("unknown command %q (want import-osm)", args[0])
		}
		return errUsage
	}
	if err := fs.Parse(args[1:]); err != nil {
		return flagErr(err)
	}
	if fs.NArg() != 2 {
		fs.Usage()
		return usageErr("want two arguments, IN and OUT; got %d", fs.NArg())
	}
	in, err := os.Open(fs.Arg(0))
	if err != nil {
		return err
	}
	defer in.Close()
	fc, stats, err := geofences.ImportOSM(in)
	if err != nil {
		return err
	}
	out, err := os.Create(fs.Arg(1))
	if err != nil {
		return err
	}
	if err := geofences.Write(out, fc); err != nil {
		out.Close()
		return err
	}
	if err := out.Close(); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%+v\n", stats)
	return nil
}
