package rules

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/profiles"
	"github.com/trenzinho/trenzinho/wire"
)

// The Guarapari 2003 profile (Lei 2.272/2003, revoked): its own periods (Art. 6, § 3º: night
// from 20h00) and area types (Art. 7, § 1º: residential 55/50, "usos diversos" 80/100).

func guarapariProfile(t *testing.T) *profile.Profile {
	t.Helper()
	b, err := profiles.Files.ReadFile("guarapari-2003.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Parse(b, "guarapari-2003.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// gpTown is one zone of Guarapari's "usos diversos" around (-20.67, -40.50); elsewhere the
// profile's default area (residential) applies.
const gpTown = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.5100,-20.6800],[-40.4900,-20.6800],[-40.4900,-20.6600],[-40.5100,-20.6600],[-40.5100,-20.6800]]]},
 "properties":{"id":"zone-diverse","kind":"nbr_zone","area":"diverse_uses","source":"sample"}}
]}`

func gpLocal(t *testing.T, p *profile.Profile, s string) time.Time {
	t.Helper()
	tm, err := time.ParseInLocation("2006-01-02 15:04:05", s, p.Location())
	if err != nil {
		t.Fatal(err)
	}
	return tm
}

// gpRun feeds one vehicle standing at a place with a sound meter, as places_test.go's standing
// does, and keeps the episodes as last seen.
type gpRun struct {
	e        *Engine
	seq      uint64
	t        time.Time
	episodes map[string]Episode
}

func newGPRun(t *testing.T, p *profile.Profile, start time.Time) *gpRun {
	t.Helper()
	places, err := geofences.Read(strings.NewReader(gpTown), "guarapari.geojson")
	if err != nil {
		t.Fatal(err)
	}
	return &gpRun{e: New(p, places), t: start, episodes: map[string]Episode{}}
}

// stand sends seconds of one reading per second of each instrument, five per batch: the vehicle
// stopped at (lat, lon), its meter at db (0: no sound reading).
func (r *gpRun) stand(t *testing.T, lat, lon float64, seconds int, db float64) {
	t.Helper()
	var b *wire.Batch
	send := func() {
		if b == nil {
			return
		}
		recv := b.SentAt.Add(time.Second)
		r.e.Tick(recv)
		r.e.Apply(b, recv)
		c, err := r.e.Drain()
		if err != nil {
			t.Fatal(err)
		}
		for _, ep := range c.Episodes {
			r.episodes[ep.ID] = ep
		}
	}
	for i := range seconds {
		if i%5 == 0 {
			send()
			r.seq++
			b = &wire.Batch{V: 1, Vehicle: "GUA-001", Epoch: "e-1", Seq: r.seq, Clock: wire.ClockGPS}
		}
		ts := wire.NewTime(r.t)
		b.Tacho = append(b.Tacho, wire.Tacho{T: ts, SpeedKmh: ptr(0.0)})
		b.GPS = append(b.GPS, wire.GPS{T: ts, Lat: lat, Lon: lon, SpeedKmh: ptr(0.0), HDOP: ptr(0.8), Fix: wire.Fix3D})
		if db > 0 {
			b.Sound = append(b.Sound, wire.Sound{T: ts, LAeqDB: ptr(db), DurS: ptr(1.0)})
		}
		b.SentAt = ts
		r.t = r.t.Add(time.Second)
	}
	send()
}

func (r *gpRun) rule(name string) []Episode {
	var out []Episode
	for _, ep := range r.episodes {
		if ep.Rule == name {
			out = append(out, ep)
		}
	}
	return out
}

func TestGuarapariPeriods(t *testing.T) {
	p := guarapariProfile(t)
	cases := []struct {
		when  string
		night bool
	}{
		{"2026-11-26 19:30:00", false}, // Thursday: still day (Art. 6, § 3º: day until 20h00)
		{"2026-11-26 19:59:00", false},
		{"2026-11-26 20:00:00", true},
		{"2026-11-26 20:30:00", true}, // night — in Piúma (NBR, 22h00) this is day
		{"2026-11-27 06:59:00", true},
		{"2026-11-27 07:00:00", false},
		{"2026-11-29 07:30:00", false}, // Sunday: the law does not extend the night
		{"2026-11-20 08:00:00", false}, // a holiday: neither
	}
	for _, c := range cases {
		if got := Night(p, gpLocal(t, p, c.when)); got != c.night {
			t.Errorf("%s: night %v, want %v", c.when, got, c.night)
		}
	}
	if Night(profile.Piuma(), gpLocal(t, p, "2026-11-26 20:30:00")) {
		t.Error("20:30 is day in Piúma")
	}
	limits := []struct {
		area, when string
		want       float64
	}{
		{"residential", "2026-11-26 19:30:00", 55},
		{"residential", "2026-11-26 20:30:00", 50},
		{"diverse_uses", "2026-11-26 19:30:00", 80},
		{"diverse_uses", "2026-11-26 20:30:00", 100}, // as written: above the day limit
	}
	for _, c := range limits {
		if got := AreaLimit(p, c.area, gpLocal(t, p, c.when)); got != c.want {
			t.Errorf("%s at %s: limit %v, want %v", c.area, c.when, got, c.want)
		}
	}
}

func TestGuarapariNoiseLimit(t *testing.T) {
	p := guarapariProfile(t)
	// At the meter, the level that puts the receptor at exactly limit + tolerance (1 dB), with
	// r1 = 2 m and r2 = 7.5 m (placeholders of this profile).
	atMeter := func(receptor float64) float64 { return receptor + 20*math.Log10(7.5/2) }
	const resLat, resLon = -20.6000, -40.5000 // no zone: the default area, residential
	const divLat, divLon = -20.6700, -40.5000 // the zone of "usos diversos"
	cases := []struct {
		name     string
		when     string
		lat, lon float64
		db       float64 // at the meter
		want     int
		area     string
		limit    float64
	}{
		{"residential by day, just under 55+1", "2026-11-26 19:00:00", resLat, resLon, atMeter(56) - 0.05, 0, "", 0},
		{"residential by day, just over 55+1", "2026-11-26 19:00:00", resLat, resLon, atMeter(56) + 0.05, 1, "residential", 55},
		{"53 dB at 20:30 is over the night limit", "2026-11-26 20:30:00", resLat, resLon, atMeter(53), 1, "residential", 50},
		{"53 dB at 19:00 is not", "2026-11-26 19:00:00", resLat, resLon, atMeter(53), 0, "", 0},
		{"90 dB in usos diversos by day", "2026-11-26 18:00:00", divLat, divLon, atMeter(90), 1, "diverse_uses", 80},
		{"90 dB in usos diversos at night is under 100", "2026-11-26 21:00:00", divLat, divLon, atMeter(90), 0, "", 0},
		{"Sunday 07:30 is day", "2026-11-29 07:30:00", resLat, resLon, atMeter(53), 0, "", 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := newGPRun(t, p, gpLocal(t, p, c.when))
			r.stand(t, c.lat, c.lon, 150, c.db)
			r.stand(t, c.lat, c.lon, 90, 40)
			eps := r.rule("noise_limit")
			if len(eps) != c.want {
				t.Fatalf("%d noise episodes, want %d: %+v", len(eps), c.want, eps)
			}
			if c.want == 0 {
				return
			}
			ep := eps[0]
			if ep.Area == nil || *ep.Area != c.area || ep.Limit != c.limit || ep.Tolerance != 1 || !ep.Estimate {
				t.Errorf("episode %+v: want area %s, limit %v", ep, c.area, c.limit)
			}
			if ep.Article != "Art. 7, § 1º" || !strings.HasSuffix(ep.Penalty, "§ 3º") {
				t.Errorf("article %q, penalty %q", ep.Article, ep.Penalty)
			}
			if want := ReceptorLevel(c.db, 2, 7.5); math.Abs(ep.Peak-want) > 1e-9 {
				t.Errorf("peak %v, want %v", ep.Peak, want)
			}
		})
	}
}
