package complaints

import (
	"context"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
)

type tracks []Track

func (t tracks) Tracks(context.Context, time.Time, time.Time) ([]Track, error) { return t, nil }

const zone = `{"type":"FeatureCollection","features":[
{"type":"Feature","geometry":{"type":"Polygon","coordinates":[[[-40.7400,-20.8500],[-40.7200,-20.8500],[-40.7200,-20.8300],[-40.7400,-20.8300],[-40.7400,-20.8500]]]},
 "properties":{"id":"zone-res","kind":"nbr_zone","area":"mixed_residential","source":"survey"}}]}`

// The level at the place is the rules' point-source estimate from the meter's energy average
// at the closest approach, with the vehicle's own r₁; the limit is the zone's at that hour; a
// vehicle beyond the radius is not matched; matches come nearest first.
func TestMatch(t *testing.T) {
	places, err := geofences.Read(strings.NewReader(zone), "z.geojson")
	if err != nil {
		t.Fatal(err)
	}
	p := profile.Piuma()
	// 21:14 local: night in Piúma? night_start is 22:00: day, limit 55.
	pass := time.Date(2026, 11, 27, 21, 14, 0, 0, p.Location())
	kmh := 12.0
	near := Track{Vehicle: "PIU-002"}
	for i := -60; i <= 60; i++ {
		at := pass.Add(time.Duration(i) * time.Second)
		near.Fixes = append(near.Fixes, Fix{T: at, Lat: -20.8400, Lon: -40.7300 + float64(i)*1e-5, SpeedKmh: &kmh})
		// 80 dB(A) and 90 dB(A) alternating seconds: the energy average is 87.4, not 85.
		db := 80.0
		if i%2 == 0 {
			db = 90
		}
		near.Sounds = append(near.Sounds, SoundReading{T: at, DB: db, DurS: 1})
	}
	quiet := Track{Vehicle: "PIU-001", Fixes: []Fix{{T: pass, Lat: -20.8410, Lon: -40.7300}}} // no meter, 66 m away
	far := Track{Vehicle: "PIU-003", Fixes: []Fix{{T: pass, Lat: -20.8300, Lon: -40.7300}}}   // 1.1 km away
	m := &Matcher{Telemetry: tracks{far, quiet, near}, Profile: p, Places: places,
		MeterDistance: func(v string) float64 { return map[string]float64{"PIU-002": 2.5}[v] }}
	res, err := m.Match(context.Background(), -20.8404, -40.7300, pass.Add(5*time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	if res.Area != "mixed_residential" || res.LimitDB == nil || *res.LimitDB != 55 || res.RadiusM != 300 ||
		!res.From.Equal(pass.Add(-10*time.Minute)) || !res.To.Equal(pass.Add(20*time.Minute)) {
		t.Fatalf("result %+v", res)
	}
	if len(res.Matches) != 2 || res.Matches[0].Vehicle != "PIU-002" || res.Matches[1].Vehicle != "PIU-001" {
		t.Fatalf("matches %+v", res.Matches)
	}
	got := res.Matches[0]
	l1 := 10 * math.Log10((math.Pow(10, 9)*31+math.Pow(10, 8)*30)/61) // the 60 s window centred on 21:14 holds 61 readings, 31 of them at 90
	want := rules.ReceptorLevel(l1, 2.5, got.DistanceM)
	if math.Abs(got.DistanceM-44.5) > 1 || !got.At.Equal(pass) || got.MeterDB == nil || math.Abs(*got.MeterDB-l1) > 1e-9 ||
		got.LevelDB == nil || math.Abs(*got.LevelDB-want) > 1e-9 || !got.Above || !got.Estimate {
		t.Errorf("match %+v (meter %v, level %v; want %v, %v)", got, deref(got.MeterDB), deref(got.LevelDB), l1, want)
	}
	if q := res.Matches[1]; q.LevelDB != nil || q.Above {
		t.Errorf("a vehicle without sound readings has a level: %+v", q)
	}
	detail := Detail(res, p.Location())
	if len(detail) != 2 || !strings.HasPrefix(detail[0], "PIU-002 passou às 21:14 a cerca de 45 m, a 12 km/h, com nível estimado de") ||
		!strings.HasSuffix(detail[0], "acima do limite da área (55 dB(A)).") ||
		detail[1] != "PIU-001 passou às 21:14 a cerca de 65 m, sem leitura do medidor de som nesse momento." {
		t.Errorf("detail %q", detail)
	}
	answer := Answer(res, p.Location())
	if len(answer) != 2 || !strings.HasPrefix(answer[0], "Um trenzinho passou às 21:14 a cerca de 45 m do local, com nível sonoro estimado de") ||
		!strings.HasSuffix(answer[0], "acima do limiar de triagem da área (limite de 55 dB(A) mais a tolerância do medidor); o caso foi encaminhado à fiscalização.") ||
		answer[1] != "Outro trenzinho passou às 21:14 a cerca de 65 m do local, sem leitura do medidor de som nesse momento." {
		t.Errorf("answer %q", answer)
	}

	// Closer than r₁, the estimate is the meter's level, never above it.
	res, _ = m.Match(context.Background(), -20.8400, -40.7300, pass)
	if g := res.Matches[0]; g.DistanceM > 0.5 || *g.LevelDB != *g.MeterDB {
		t.Errorf("at the vehicle: %+v", g)
	}

	// Nobody near: the answer says so with the window.
	res, _ = m.Match(context.Background(), -20.8200, -40.7000, pass)
	if len(res.Matches) != 0 || res.LimitDB != nil {
		t.Fatalf("outside the zone: %+v", res)
	}
	if a := Answer(res, p.Location()); len(a) != 1 || a[0] != "Nenhum trenzinho a menos de 300 m entre 20:59 e 21:29." {
		t.Errorf("answer %q", a)
	}
	// A window across midnight names the day of its end.
	res, _ = m.Match(context.Background(), -20.8200, -40.7000, time.Date(2026, 11, 27, 23, 50, 0, 0, p.Location()))
	if a := Answer(res, p.Location()); a[0] != "Nenhum trenzinho a menos de 300 m entre 23:35 e 00:05 de 28/11." {
		t.Errorf("answer %q", a)
	}
}

func deref(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

// A window across night_start (22:00 in Piúma): each vehicle is judged by the limit at its own
// passage — 55 dB(A) by day, 50 at night — not by the complaint's.
func TestMatchLimitAtThePassage(t *testing.T) {
	places, err := geofences.Read(strings.NewReader(zone), "z.geojson")
	if err != nil {
		t.Fatal(err)
	}
	p := profile.Piuma()
	day := time.Date(2026, 11, 27, 21, 55, 0, 0, p.Location())  // a Friday
	night := time.Date(2026, 11, 27, 22, 5, 0, 0, p.Location()) //
	track := func(v string, at time.Time, db float64) Track {
		return Track{Vehicle: v, Fixes: []Fix{{T: at, Lat: -20.8400, Lon: -40.7300}}, Sounds: []SoundReading{{T: at, DB: db, DurS: 1}}}
	}
	// 78 dB(A) at the meter, 44 m away: ≈ 51.2 dB(A) — within 55 + 1 by day, above 50 + 1 at night.
	m := &Matcher{Telemetry: tracks{track("PIU-001", day, 78), track("PIU-002", night, 78)}, Profile: p, Places: places}
	res, err := m.Match(context.Background(), -20.8404, -40.7300, day.Add(5*time.Minute))
	if err != nil || len(res.Matches) != 2 {
		t.Fatalf("%+v %v", res, err)
	}
	for _, mt := range res.Matches {
		want := map[string]float64{"PIU-001": 55, "PIU-002": 50}[mt.Vehicle]
		if mt.LimitDB == nil || *mt.LimitDB != want || mt.Above != (mt.Vehicle == "PIU-002") {
			t.Errorf("%s: limit %v, above %v; want %v", mt.Vehicle, deref(mt.LimitDB), mt.Above, want)
		}
	}
	a := Detail(res, p.Location())
	if !strings.Contains(strings.Join(a, " "), "dentro do limite da área (55 dB(A))") || !strings.Contains(strings.Join(a, " "), "acima do limite da área (50 dB(A))") {
		t.Errorf("detail %q", a)
	}
}
