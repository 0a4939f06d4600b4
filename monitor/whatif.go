package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/config"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/whatif"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
)

// cmdWhatif replays a period of the archive under the profile in force and a proposed one
// (docs/whatif.md).
func cmdWhatif(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("whatif", flag.ContinueOnError)
	b := config.NewBinder(fs)
	var influx config.Influx
	b.BindInflux(&influx)
	env := func(name string) string { v, _ := os.LookupEnv(name); return v }
	var (
		from, to                            string
		propPath, propGeo, propReg          string
		inForcePath, inForceGeo, inForceReg string
		out                                 string
		workers                             int
		window                              time.Duration
		vehicles                            string
		quiet                               bool
	)
	fs.StringVar(&from, "from", "", "first day of the period, YYYY-MM-DD (the profile's time zone)")
	fs.StringVar(&to, "to", "", "last day of the period, YYYY-MM-DD, included")
	fs.StringVar(&propPath, "profile", "", "the proposed legal profile YAML (required)")
	fs.StringVar(&propGeo, "geofences", "", "geofences of the proposal, GeoJSON file or directory (empty: those in force)")
	fs.StringVar(&propReg, "registry", "", "registry of the proposal (empty: the one in force)")
	fs.StringVar(&inForcePath, "in-force-profile", env("TRENZINHO_PROFILE"), "the profile in force (env TRENZINHO_PROFILE; empty: the built-in Piúma profile)")
	fs.StringVar(&inForceGeo, "in-force-geofences", env("TRENZINHO_GEOFENCES"), "the geofences in force (env TRENZINHO_GEOFENCES; empty: the Piúma sample set)")
	fs.StringVar(&inForceReg, "in-force-registry", env("TRENZINHO_REGISTRY"), "the registry in force (env TRENZINHO_REGISTRY; empty: none)")
	fs.StringVar(&out, "out", "", "directory of the report (empty: whatif-FROM-TO); it must not exist or be empty")
	fs.IntVar(&workers, "workers", 0, "vehicles replayed at a time (0: one per CPU)")
	fs.DurationVar(&window, "window", 24*time.Hour, "how much of one vehicle's archive is read at a time")
	fs.StringVar(&vehicles, "vehicles", "", "comma-separated vehicles to replay (empty: every vehicle in the archive)")
	fs.BoolVar(&quiet, "quiet", false, "no progress line")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: monitor whatif --from DATE --to DATE --profile PROPOSED.yaml [flags]\n\n"+
			"Replays the telemetry archived in InfluxDB for the period under the profile in force and\n"+
			"under the proposed one, in isolated stores (the live database is never opened), and writes\n"+
			"the comparison as CSV files and a PDF report in pt-BR (docs/whatif.md).")
		fs.PrintDefaults()
	}
	if err := b.Parse(args); err != nil {
		return flagErr(err)
	}
	if fs.NArg() != 0 {
		fs.Usage()
		return usageErr("unexpected arguments %q", fs.Args())
	}
	if from == "" || to == "" || propPath == "" {
		fs.Usage()
		return usageErr("--from, --to and --profile are required")
	}
	inForce, err := loadSide("vigente", inForcePath, inForceGeo, inForceReg)
	if err != nil {
		return err
	}
	if propGeo == "" {
		propGeo = inForceGeo
	}
	if propReg == "" {
		propReg = inForceReg
	}
	proposed, err := loadSide("proposto", propPath, propGeo, propReg)
	if err != nil {
		return err
	}
	loc := inForce.Profile.Location()
	day := func(s, name string) (time.Time, error) {
		t, err := time.ParseInLocation(time.DateOnly, s, loc)
		if err != nil {
			return time.Time{}, usageErr("--%s: want YYYY-MM-DD, got %q", name, s)
		}
		return t, nil
	}
	f, err := day(from, "from")
	if err != nil {
		return err
	}
	l, err := day(to, "to")
	if err != nil {
		return err
	}
	end := l.AddDate(0, 0, 1)
	if !f.Before(end) {
		return usageErr("--to %s is before --from %s", to, from)
	}
	if out == "" {
		out = fmt.Sprintf("whatif-%s-%s", from, to)
	}
	src, err := whatif.NewInflux(whatif.InfluxConfig{URL: influx.URL, Token: influx.Token, Bucket: influx.Bucket})
	if err != nil {
		return err
	}
	cfg := whatif.Config{Archive: src, From: f, To: end, InForce: inForce, Proposed: proposed,
		Dir: filepath.Join(out, "stores"), Workers: workers, Window: window}
	if vehicles != "" {
		cfg.Vehicles = strings.Split(vehicles, ",")
	}
	if !quiet {
		cfg.Progress = func(p whatif.Progress) {
			pct := 100 * float64(p.Done) / float64(max(1, p.Total))
			fmt.Fprintf(stderr, "\rwhatif: %d/%d veículo-dias (%.0f%%), %d leituras, %.0f leituras/s, término previsto %s ",
				p.Done, p.Total, pct, p.Readings, float64(p.Readings)/max(p.Elapsed.Seconds(), 1e-3), p.ETA.In(loc).Format("15:04:05"))
		}
	}
	if err := os.MkdirAll(out, 0o750); err != nil {
		return err
	}
	if ents, err := os.ReadDir(out); err != nil {
		return err
	} else if len(ents) > 0 {
		return fmt.Errorf("whatif: %s is not empty", out)
	}
	res, err := whatif.Run(ctx, cfg)
	if !quiet {
		fmt.Fprintln(stderr)
	}
	if err != nil {
		return err
	}
	if err := res.WriteCSV(out); err != nil {
		return err
	}
	if err := res.WritePDF(filepath.Join(out, whatif.PDFFile)); err != nil {
		return err
	}
	tot := res.Total()
	st := res.Stats
	fmt.Fprintf(stdout, "período %s a %s; vigente %s (%s), proposto %s (%s)\n", from, to,
		res.InForce.ProfileID, res.InForce.Version, res.Proposed.ProfileID, res.Proposed.Version)
	fmt.Fprintf(stdout, "episódios: vigente %d, proposto %d (surgem %d, desaparecem %d, alterados %d, iguais %d)\n",
		tot.InForce.Episodes, tot.Proposed.Episodes, len(res.Appear), len(res.Vanish), res.Changed, res.Same)
	fmt.Fprintf(stdout, "autos: vigente %d (%s UFMP), proposto %d (%s UFMP)\n", tot.InForce.Autos, fmtUFMP(tot.InForce.UFMP),
		tot.Proposed.Autos, fmtUFMP(tot.Proposed.UFMP))
	fmt.Fprintf(stdout, "leituras %d em %s (%.0f/s); arquivo %.0f leituras/s, motor %.0f leituras/s por processo; pico de memória %d MiB\n",
		st.Readings, st.Wall.Round(time.Millisecond), float64(st.Readings)/st.Wall.Seconds(), st.ArchiveRate(), st.EngineRate(), st.PeakRSS>>20)
	fmt.Fprintf(stdout, "relatório em %s\n", out)
	return nil
}

func fmtUFMP(f float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", f), "0"), ".")
}

// loadSide loads a profile with its geofences and registry (read only: the replay never
// writes the registry).
func loadSide(label, profPath, geoPath, regPath string) (whatif.Side, error) {
	s := whatif.Side{Label: label, Path: profPath}
	var err error
	if profPath == "" {
		s.Profile, s.ProfileYAML = profile.Piuma(), profile.PiumaYAML()
	} else {
		if s.Profile, err = profile.Load(profPath); err != nil {
			return s, err
		}
		if s.ProfileYAML, err = os.ReadFile(profPath); err != nil {
			return s, err
		}
	}
	if geoPath == "" {
		s.Places, err = geofences.Sample()
	} else {
		s.Places, err = geofences.Load(geoPath)
	}
	if err != nil {
		return s, fmt.Errorf("geofences (%s): %w", label, err)
	}
	if regPath != "" {
		if s.Registry, err = registry.Open(regPath); err != nil {
			return s, fmt.Errorf("registry (%s): %w", label, err)
		}
		s.Registry.SetLocation(s.Profile.Location())
	}
	if s.Profile.SignaturesRequired && s.Registry == nil {
		return s, errors.New("the profile " + label + " requires signed batches but no registry is set")
	}
	return s, nil
}
