// Package fleetweek generates the telemetry of a fleet over a period, as its bridges publish it,
// with the speeding episodes each legal speed limit must find in it: the test data of the
// what-if replay (docs/whatif.md). A week is a few minutes of driving per vehicle per day,
// small enough to publish through the real ingest in seconds; a season is whole service days at
// the readings' real rates, for the benchmark, written straight to InfluxDB as ingest writes it.
package fleetweek

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/trenzinho/trenzinho/wire"
)

// Batch is one batch of a vehicle as its bridge publishes it.
type Batch struct {
	*wire.Batch
	Payload []byte
}

// Expected is a speeding episode the generator put in the data: the vehicle, and the device time
// of the first second above the limit plus the tolerance (the episode's start and id).
type Expected struct {
	Vehicle string
	Start   time.Time
	Kmh     float64
}

// Week is a generated period.
type Week struct {
	Batches []Batch // by vehicle, then seq
	// Hard are the bursts above 37 km/h (30 km/h + 7 of tolerance): episodes under Piúma's
	// profile and under a 25 km/h one alike. Moderate are the bursts between 32 and 37 km/h:
	// episodes only under a limit of 25 km/h (25 + 7 = 32).
	Hard, Moderate []Expected
	Readings       int
}

// Config shapes a week.
type Config struct {
	Vehicles int       // PIU-001 … (5 by default)
	Days     int       // 7 by default
	First    time.Time // the first day (its date in Loc; the day before yesterday's week by default)
	Loc      *time.Location
	// TripStart is the local time of day each trip starts (10:00 by default); vehicle k starts
	// k × 7 minutes later.
	TripStart time.Duration
	// SoundDB is the level the sound meter reports once a second, in dB(A) (0: no meter).
	SoundDB float64
}

// Street is where the trips drive: a straight road west of Piúma, away from every site of the
// sample geofences, east from (Lat, Lon).
const (
	Lat = -20.8050
	Lon = -40.8200
)

// MetresPerDegreeEast is the length of a degree of longitude at about 20.8° S.
const MetresPerDegreeEast = 111320 * 0.9346

// Generate makes the week: each vehicle drives once a day, a minute at 20 km/h, then 20 s at 34
// km/h (a moderate burst) on every day, 2 minutes at 20 km/h, and on every other day (by
// vehicle and day) 20 s at 45 km/h (a hard burst) followed by 3 minutes at 20 km/h, so every
// episode closes and its two minutes of evidence after it are in the data. GPS and tachograph
// report once a second and agree; batches are of 5 seconds.
func Generate(cfg Config) (*Week, error) {
	if cfg.Vehicles <= 0 {
		cfg.Vehicles = 5
	}
	if cfg.Days <= 0 {
		cfg.Days = 7
	}
	if cfg.Loc == nil {
		cfg.Loc = time.UTC
	}
	if cfg.TripStart == 0 {
		cfg.TripStart = 10 * time.Hour
	}
	if cfg.First.IsZero() {
		now := time.Now().In(cfg.Loc)
		cfg.First = time.Date(now.Year(), now.Month(), now.Day()-cfg.Days-1, 0, 0, 0, 0, cfg.Loc)
	}
	f := cfg.First.In(cfg.Loc)
	w := &Week{}
	for v := range cfg.Vehicles {
		id := fmt.Sprintf("PIU-%03d", v+1)
		var seq uint64
		for d := range cfg.Days {
			start := time.Date(f.Year(), f.Month(), f.Day()+d, 0, 0, 0, 0, cfg.Loc).Add(cfg.TripStart + time.Duration(v)*7*time.Minute)
			speeds := slices.Concat(repeat(20, 60), repeat(34, 20), repeat(20, 120))
			w.Moderate = append(w.Moderate, Expected{Vehicle: id, Start: start.Add(60 * time.Second), Kmh: 34})
			if (v+d)%2 == 0 {
				w.Hard = append(w.Hard, Expected{Vehicle: id, Start: start.Add(time.Duration(len(speeds)) * time.Second), Kmh: 45})
				speeds = slices.Concat(speeds, repeat(45, 20), repeat(20, 180))
			}
			var level func(time.Time) float64
			if cfg.SoundDB > 0 {
				level = func(time.Time) float64 { return cfg.SoundDB }
			}
			bs, err := trip(id, fmt.Sprintf("e-%s", id), &seq, start, speeds, level)
			if err != nil {
				return nil, err
			}
			for _, b := range bs {
				w.Readings += b.Readings()
			}
			w.Batches = append(w.Batches, bs...)
		}
	}
	return w, nil
}

func repeat(v float64, n int) []float64 { return slices.Repeat([]float64{v}, n) }

// trip cuts a drive into batches of 5 seconds from start, numbered on from *seq; with a sound
// level (not nil), the meter reports it once a second too.
func trip(vehicle, epoch string, seq *uint64, start time.Time, speeds []float64, level func(time.Time) float64) ([]Batch, error) {
	var out []Batch
	lon := Lon
	east := 1.0
	at := start
	for i := 0; i < len(speeds); i += 5 {
		*seq++
		b := &wire.Batch{V: wire.Version, Vehicle: vehicle, Epoch: epoch, Seq: *seq, Clock: wire.ClockGPS}
		if i == 0 {
			// The service switch is turned on as the trip begins: service is then observed
			// (rules: service inferred from movement alone grounds no auto).
			b.Service = []wire.Service{{T: wire.NewTime(at), On: true}}
		}
		for _, kmh := range speeds[i:min(i+5, len(speeds))] {
			// Back and forth along 4 km of road.
			lon += east * kmh / 3.6 / MetresPerDegreeEast
			if math.Abs(lon-Lon) > 4000/MetresPerDegreeEast {
				east = -east
			}
			wt := wire.NewTime(at)
			k, hdop, course := kmh, 0.8, 90.0
			if east < 0 {
				course = 270
			}
			b.Tacho = append(b.Tacho, wire.Tacho{T: wt, SpeedKmh: &k})
			b.GPS = append(b.GPS, wire.GPS{T: wt, Lat: Lat, Lon: lon, SpeedKmh: &k, CourseDeg: &course, HDOP: &hdop, Fix: wire.Fix3D})
			if level != nil {
				db, dur := level(at), 1.0
				b.Sound = append(b.Sound, wire.Sound{T: wt, LAeqDB: &db, DurS: &dur})
			}
			b.SentAt = wt
			at = at.Add(time.Second)
		}
		p, err := wire.Encode(b, nil)
		if err != nil {
			return nil, err
		}
		out = append(out, Batch{Batch: b, Payload: p})
	}
	return out, nil
}

// Day is one service day of one vehicle at the readings' real rates (GPS, tachograph and sound
// meter once a second: 3 readings a second), from the local start of service for hours:
// driving at 12–28 km/h with a stop of 2 minutes every 10, a burst of 20 s at 34 km/h every
// hour (a moderate one: an episode only under a limit of 25 km/h) and one at 45 km/h every 3
// hours (a hard one). seq numbers on from *seq.
func Day(vehicle string, seq *uint64, start time.Time, hours float64) ([]Batch, error) {
	n := int(hours * 3600)
	speeds := make([]float64, n)
	for s := range n {
		switch m := s % 600; {
		case m >= 480:
			speeds[s] = 0
		default:
			speeds[s] = 20 + 8*math.Sin(float64(s)/37)
		}
		if s%3600 >= 1200 && s%3600 < 1220 {
			speeds[s] = 34
		}
		if s%10800 >= 2400 && s%10800 < 2420 {
			speeds[s] = 45
		}
	}
	return trip(vehicle, "e-"+vehicle, seq, start, speeds, func(at time.Time) float64 { return 62 + 8*math.Sin(float64(at.Unix())/40) })
}
