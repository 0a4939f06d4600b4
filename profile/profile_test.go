package profile

import (
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/profiles"
)

func TestPiumaBuiltIn(t *testing.T) {
	p := Piuma()
	if p.Speed.LimitKmh != 30 || p.Speed.ToleranceKmh != 7 || p.Rules["speed"].Penalty != "Art. 46, X" {
		t.Fatalf("unexpected defaults: %+v", p.Speed)
	}
	if p.Location().String() != "America/Sao_Paulo" {
		t.Fatal(p.Location())
	}
}

func TestValidationNamesTheKey(t *testing.T) {
	cases := []struct{ from, to, key string }{
		{"limit_kmh: 30", "limit_kmh: -1", "speed.limit_kmh"},
		{`start: "09:00"`, `start: "9h"`, "service_hours.start"},
		{"  window_s: 60\n", "  window_s: 60\n  default_area: beach\n", "noise.default_area"},
		{"  window_s: 60\n", "  window_s: 60\n  default_area: mixed_leisure\n", "noise.default_area_reason"},
		{"per_hdop_m: 5", "per_hdop_m: -5", "sensitive.position_margin.per_hdop_m"},
		{"  school_recess: []", "  school_recess: [{from: \"2026-12-20\", to: \"2026-12-01\"}]", "calendars.school_recess[0].to"},
		{"cnh_grace_days: 30", "cnh_grace_days: -1", "document_expired.cnh_grace_days"},
		{"basis: confirmed", "basis: maybe", "recidivism.basis"},
		{"timezone: America/Sao_Paulo", "timezone: Mars/Olympus", "timezone"},
		{"    article: Art. 23\n", "    article: \"\"\n", "rules.speed.article"},
		{"gap_timeout_s: 120", "gap_timeout_s: 120\nspeeed: 1", "speeed"},
	}
	for _, c := range cases {
		y := strings.Replace(string(PiumaYAML()), c.from, c.to, 1)
		if y == string(PiumaYAML()) {
			t.Fatalf("case %q did not change the profile", c.from)
		}
		_, err := Parse([]byte(y), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s → %s: error %v does not name %s", c.from, c.to, err, c.key)
		}
	}
}

func TestHolidays(t *testing.T) {
	p := Piuma()
	loc := p.Location()
	cases := []struct {
		date string
		want bool
	}{
		{"2026-11-20", true},  // Consciência Negra, national since 2024
		{"2023-11-20", false}, // before it became national
		{"2026-04-03", true},  // Good Friday 2026 (Easter 5 April)
		{"2026-04-13", true},  // Nossa Senhora da Penha: Easter + 8
		{"2026-02-17", false}, // Carnaval is not a holiday in this profile
		{"2026-12-25", true},
		{"2026-12-24", false},
	}
	for _, c := range cases {
		d, _ := time.ParseInLocation(time.DateOnly, c.date, loc)
		if _, got := p.Holiday(d.Add(12 * time.Hour)); got != c.want {
			t.Errorf("%s: holiday %v, want %v", c.date, got, c.want)
		}
	}
	// A single date (a municipal holiday), at both ends of the local day.
	p.Holidays.Dates = []DateHoliday{{Date: "2026-06-29", Name: "São Pedro"}}
	for _, c := range []struct {
		t    time.Time
		want bool
	}{
		{time.Date(2026, 6, 29, 3, 0, 0, 0, time.UTC), true},   // 00:00 in Piúma
		{time.Date(2026, 6, 30, 2, 59, 0, 0, time.UTC), true},  // 23:59
		{time.Date(2026, 6, 29, 2, 59, 0, 0, time.UTC), false}, // the 28th, local
		{time.Date(2026, 6, 30, 3, 0, 0, 0, time.UTC), false},
	} {
		if name, got := p.Holiday(c.t); got != c.want || got && name != "São Pedro" {
			t.Errorf("%s: holiday %q %v, want %v", c.t, name, got, c.want)
		}
	}
}

// TestHolidayDoesNotAllocate: the rules ask on every reading.
func TestHolidayDoesNotAllocate(t *testing.T) {
	p := Piuma()
	p.Holidays.Dates = []DateHoliday{{Date: "2026-06-29", Name: "São Pedro"}}
	day := time.Date(2026, 6, 1, 15, 0, 0, 0, time.UTC)
	i := 0
	if n := testing.AllocsPerRun(100, func() {
		p.Holiday(day.AddDate(0, 0, i%60))
		i++
	}); n != 0 {
		t.Errorf("%v allocations per call", n)
	}
}

func loadGuarapari(t *testing.T) *Profile {
	t.Helper()
	b, err := profiles.Files.ReadFile("guarapari-2003.yaml")
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(b, "guarapari-2003.yaml (embedded)")
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestGuarapari2003Loads(t *testing.T) {
	embedded := loadGuarapari(t)
	disk, err := Load(filepath.Join("..", "profiles", "guarapari-2003.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(embedded.Noise, disk.Noise) || !reflect.DeepEqual(embedded.Rules, disk.Rules) ||
		!reflect.DeepEqual(embedded.Law, disk.Law) || embedded.ID != "guarapari-2003" || disk.ID != embedded.ID {
		t.Fatalf("embedded and disk profiles differ:\n%+v\n%+v", embedded, disk)
	}
	if embedded.Location().String() != "America/Sao_Paulo" {
		t.Fatal(embedded.Location())
	}
}

func TestGuarapari2003Law(t *testing.T) {
	p := loadGuarapari(t)
	if p.Law.InForce || p.Law.RevokedBy != "Lei nº 4.648/2021" || p.Law.Name != "Lei Municipal nº 2.272/2003" {
		t.Fatalf("law %+v: want revoked by Lei nº 4.648/2021, not in force", p.Law)
	}
	// The seed gives no date of revocation: none is made up.
	if p.Law.RevokedOn != "" || p.Law.EnactedOn != "2003-05-15" {
		t.Fatalf("law dates %q / %q", p.Law.EnactedOn, p.Law.RevokedOn)
	}
	if !Piuma().Law.InForce || Piuma().Law.RevokedBy != "" {
		t.Fatal("Piúma's law is in force")
	}
}

func TestGuarapari2003Noise(t *testing.T) {
	p := loadGuarapari(t)
	n := p.Noise
	// Art. 6, § 3º: day 07h00–20h00, night 20h00–07h00; no rest-day extension.
	if n.DayStart != "07:00" || n.NightStart != "20:00" || n.RestDayNightEnd != "" {
		t.Fatalf("periods %s–%s (rest day %q)", n.DayStart, n.NightStart, n.RestDayNightEnd)
	}
	// Art. 7, § 1º: the law's own two area types, values as written (the night limit of "usos
	// diversos" above its day limit, kept).
	want := map[string]Area{
		"residential":  {Name: "Áreas residenciais", Day: 55, Night: 50},
		"diverse_uses": {Name: "Áreas de usos diversos", Day: 80, Night: 100},
	}
	if !reflect.DeepEqual(n.Areas, want) {
		t.Fatalf("areas %+v, want %+v", n.Areas, want)
	}
	if n.DefaultArea != "residential" {
		t.Fatal(n.DefaultArea)
	}
	if r := p.Rules["noise_limit"]; !r.Infraction || r.Article != "Art. 7, § 1º" || !strings.Contains(r.Penalty, "§ 3º") {
		t.Fatalf("noise_limit %+v", r)
	}
}

func TestGuarapari2003Fines(t *testing.T) {
	p := loadGuarapari(t)
	// The amounts of the table of § 3º, in order, as the seed gives them.
	amounts := []float64{300, 360, 470, 660, 990, 2000, 4000, 8000, 16000, 50000}
	if len(p.Noise.Fines) != len(amounts) {
		t.Fatalf("%d rows, want %d", len(p.Noise.Fines), len(amounts))
	}
	for i, f := range p.Noise.Fines {
		if f.Amount != amounts[i] || f.Unit != "UFMG" || f.AsWritten == "" {
			t.Errorf("row %d: %+v, want %v UFMG", i, f, amounts[i])
		}
		last := i == len(amounts)-1
		// The seed lost the dB ranges of every row but the last ("Acima de 50"): none is invented.
		if !last && (!f.RangeLost || f.AboveDBFrom != nil || f.AboveDBTo != nil) {
			t.Errorf("row %d has a dB range the seed does not give: %+v", i, f)
		}
		if last && (f.RangeLost || f.AboveDBFrom == nil || *f.AboveDBFrom != 50 || f.AboveDBTo != nil) {
			t.Errorf("last row %+v, want above 50 dB, open-ended", f)
		}
	}
	for _, excess := range []float64{0.5, 1, 10, 49.9, 50} {
		if f, ok := p.Noise.FineFor(excess); ok {
			t.Errorf("%v dB above: a fine of %v %s, but its range is lost", excess, f.Amount, f.Unit)
		}
	}
	if f, ok := p.Noise.FineFor(50.1); !ok || f.Amount != 50000 {
		t.Errorf("50.1 dB above: %+v %v, want 50000 UFMG", f, ok)
	}
	if p.FiscalUnit.Name != "UFMG" || len(p.FiscalUnit.Values) != 0 {
		t.Errorf("fiscal unit %+v: the seed gives no value in R$", p.FiscalUnit)
	}
	if len(Piuma().Noise.Fines) != 0 {
		t.Error("Piúma fines noise_limit by rules.noise_limit.fine")
	}
}

func TestGuarapari2003Rules(t *testing.T) {
	p := loadGuarapari(t)
	for _, id := range RuleIDs {
		r := p.Rules[id]
		if id == "noise_limit" {
			continue
		}
		// Rules the noise law does not cover are reports only.
		if r.Infraction || r.FineUFMP != 0 || r.Penalty != "—" || r.Text == "" {
			t.Errorf("%s: %+v", id, r)
		}
		if id != "sensitive_zone_sound" && r.Article != "—" {
			t.Errorf("%s: article %q, want —", id, r.Article)
		}
	}
	for _, k := range []string{"speed", "sensitive", "noise.r2_m", "noise.default_area", "recidivism", "defence"} {
		if !slices.Contains(p.Law.Placeholders, k) {
			t.Errorf("%s is not listed in law.placeholders", k)
		}
	}
	for _, k := range []string{"noise.areas", "noise.day_start", "noise.night_start", "noise.fines", "rules", "fiscal_unit"} {
		if slices.Contains(p.Law.Placeholders, k) {
			t.Errorf("%s comes from the law, not a placeholder", k)
		}
	}
}

func TestNewKeysNameTheKey(t *testing.T) {
	gp, err := profiles.Files.ReadFile("guarapari-2003.yaml")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct{ base, from, to, key string }{
		{"gp", "in_force: false", "in_force: true", "law.in_force"},
		{"gp", `enacted_on: "2003-05-15"`, `enacted_on: "15/05/2003"`, "law.enacted_on"},
		{"gp", `enacted_on: "2003-05-15"`, "enacted_on: \"2003-05-15\"\n  revoked_on: \"2021\"", "law.revoked_on"},
		{"gp", `enacted_on: "2003-05-15"`, "enacted_on: \"2003-05-15\"\n  revoked_on: \"2001-01-01\"", "law.revoked_on"},
		{"piuma", "in_force: true", "in_force: true\n  revoked_on: \"2021-01-01\"", "law.revoked_on"},
		{"gp", "    - noise.r2_m\n", "    - noise.r3_m\n", "law.placeholders[7]"},
		{"piuma", "in_force: true", "in_force: true\n  placeholders: [rules.flying]", "law.placeholders[0]"},
		{"gp", "{range_lost: true, amount: 300,", "{range_lost: true, above_db_from: 0, amount: 300,", "noise.fines[0]"},
		{"gp", "{range_lost: true, amount: 360,", "{amount: 360,", "noise.fines[1].above_db_from"},
		{"gp", "amount: 470, unit: UFMG", "amount: 0, unit: UFMG", "noise.fines[2].amount"},
		{"gp", "amount: 660, unit: UFMG", "amount: 660, unit: \"\"", "noise.fines[3].unit"},
		{"gp", "{above_db_from: 50, amount", "{above_db_from: 50, above_db_to: 40, amount", "noise.fines[9].above_db_to"},
		{"gp", "{range_lost: true, amount: 16000,", "{above_db_from: 60, amount: 16000,", "noise.fines[9].above_db_from"},
		{"gp", "{above_db_from: 50, amount", "{above_db_from: 50, dB_to: 60, amount", "dB_to"},
		{"piuma", "decided_by: autoridade", "decided_by: supervisor", "appeal.decided_by"},
		{"piuma", "decided_by: autoridade", "decided_by: admin", "appeal.decided_by"},
		{"piuma", "appeal:\n  days: 10", "appeal:\n  days: -1", "appeal.days"},
	}
	for _, c := range cases {
		base := string(PiumaYAML())
		if c.base == "gp" {
			base = string(gp)
		}
		y := strings.Replace(base, c.from, c.to, 1)
		if y == base {
			t.Fatalf("case %q did not change the profile", c.from)
		}
		_, err := Parse([]byte(y), "test.yaml")
		if err == nil || !strings.Contains(err.Error(), c.key) {
			t.Errorf("%s → %s: error %v does not name %s", c.from, c.to, err, c.key)
		}
	}
}
