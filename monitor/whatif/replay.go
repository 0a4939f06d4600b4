// Package whatif replays the archived telemetry of a period through the rules engine twice —
// under the legal profile in force and under a proposed one, each with its own geofences and
// registry — in isolated stores, and compares what each would have produced: episodes, drafts of
// autos de infração and their fines. It answers the legislator's question "what would this
// change have done last summer?" with the monitor's own judgement, not an estimate.
//
// The archive is read from InfluxDB one vehicle and one window (a day by default) at a time; the
// batches are rebuilt from the batch measurement and the readings (docs/whatif.md, "Rebuilding
// the batches"), and judged as the live judge judges them: in the order they were sent, at the
// receive time ingest recorded, with the receive clock ticking every second through the silences.
// Nothing of the live system is read or written but the archive: the stores are files of their
// own.
package whatif

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// Side is one of the two judgements: a legal profile with the geofences and the registry it is
// applied with.
type Side struct {
	Label       string // "vigente" or "proposto"
	Path        string // the profile's file, for the report ("" for the built-in profile)
	Profile     *profile.Profile
	ProfileYAML []byte
	Places      *geofences.Set    // nil: none
	Registry    *registry.Store   // nil: every vehicle unregistered
	known       func(string) bool // nil: every vehicle
	lookup      func(string) (rules.Registration, bool)
}

// Config configures a replay.
type Config struct {
	Archive  *Influx
	From, To time.Time // the period, [From, To)
	InForce  Side
	Proposed Side
	// Dir holds the isolated stores (inforce.db, proposed.db); it must not exist or be empty.
	Dir string
	// Workers replay that many vehicles at a time (GOMAXPROCS by default).
	Workers int
	// Window is how much of one vehicle's archive is read at a time (24 h by default).
	Window time.Duration
	// Vehicles limits the replay to these vehicles (empty: every vehicle with batches in the
	// period).
	Vehicles []string
	// Licensee, when set, keeps in the result only that licensee's episodes and drafts (the
	// vehicle's licensee on the episode's day, by each side's registry): a licensee's replay of
	// their own vehicles (Vehicles) that never shows another's, even of a vehicle transferred
	// within the period.
	Licensee string
	// Progress, when set, is called after each window with the progress so far.
	Progress func(Progress)
	Logger   *slog.Logger
}

// Progress is how far a replay has got.
type Progress struct {
	Done, Total int // windows (vehicle × window) replayed, to replay
	Readings    int64
	Elapsed     time.Duration
	// ETA is the expected end, from the rate so far (zero until a window is done).
	ETA time.Time
}

// Stats measure a replay.
type Stats struct {
	Wall     time.Duration
	Readings int64 // readings judged (per profile: both judged the same readings)
	Batches  int64
	// ArchiveTime, EngineTime and StoreTime are the time spent (summed over the workers)
	// reading the archive, judging (both engines, Tick included) and committing to the
	// isolated stores; DraftTime is the drafters' run at the end.
	ArchiveTime, EngineTime, StoreTime, DraftTime time.Duration
	// PeakRSS is the process's peak resident memory (VmHWM), 0 when unknown.
	PeakRSS int64
	Workers int
}

// ArchiveRate and EngineRate are readings per second of one worker reading the archive and of
// one worker judging (both profiles).
func (s Stats) ArchiveRate() float64 { return rate(s.Readings, s.ArchiveTime) }

// EngineRate is readings per second of the engines' time.
func (s Stats) EngineRate() float64 { return rate(s.Readings, s.EngineTime) }

func rate(n int64, d time.Duration) float64 {
	if d <= 0 {
		return 0
	}
	return float64(n) / d.Seconds()
}

// sideState is a side during the replay.
type sideState struct {
	*Side
	db *store.DB
}

// Run replays the period and returns the comparison.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	start := time.Now()
	if cfg.Archive == nil {
		return nil, errors.New("whatif: no archive")
	}
	if !cfg.From.Before(cfg.To) {
		return nil, fmt.Errorf("whatif: empty period %s–%s", cfg.From, cfg.To)
	}
	if cfg.InForce.Profile == nil || cfg.Proposed.Profile == nil {
		return nil, errors.New("whatif: both profiles are needed")
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	if cfg.Window <= 0 {
		cfg.Window = 24 * time.Hour
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if err := emptyDir(cfg.Dir); err != nil {
		return nil, err
	}
	sides := [2]*sideState{{Side: &cfg.InForce}, {Side: &cfg.Proposed}}
	for k, s := range sides {
		if s.Registry != nil {
			reg := s.Registry
			s.known = func(id string) bool { _, ok := reg.Vehicle(id); return ok }
			s.lookup = rules.FromRegistry(reg)
		}
		db, err := store.Open(ctx, filepath.Join(cfg.Dir, [2]string{"inforce.db", "proposed.db"}[k]))
		if err != nil {
			return nil, fmt.Errorf("whatif: isolated store: %w", err)
		}
		defer db.Close()
		s.db = db
	}
	vehicles := cfg.Vehicles
	if len(vehicles) == 0 {
		var err error
		if vehicles, err = cfg.Archive.Vehicles(ctx, cfg.From, cfg.To); err != nil {
			return nil, err
		}
	}
	for _, v := range vehicles {
		if !wire.ValidVehicle(v) {
			return nil, fmt.Errorf("whatif: %q is not a vehicle id", v)
		}
	}
	var windows []time.Time
	for t := cfg.From; t.Before(cfg.To); t = t.Add(cfg.Window) {
		windows = append(windows, t)
	}
	res := &Result{From: cfg.From, To: cfg.To, InForce: newRun(&cfg.InForce), Proposed: newRun(&cfg.Proposed)}
	var (
		mu       sync.Mutex
		stats    Stats
		done     int
		readings atomic.Int64
		firstErr error
	)
	total := len(vehicles) * len(windows)
	jobs := make(chan string)
	var wg sync.WaitGroup
	for range cfg.Workers {
		wg.Go(func() {
			for v := range jobs {
				cov, st, err := replayVehicle(ctx, &cfg, sides, v, windows, func(n int) {
					readings.Add(int64(n))
					mu.Lock() // one progress line at a time, in order
					defer mu.Unlock()
					done++
					p := Progress{Done: done, Total: total, Readings: readings.Load(), Elapsed: time.Since(start)}
					p.ETA = start.Add(time.Duration(float64(p.Elapsed) * float64(p.Total) / float64(p.Done)))
					if cfg.Progress != nil {
						cfg.Progress(p)
					}
				})
				mu.Lock()
				if err != nil && firstErr == nil {
					firstErr = err
				}
				res.Coverage.Vehicles = append(res.Coverage.Vehicles, cov)
				stats.Readings += st.Readings
				stats.Batches += st.Batches
				stats.ArchiveTime += st.ArchiveTime
				stats.EngineTime += st.EngineTime
				stats.StoreTime += st.StoreTime
				mu.Unlock()
			}
		})
	}
	for _, v := range vehicles {
		if ctx.Err() != nil {
			break
		}
		mu.Lock()
		failed := firstErr != nil
		mu.Unlock()
		if failed {
			break
		}
		jobs <- v
	}
	close(jobs)
	wg.Wait()
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	t0 := time.Now()
	for k, s := range sides {
		run := []*Judgement{res.InForce, res.Proposed}[k]
		if err := collect(ctx, s, cfg.To, cfg.Licensee, run); err != nil {
			return nil, err
		}
	}
	if err := res.compare(); err != nil {
		return nil, fmt.Errorf("whatif: compare: %w", err)
	}
	res.InForce.readingsFor, res.Proposed.readingsFor = nil, nil // the stores close on return
	stats.DraftTime = time.Since(t0)
	res.Coverage.finish(cfg.InForce.Profile, cfg.From, cfg.To)
	stats.Workers = cfg.Workers
	stats.Wall = time.Since(start)
	stats.PeakRSS = peakRSS()
	res.Stats = stats
	return res, nil
}

// emptyDir makes dir, or checks that it holds nothing: the stores of a replay are never
// another's (and never the live database).
func emptyDir(dir string) error {
	if dir == "" {
		return errors.New("whatif: no directory for the isolated stores")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return fmt.Errorf("whatif: %w", err)
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("whatif: %w", err)
	}
	if len(ents) > 0 {
		return fmt.Errorf("whatif: %s is not empty: the isolated stores need a directory of their own", dir)
	}
	return nil
}

// engineOf is one side's engine for one vehicle, with its receive clock.
type engineOf struct {
	s        *sideState
	e        *rules.Engine
	lastSeen time.Time // the newest receive time applied
	pending  int       // batches applied since the last commit
}

// commitEvery is how many batches of a vehicle are judged between two commits to the
// isolated store.
const commitEvery = 2000

func (x *engineOf) commit(ctx context.Context) error {
	c, err := x.e.Drain()
	if err != nil {
		return err
	}
	x.pending = 0
	if c.Empty() {
		return nil
	}
	return x.s.db.Commit(ctx, &c, nil)
}

// tickUntil runs the receive clock from the last receipt to now, a second at a time as the
// live judge ticks, once the vehicle has been silent for the gap timeout. While nothing can
// change in the silence (the vehicle was moving or stands in its garage when it fell silent,
// and no episode is waiting to clear) the seconds after the first few minutes are skipped:
// they would tick the same state.
func (x *engineOf) tickUntil(v string, now time.Time) {
	if x.lastSeen.IsZero() {
		return
	}
	gap := time.Duration(x.s.Profile.GapTimeoutS * float64(time.Second))
	t := x.lastSeen.Add(gap)
	if t.After(now) {
		return
	}
	busyUntil := t.Add(3 * time.Minute)
	for ; !t.After(now); t = t.Add(time.Second) {
		x.e.Tick(t)
		if t.After(busyUntil) && x.quiet(v) {
			x.e.Tick(now)
			return
		}
	}
}

// quiet reports whether the silent vehicle's state can no longer change by the clock alone:
// parked_public_road, the only rule that judges silent vehicles, needs a vehicle stopped out
// of its garage.
func (x *engineOf) quiet(id string) bool {
	v := x.e.VehicleByID(id)
	if v == nil || v.StoppedSince.IsZero() || v.Fix == nil || v.Licensee == "" || x.s.Places == nil {
		return true
	}
	if len(x.s.Places.Garages(v.Licensee)) == 0 {
		return true
	}
	return x.s.Places.InGarage(orb.Point{v.Fix.Lon, v.Fix.Lat}, v.Licensee) && len(v.OpenEpisodeIDs()) == 0
}

// replayVehicle replays one vehicle through both sides.
func replayVehicle(ctx context.Context, cfg *Config, sides [2]*sideState, vehicle string, windows []time.Time, tick func(readings int)) (VehicleCoverage, Stats, error) {
	var st Stats
	cov := VehicleCoverage{Vehicle: vehicle}
	var engines []*engineOf
	for _, s := range sides {
		if s.known != nil && !s.known(vehicle) {
			continue // the live judge refuses a vehicle the registry does not know
		}
		e := rules.New(s.Profile, s.Places)
		if s.lookup != nil {
			e.SetRegistry(s.lookup)
		}
		engines = append(engines, &engineOf{s: s, e: e})
	}
	if len(engines) == 0 {
		cov.Unknown = true
	}
	var asm assembler
	after := cfg.From.Add(-time.Hour) // the first batches' readings start before the period
	var prevSent time.Time
	for _, w0 := range windows {
		w1 := w0.Add(cfg.Window)
		if w1.After(cfg.To) {
			w1 = cfg.To
		}
		t0 := time.Now()
		w, err := cfg.Archive.readWindow(ctx, vehicle, w0, w1, after)
		st.ArchiveTime += time.Since(t0)
		if err != nil {
			return cov, st, fmt.Errorf("whatif: %s %s: %w", vehicle, w0.Format(time.DateOnly), err)
		}
		bs := asm.batches(vehicle, w)
		n := 0
		t0 = time.Now()
		for _, b := range bs {
			cov.add(b, prevSent)
			prevSent = b.SentAt.Time
			after = later(after, b.SentAt.Time)
			for _, x := range engines {
				if x.s.Profile.SignaturesRequired && !b.signed {
					continue // refused by the live judge (unsigned)
				}
				x.tickUntil(vehicle, b.receivedAt)
				res := x.e.Apply(b.Batch, b.receivedAt)
				if b.receivedAt.After(x.lastSeen) {
					x.lastSeen = b.receivedAt
				}
				if !res.Duplicate {
					x.pending++
				}
			}
			n += b.Readings()
			st.Batches++
		}
		st.EngineTime += time.Since(t0)
		cov.Orphans += asm.orphans
		asm.orphans = 0
		st.Readings += int64(n)
		t0 = time.Now()
		for _, x := range engines {
			if x.pending >= commitEvery || w1.Equal(cfg.To) {
				if err := x.commit(ctx); err != nil {
					return cov, st, fmt.Errorf("whatif: %s: commit: %w", vehicle, err)
				}
			}
		}
		st.StoreTime += time.Since(t0)
		tick(n)
		if err := ctx.Err(); err != nil {
			return cov, st, err
		}
	}
	// The receive clock runs on past the last batch for as long as the gap timeout and a
	// parked vehicle's confirmation need, as the live judge's would.
	t0 := time.Now()
	for _, x := range engines {
		if !x.lastSeen.IsZero() {
			x.tickUntil(vehicle, x.lastSeen.Add(time.Duration(x.s.Profile.GapTimeoutS*float64(time.Second))+
				time.Duration(x.s.Profile.Parked.MinMinutes*float64(time.Minute))+5*time.Minute))
		}
	}
	st.EngineTime += time.Since(t0)
	t0 = time.Now()
	for _, x := range engines {
		if err := x.commit(ctx); err != nil {
			return cov, st, fmt.Errorf("whatif: %s: commit: %w", vehicle, err)
		}
	}
	st.StoreTime += time.Since(t0)
	return cov, st, nil
}

// collect drafts every ready group in the side's store, then reads its episodes and drafts
// (only the licensee's, when licensee is set).
func collect(ctx context.Context, s *sideState, to time.Time, licensee string, run *Judgement) error {
	run.readingsFor = func(id string) ([]rules.Evidence, error) {
		e, err := s.db.Episode(ctx, id)
		if err != nil {
			return nil, err
		}
		return e.Readings, nil
	}
	_, key, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		return err
	}
	d := drafts.NewDrafter(drafts.Config{Store: s.db, Profile: s.Profile, ProfileYAML: s.ProfileYAML, Places: s.Places,
		Key: key, Software: "trenzinho-monitor whatif", Logger: slog.New(slog.DiscardHandler), Registry: s.Registry})
	// Everything has settled long after the period: the drafter's waits (settle, the agent's
	// verification) are over. The store times an episode's last change by the wall clock of
	// its commit, so "long after" is after now too.
	now := later(to, time.Now()).Add(72 * time.Hour)
	for {
		made, err := d.Run(ctx, now)
		if err != nil {
			return fmt.Errorf("whatif: drafts (%s): %w", s.Label, err)
		}
		if len(made) == 0 {
			break
		}
		for _, m := range made {
			if licensee != "" && m.Draft.Licensee != licensee {
				continue
			}
			run.Drafts = append(run.Drafts, m.Draft)
		}
	}
	cursor := ""
	for {
		eps, next, err := s.db.Episodes(ctx, store.EpisodeFilter{}, 500, cursor)
		if err != nil {
			return fmt.Errorf("whatif: episodes (%s): %w", s.Label, err)
		}
		for _, e := range eps {
			full, err := s.db.Episode(ctx, e.ID)
			if err != nil {
				return fmt.Errorf("whatif: episode %s (%s): %w", e.ID, s.Label, err)
			}
			if licensee != "" && run.licenseeOf(full.Vehicle, full.Start.Time) != licensee {
				continue
			}
			run.add(full)
		}
		if next == "" {
			break
		}
		cursor = next
	}
	return nil
}
