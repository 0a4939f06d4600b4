package complaints

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

// Fix is one GPS reading of a vehicle.
type Fix struct {
	T        time.Time
	Lat, Lon float64
	SpeedKmh *float64
}

// SoundReading is one sound meter reading (L_Aeq over DurS seconds, at the meter).
type SoundReading struct {
	T    time.Time
	DB   float64
	DurS float64
}

// Track is what the telemetry holds of one vehicle in a window, in time order.
type Track struct {
	Vehicle string
	Fixes   []Fix
	Sounds  []SoundReading
}

// Telemetry reads the stored telemetry of every vehicle in [from, to].
type Telemetry interface {
	Tracks(ctx context.Context, from, to time.Time) ([]Track, error)
}

// Matcher matches complaints against the telemetry.
type Matcher struct {
	Telemetry Telemetry
	Profile   *profile.Profile
	Places    *geofences.Set // NBR 10151 zones; nil: the profile's default area
	// MeterDistance is a vehicle's r₁, the meter's distance to its loudspeaker (registry); 0 or
	// nil: the profile's noise.r1_m.
	MeterDistance func(vehicle string) float64
}

// Match is one vehicle that came within the radius of the place in the window.
type Match struct {
	Vehicle string `json:"vehicle"`
	// At is the time of the closest approach, DistanceM its distance to the place.
	At        time.Time `json:"at"`
	DistanceM float64   `json:"distance_m"`
	// Lat and Lon are where the vehicle was then: kept out of every answer (a position tells
	// who drove where); the distance says what the complainant needs.
	Lat      float64  `json:"-"`
	Lon      float64  `json:"-"`
	SpeedKmh *float64 `json:"speed_kmh,omitempty"`
	// MeterDB is the L_Aeq at the meter over noise.window_s centred on the closest approach;
	// LevelDB the level it gives at the place by rules.ReceptorLevel — an estimate, never a
	// measurement (Estimate is always true). Both null without sound readings then.
	MeterDB  *float64 `json:"meter_db,omitempty"`
	LevelDB  *float64 `json:"level_db,omitempty"`
	Estimate bool     `json:"estimate"`
	// LimitDB is the area's limit at At (day or night: a window may straddle night_start);
	// Above: LevelDB is above it plus the meter tolerance (noise.meter_tolerance_db).
	LimitDB *float64 `json:"limit_db,omitempty"`
	Above   bool     `json:"above"`
}

// Result is the matching of one complaint.
type Result struct {
	From    time.Time `json:"from"`
	To      time.Time `json:"to"`
	RadiusM float64   `json:"radius_m"`
	// Area is the NBR 10151 area type at the place ("" when unknown) and LimitDB its limit at
	// the complaint's time (day or night); each match has the limit at its own time.
	Area    string   `json:"area,omitempty"`
	LimitDB *float64 `json:"limit_db,omitempty"`
	Matches []Match  `json:"matches"`
}

// Match finds the vehicles that came within the profile's complaints.radius_m of (lat, lon)
// within complaints.window_min of at, nearest first.
func (m *Matcher) Match(ctx context.Context, lat, lon float64, at time.Time) (*Result, error) {
	p := m.Profile
	radius, window := p.Complaints.Radius(), p.Complaints.Window()
	res := &Result{From: at.Add(-window), To: at.Add(window), RadiusM: radius, Matches: []Match{}}
	place := orb.Point{lon, lat}
	area := p.Noise.DefaultArea
	if m.Places != nil {
		if z, ok := m.Places.ZoneAt(place); ok {
			if _, known := p.Noise.Areas[z.Area]; known {
				area = z.Area
			}
		}
	}
	if area != "" {
		limit := rules.AreaLimit(p, area, at)
		res.Area, res.LimitDB = area, &limit
	}
	tracks, err := m.Telemetry.Tracks(ctx, res.From, res.To)
	if err != nil {
		return nil, fmt.Errorf("complaints: telemetry: %w", err)
	}
	for _, tr := range tracks {
		best := -1
		bestD := math.Inf(1)
		for i, f := range tr.Fixes {
			if d := geofences.Distance(place, orb.Point{f.Lon, f.Lat}); d < bestD {
				best, bestD = i, d
			}
		}
		if best < 0 || bestD > radius {
			continue
		}
		f := tr.Fixes[best]
		mt := Match{Vehicle: tr.Vehicle, At: f.T, DistanceM: bestD, Lat: f.Lat, Lon: f.Lon, SpeedKmh: f.SpeedKmh, Estimate: true}
		if area != "" {
			limit := rules.AreaLimit(p, area, f.T)
			mt.LimitDB = &limit
		}
		if l1, ok := energyAverage(tr.Sounds, f.T, p.Noise.WindowS); ok {
			r1 := p.Noise.R1M
			if m.MeterDistance != nil {
				if v := m.MeterDistance(tr.Vehicle); v > 0 {
					r1 = v
				}
			}
			// Nearer to the loudspeaker than the meter, the model says nothing better than the
			// meter's own level: the estimate is never above what was measured.
			l2 := rules.ReceptorLevel(l1, r1, max(bestD, r1))
			mt.MeterDB, mt.LevelDB = &l1, &l2
			mt.Above = mt.LimitDB != nil && l2 > *mt.LimitDB+p.Noise.ToleranceDB
		}
		res.Matches = append(res.Matches, mt)
	}
	slices.SortFunc(res.Matches, func(a, b Match) int {
		if c := cmpFloat(a.DistanceM, b.DistanceM); c != 0 {
			return c
		}
		return a.At.Compare(b.At)
	})
	return res, nil
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// energyAverage is the energy average L = 10·log10(Σ tᵢ·10^(Lᵢ/10) / Σ tᵢ) of the readings in
// the window of windowS seconds centred on t (docs/rules.md: sound levels are never averaged
// arithmetically). False without readings in it.
func energyAverage(sounds []SoundReading, t time.Time, windowS float64) (float64, bool) {
	half := time.Duration(windowS / 2 * float64(time.Second))
	from, to := t.Add(-half), t.Add(half)
	top := math.Inf(-1)
	for _, s := range sounds {
		if !s.T.Before(from) && !s.T.After(to) {
			top = max(top, s.DB)
		}
	}
	if math.IsInf(top, -1) {
		return 0, false
	}
	var energy, dur float64
	for _, s := range sounds {
		if !s.T.Before(from) && !s.T.After(to) {
			d := s.DurS
			if !(d > 0) {
				d = 1
			}
			energy += d * math.Pow(10, (s.DB-top)/10)
			dur += d
		}
	}
	return top + 10*math.Log10(energy/dur), true
}
