package demo

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/paulmach/orb"

	"github.com/trenzinho/trenzinho/firmware-bridge/sim"
	"github.com/trenzinho/trenzinho/geofences"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
)

// TestSettingsLoad: the files Write produces load as the monitor loads them, and say what the
// scripted day relies on.
func TestSettingsLoad(t *testing.T) {
	loc, _ := time.LoadLocation("America/Sao_Paulo")
	// 03:10:30 in Piúma on a Tuesday: outside the law's hours and every sample itinerary's.
	start := time.Date(2026, 12, 1, 3, 10, 30, 0, loc)
	f, err := Write(t.TempDir(), start)
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Load(f.Profile)
	if err != nil {
		t.Fatal(err)
	}
	if p.ServiceHours.End != "03:27" || p.ServiceHours.Start != "15:27" || p.ServiceHours.GraceM != 2 {
		t.Errorf("service hours %+v", p.ServiceHours)
	}
	if !strings.Contains(p.Version, "demonstração") {
		t.Errorf("version %q does not say demonstração", p.Version)
	}
	if got := rules.MinutesOutside(p, start.Add(time.Minute)); got != 0 {
		t.Errorf("a minute after the start: %v minutes outside the service hours", got)
	}
	if got := rules.MinutesOutside(p, start.Add(20*time.Minute)); got < 3 {
		t.Errorf("20 minutes after the start: %v minutes outside the service hours", got)
	}
	set, err := geofences.Load(f.Geofences)
	if err != nil {
		t.Fatal(err)
	}
	its := set.OfKind(geofences.KindItinerary)
	if len(its) != 3 {
		t.Fatalf("%d itineraries", len(its))
	}
	for _, it := range its {
		if !it.ValidOn(start) || !it.ActiveAt(start, false) || !it.ActiveAt(start, true) {
			t.Errorf("%s not active at %v", it.ID, start)
		}
	}
	// Only PIU-003's inspection is expired, for every vehicle with its driver's card, on the
	// day of the demonstration and the day after (a demonstration running past midnight).
	reg, err := registry.Open(f.Registry)
	if err != nil {
		t.Fatal(err)
	}
	reg.SetLocation(p.Location())
	for _, v := range sim.Demo() {
		for _, at := range []time.Time{start, start.Add(24 * time.Hour)} {
			var expired []string
			for _, e := range reg.ExpiredFor(v.ID, v.Card, at) {
				if e.Expired {
					expired = append(expired, string(e.Document))
				}
			}
			want := ""
			if v.ID == "PIU-003" {
				want = "inspecao"
			}
			if strings.Join(expired, ",") != want {
				t.Errorf("%s on %v: expired %v, want %q", v.ID, at, expired, want)
			}
		}
	}
	if b, _ := os.ReadFile(f.Registry); !strings.Contains(string(b), "NÃO USAR EM AUTOS") {
		t.Error("the demonstration registry does not carry the warning")
	}
}

// TestSyncRegistry: the editable copy follows the day of the demonstration until someone edits
// it.
func TestSyncRegistry(t *testing.T) {
	dir, data := t.TempDir(), t.TempDir()
	cp := data + "/registry.yaml"
	day1 := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	f, err := Write(dir, day1)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.SyncRegistry(cp); err != nil {
		t.Fatal(err)
	}
	want1, _ := Registry(day1)
	if b, _ := os.ReadFile(cp); string(b) != string(want1) {
		t.Fatal("first run: the copy is not the demonstration registry")
	}
	// A later run, the copy unedited: it moves to the new day.
	day2 := day1.AddDate(0, 1, 0)
	if f, err = Write(dir, day2); err != nil {
		t.Fatal(err)
	}
	if err := f.SyncRegistry(cp); err != nil {
		t.Fatal(err)
	}
	want2, _ := Registry(day2)
	if b, _ := os.ReadFile(cp); string(b) != string(want2) || string(want1) == string(want2) {
		t.Fatal("second run: the unedited copy was not brought to the new day")
	}
	// Edited: kept.
	edited := append(want2, "# editado\n"...)
	if err := os.WriteFile(cp, edited, 0o600); err != nil {
		t.Fatal(err)
	}
	if f, err = Write(dir, day2.AddDate(0, 0, 1)); err != nil {
		t.Fatal(err)
	}
	if err := f.SyncRegistry(cp); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(cp); string(b) != string(edited) {
		t.Fatal("an edited copy was replaced")
	}
}

// TestREADMEListsTheScript: the README's table of the demonstration day gives each scripted
// event at the offset the script puts it.
func TestREADMEListsTheScript(t *testing.T) {
	b, err := os.ReadFile("../../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	scripts := map[string]*sim.Script{}
	for _, v := range sim.Demo() {
		scripts[v.ID] = v.Script
	}
	for _, ev := range sim.DemoEvents {
		at, ok := scripts[ev.Vehicle].MarkAt(ev.Mark)
		if !ok {
			t.Fatalf("event %q: no leg of %s is marked", ev.Mark, ev.Vehicle)
		}
		if ev.Mark == "late" {
			// Late from the end of the hours on, and in service for minutes after.
			if at >= ev.At || scripts[ev.Vehicle].Duration() < ev.At+4*time.Minute {
				t.Errorf("the late lap runs from %v to %v; the vehicle is late from %v", at, scripts[ev.Vehicle].Duration(), ev.At)
			}
		} else if d := at - ev.At; d < -time.Second || d > time.Second {
			t.Errorf("event %q: DemoEvents says %v, the script %v", ev.Mark, ev.At, at)
		}
		row := fmt.Sprintf("| %s | %s |", sim.Clock(ev.At), ev.Vehicle)
		if !strings.Contains(readme, row) {
			t.Errorf("README: no row starting %q for event %q", row, ev.Mark)
		}
	}
}

// TestScriptIsLawfulBetweenItsEvents walks each scripted train second by second over the
// sample geofences: it starts and ends in its licensee's garage, stands still only there or at
// a boarding point, stays at or under 30 km/h but in the speeding, and plays loud music only
// within 200 m of the Pronto Atendimento and in the loud boarding (stopped at a boarding point
// with no sensitive site within 200 m).
func TestScriptIsLawfulBetweenItsEvents(t *testing.T) {
	set, err := geofences.Sample()
	if err != nil {
		t.Fatal(err)
	}
	licensee := map[string]string{"PIU-001": "L1", "PIU-002": "L1", "PIU-003": "L2"}
	hospital, _ := set.Feature("s-pronto-atendimento")
	speeding := sim.DemoEvents[0]
	var boarding sim.DemoEvent
	for _, ev := range sim.DemoEvents {
		if ev.Mark == "loud-boarding" {
			boarding = ev
		}
	}
	t0 := time.Date(2026, 11, 30, 15, 0, 0, 0, time.UTC)
	for _, d := range sim.Demo() {
		v := &sim.Vehicle{ID: d.ID, Script: d.Script}
		end := d.Script.Duration() + time.Minute
		stopped, stoppedAt := 0, ""
		for e := time.Duration(0); e < end; e += time.Second {
			s := v.Step(t0.Add(e), time.Second)
			p := orb.Point{s.Lon, s.Lat}
			inGarage := set.InGarage(p, licensee[d.ID])
			if (e == 0 || e == end-time.Second) && !inGarage {
				t.Errorf("%s at %v: not in its garage", d.ID, e)
			}
			if s.SpeedKmh < 3 {
				if _, atStop := set.BoardingPointAt(p); !atStop && !inGarage {
					stopped, stoppedAt = stopped+1, sim.Clock(e)
				}
			}
			if s.SpeedKmh > 30 && (d.ID != speeding.Vehicle || e < speeding.At || e > speeding.At+40*time.Second) {
				t.Errorf("%s at %v: %v km/h outside the scripted speeding", d.ID, sim.Clock(e), s.SpeedKmh)
			}
			_, atStop := set.BoardingPointAt(p)
			loudBoarding := d.ID == boarding.Vehicle && e >= boarding.At && e <= boarding.At+15*time.Second &&
				s.SpeedKmh == 0 && atStop && len(set.SensitiveWithin(p, 200)) == 0
			// A scripted warning of the driver's coach: loud within the coach's lead distance
			// (300 m beyond the 200 m radius) of the hospital, for at most two minutes from its
			// mark.
			warned := false
			for _, w := range sim.DemoWarnings {
				at, _ := d.Script.MarkAt(w.Mark)
				warned = warned || w.Vehicle == d.ID && e >= at && e <= at+2*time.Minute && hospital.Distance(p) <= 500
			}
			if s.LAeqDB > 54 && hospital.Distance(p) > 200 && !loudBoarding && !warned {
				t.Errorf("%s at %v: %v dB, neither within 200 m of the hospital, in the loud boarding nor in a scripted warning", d.ID, sim.Clock(e), s.LAeqDB)
			}
		}
		if stopped > 0 {
			t.Errorf("%s: stood still %d s outside a garage or boarding point (last at %s)", d.ID, stopped, stoppedAt)
		}
	}
}

// TestSettingsAllowTheIssue: the demonstration profile and geofences give what the issue of an
// auto needs (the fiscal unit confirmed, the defence's addressee, verified sites) and the
// electronic notice, each labelled as a demonstration; the profile warns of nothing that blocks
// an issue.
func TestSettingsAllowTheIssue(t *testing.T) {
	f, err := Write(t.TempDir(), time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	p, err := profile.Load(f.Profile)
	if err != nil {
		t.Fatal(err)
	}
	if !p.FiscalUnit.Confirmed() {
		t.Errorf("fiscal unit not confirmed: %+v", p.FiscalUnit)
	}
	for what, v := range map[string]string{
		"fiscal_unit.confirmed_by": p.FiscalUnit.ConfirmedBy, "fiscal_unit.act": p.FiscalUnit.Act,
		"fiscal_unit.values[0].note": p.FiscalUnit.Values[0].Note, "defence.to": p.Defence.To,
		"defence.address": p.Defence.Address, "notification.electronic_act": p.Notification.ElectronicAct,
		"competence.fiscal_organ_act": p.Competence.FiscalOrganAct, "competence.authorities_act": p.Competence.AuthoritiesAct,
		"competence.telemetry_act": p.Competence.TelemetryAct,
	} {
		if !strings.Contains(v, Label) {
			t.Errorf("%s %q does not carry %q", what, v, Label)
		}
	}
	if !p.Notification.Electronic {
		t.Error("the electronic notice is off")
	}
	for _, y := range []int{2026, 2027} {
		if !p.HolidaysConfirmed(y) {
			t.Errorf("the holidays of %d are not confirmed", y)
		}
	}
	for _, c := range p.Holidays.Confirmed {
		if !strings.Contains(c.By, Label) || !strings.Contains(c.Act, Label) {
			t.Errorf("holidays' confirmation %+v does not carry %q", c, Label)
		}
	}
	for _, w := range p.Warnings() {
		if strings.Contains(w, "fiscal_unit") || strings.Contains(w, "defence") || strings.Contains(w, "competence") || strings.Contains(w, "holidays.confirmed") {
			t.Errorf("warning %q", w)
		}
	}
	set, err := geofences.Load(f.Geofences)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range []geofences.Kind{geofences.KindSensitive, geofences.KindNBRZone, geofences.KindBoardingPoint} {
		for _, ft := range set.OfKind(k) {
			n++
			if ft.Source == "sample" || !ft.Verified() || !strings.Contains(ft.VerifiedBy, Label) {
				t.Errorf("%s: source %q, verified by %q", ft.ID, ft.Source, ft.VerifiedBy)
			}
		}
	}
	if n < 5 {
		t.Errorf("%d sites", n)
	}
}

// TestUsers: one demonstration user for each role an auto's process needs, the agents
// identified (an auto names who issues and who decides it).
func TestUsers(t *testing.T) {
	roles, authorities := map[string]bool{}, 0
	for _, u := range Users() {
		roles[u.Role] = true
		if u.Role == "autoridade" {
			authorities++
		}
		if u.Role != "licensee" && (u.FullName == "" || u.Matricula == "" || u.Cargo == "") {
			t.Errorf("%s: agent incomplete: %+v", u.Name, u)
		}
		if u.Role == "licensee" && u.Licensee == "" {
			t.Errorf("%s: no licensee", u.Name)
		}
	}
	for _, r := range []string{"fiscal", "supervisor", "autoridade", "licensee"} {
		if !roles[r] {
			t.Errorf("no %s user", r)
		}
	}
	// The appeal is decided by the superior authority (appeal.decided_by: autoridade), never
	// by who decided the defence: two holders of the role.
	if authorities < 2 {
		t.Errorf("%d autoridade users: the appeal needs a superior authority besides who decides the defence", authorities)
	}
}

// The demonstration's monitor holds a draft awaiting an agent's verification for a short wait,
// not the monitor's default day, and prints the public URL it is given.
func TestMonitorEnv(t *testing.T) {
	f, err := Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	env := f.MonitorEnv("http://127.0.0.1:8080")
	for _, want := range []string{"TRENZINHO_PROFILE=" + f.Profile, "TRENZINHO_GEOFENCES=" + f.Geofences,
		"TRENZINHO_BASEMAP=" + f.Basemap, "TRENZINHO_DRAFT_VERIFICATION_WAIT=2m30s", "TRENZINHO_PUBLIC_URL=http://127.0.0.1:8080"} {
		if !slices.Contains(env, want) {
			t.Errorf("monitor environment %q lacks %q", env, want)
		}
	}
	for _, kv := range f.MonitorEnv("") {
		if strings.HasPrefix(kv, "TRENZINHO_PUBLIC_URL=") {
			t.Errorf("no public URL given, yet %q", kv)
		}
	}
}

// The demonstration's day opens the same episodes at any hour `make run` starts: every sensitive
// site of its geofences is either open day and night (the Pronto Atendimento, which the script
// passes) or closed for the demonstration, at every hour of a week, holidays included.
func TestDemoSitesDoNotDependOnTheHour(t *testing.T) {
	f, err := Write(t.TempDir(), time.Now())
	if err != nil {
		t.Fatal(err)
	}
	set, err := geofences.Load(f.Geofences)
	if err != nil {
		t.Fatal(err)
	}
	loc, _ := time.LoadLocation("America/Sao_Paulo")
	alwaysOpen := 0
	for _, ft := range set.Features() {
		if ft.Kind != geofences.KindSensitive {
			continue
		}
		var open, closed int
		for h := range 7 * 24 {
			for _, holiday := range []bool{false, true} {
				if ft.OpeningHours == nil || ft.OpeningHours.Open(time.Date(2026, 11, 30, h, 30, 0, 0, loc), holiday) {
					open++
				} else {
					closed++
				}
			}
		}
		switch {
		case closed == 0:
			alwaysOpen++
		case open != 0:
			t.Errorf("%s (%s) is open at some hours and not others: %d open, %d closed", ft.ID, ft.OpeningHours, open, closed)
		}
	}
	if alwaysOpen == 0 {
		t.Error("no site open day and night: the scripted loud pass would open nothing")
	}
}
