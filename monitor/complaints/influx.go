package complaints

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"

	"github.com/trenzinho/trenzinho/config"
)

// Influx reads the telemetry that ingest stores (docs/storage.md: measurements gps and sound,
// tag vehicle, fields with the wire names) through the Flux query API, which InfluxDB 2.x and
// 1.8 (flux-enabled, token "user:password", bucket "db/rp") both serve.
type Influx struct {
	client influxdb2.Client
	org    string
	bucket string
	// MaxRows bounds the rows one window may return (default 2,000,000: half an hour of a
	// hundred vehicles at one reading a second); past it the query fails rather than exhaust
	// memory.
	MaxRows int
}

// NewInflux returns a reader of the InfluxDB at cfg.URL. The client is closed with Close.
func NewInflux(cfg config.Influx) (*Influx, error) {
	if cfg.URL == "" {
		return nil, errors.New("complaints: InfluxDB URL is empty (TRENZINHO_INFLUX_URL)")
	}
	opts := influxdb2.DefaultOptions().SetHTTPRequestTimeout(30)
	return &Influx{client: influxdb2.NewClientWithOptions(strings.TrimRight(cfg.URL, "/"), cfg.Token, opts),
		org: cfg.Org, bucket: cfg.Bucket, MaxRows: 2_000_000}, nil
}

// Close releases the client.
func (i *Influx) Close() { i.client.Close() }

// fluxString quotes s as a Flux string literal.
func fluxString(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`, "$", `\$`).Replace(s) + `"`
}

// Tracks reads the positions, speeds and sound levels of every vehicle in [from, to]. Readings
// timed by the bridge's system clock (clock "system") are left out, as everywhere evidence is
// read: their time is not known.
func (i *Influx) Tracks(ctx context.Context, from, to time.Time) ([]Track, error) {
	q := fmt.Sprintf(`from(bucket: %s)
  |> range(start: %s, stop: %s)
  |> filter(fn: (r) => (r._measurement == "gps" and (r._field == "lat" or r._field == "lon" or r._field == "speed_kmh" or r._field == "clock"))
      or (r._measurement == "sound" and (r._field == "laeq_db" or r._field == "dur_s" or r._field == "clock")))`,
		fluxString(i.bucket), from.UTC().Format(time.RFC3339Nano), to.Add(time.Nanosecond).UTC().Format(time.RFC3339Nano))
	res, err := i.client.QueryAPI(i.org).Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("influx query: %w", err)
	}
	defer res.Close()
	type key struct {
		vehicle string
		t       int64
	}
	type gps struct {
		lat, lon, speed      float64
		hasLat, hasLon, hasS bool
		system               bool
	}
	type snd struct {
		db, dur       float64
		hasDB, system bool
	}
	fixes := map[key]*gps{}
	sounds := map[key]*snd{}
	rows := 0
	for res.Next() {
		rows++
		if rows > i.MaxRows {
			return nil, fmt.Errorf("influx query: more than %d rows in %s–%s", i.MaxRows, from.Format(time.RFC3339), to.Format(time.RFC3339))
		}
		r := res.Record()
		v, _ := r.ValueByKey("vehicle").(string)
		if v == "" {
			continue
		}
		k := key{v, r.Time().UnixNano()}
		switch r.Measurement() {
		case "gps":
			g := fixes[k]
			if g == nil {
				g = &gps{}
				fixes[k] = g
			}
			switch r.Field() {
			case "lat":
				g.lat, g.hasLat = toFloat(r.Value())
			case "lon":
				g.lon, g.hasLon = toFloat(r.Value())
			case "speed_kmh":
				g.speed, g.hasS = toFloat(r.Value())
			case "clock":
				g.system = r.Value() == "system"
			}
		case "sound":
			s := sounds[k]
			if s == nil {
				s = &snd{}
				sounds[k] = s
			}
			switch r.Field() {
			case "laeq_db":
				s.db, s.hasDB = toFloat(r.Value())
			case "dur_s":
				s.dur, _ = toFloat(r.Value())
			case "clock":
				s.system = r.Value() == "system"
			}
		}
	}
	if err := res.Err(); err != nil {
		return nil, fmt.Errorf("influx query: %w", err)
	}
	byVehicle := map[string]*Track{}
	track := func(v string) *Track {
		t := byVehicle[v]
		if t == nil {
			t = &Track{Vehicle: v}
			byVehicle[v] = t
		}
		return t
	}
	for k, g := range fixes {
		if !g.hasLat || !g.hasLon || g.system {
			continue
		}
		f := Fix{T: time.Unix(0, k.t).UTC(), Lat: g.lat, Lon: g.lon}
		if g.hasS {
			s := g.speed
			f.SpeedKmh = &s
		}
		tr := track(k.vehicle)
		tr.Fixes = append(tr.Fixes, f)
	}
	for k, s := range sounds {
		if !s.hasDB || s.system {
			continue
		}
		tr := track(k.vehicle)
		tr.Sounds = append(tr.Sounds, SoundReading{T: time.Unix(0, k.t).UTC(), DB: s.db, DurS: s.dur})
	}
	out := make([]Track, 0, len(byVehicle))
	for _, v := range slices.Sorted(maps.Keys(byVehicle)) {
		t := byVehicle[v]
		slices.SortFunc(t.Fixes, func(a, b Fix) int { return a.T.Compare(b.T) })
		slices.SortFunc(t.Sounds, func(a, b SoundReading) int { return a.T.Compare(b.T) })
		out = append(out, *t)
	}
	return out, nil
}

func toFloat(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case int64:
		return float64(x), true
	}
	return 0, false
}
