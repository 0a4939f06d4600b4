package registry

import (
	"reflect"
	"testing"
	"time"
)

// exampleNow is 2026-11-29 15:00 in Piúma (18:00 UTC).
var exampleNow = time.Date(2026, 11, 29, 18, 0, 0, 0, time.UTC)

const month = 30 * 24 * time.Hour

// storeWith is a store of one licensee, one vehicle and one driver whose items are all valid
// until the given dates.
func storeWith(t *testing.T, licence, inspection, tacho, cnh, medical string) *Store {
	t.Helper()
	d := func(s string) Date {
		if s == "" {
			return Date{}
		}
		return MustDate(s)
	}
	r := &Registry{
		Licensees: []Licensee{{ID: "L1", RazaoSocial: "X", CNPJ: "11222333000181",
			Documents: []Document{{Kind: DocLicenca, Number: "LIC-1", ValidUntil: d(licence)}}}},
		Vehicles: []Vehicle{{ID: "V1", Plate: "ABC1234", Licensee: "L1", RequiredCNHCategory: "D",
			Devices:   []Device{{Kind: DeviceTachograph, Serial: "T1", ValidUntil: d(tacho)}},
			Documents: []Document{{Kind: DocInspecao, Number: "VT-1", ValidUntil: d(inspection)}}}},
		Drivers: []Driver{{ID: "D1", Name: "Maria", CPF: "12345678909", Licensee: "L1", TachographCard: "0000000086H101",
			CNHCategory: "D", CNHValidUntil: d(cnh), MedicalCertificate: MedicalCertificate{ValidUntil: d(medical)}}},
	}
	s, err := NewStore(r, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

type item struct {
	doc      DocumentKind
	days     int
	expired  bool
	problems Problem
}

func items(es []Expiry) []item {
	var out []item
	for _, e := range es {
		out = append(out, item{e.Document, e.DaysLeft, e.Expired, e.Problem})
	}
	return out
}

func TestExpiringBoundaries(t *testing.T) {
	// Licence expired yesterday, inspection expires today, tachograph tomorrow, CNH in 30
	// days, medical certificate in 31.
	s := storeWith(t, "2026-11-28", "2026-11-29", "2026-11-30", "2026-12-29", "2026-12-30")
	got := items(s.Expiring(exampleNow, month))
	want := []item{
		{DocLicenca, -1, true, ProblemExpired},
		{DocInspecao, 0, false, ProblemExpiring},
		{DocAfericaoTacografo, 1, false, ProblemExpiring},
		{DocCNH, 30, false, ProblemExpiring},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("Expiring = %+v\nwant %+v", got, want)
	}
	// A window of 31 days takes the medical certificate in; no window, only what is due today.
	if got := s.Expiring(exampleNow, 31*24*time.Hour); len(got) != 5 {
		t.Errorf("31 days: %d items", len(got))
	}
	if got := items(s.Expiring(exampleNow, 0)); len(got) != 2 || got[1].doc != DocInspecao {
		t.Errorf("no window: %+v", got)
	}
}

func TestExpiringUsesLocalDay(t *testing.T) {
	s := storeWith(t, "2026-11-29", "", "", "", "")
	// 02:30 UTC on the 30th is still the 29th in Piúma (UTC−3): valid.
	late := time.Date(2026, 11, 30, 2, 30, 0, 0, time.UTC)
	if got := s.ExpiredFor("V1", "", late); len(got) != 0 {
		t.Errorf("expired at 23:30 local on its last day: %+v", got)
	}
	// 03:00 UTC is midnight in Piúma: expired.
	if got := s.ExpiredFor("V1", "", late.Add(30*time.Minute)); len(got) != 1 || got[0].Document != DocLicenca {
		t.Errorf("not expired at local midnight: %+v", got)
	}
	s.SetLocation(time.UTC)
	if got := s.ExpiredFor("V1", "", late); len(got) != 1 {
		t.Errorf("UTC location: %+v", got)
	}
}

func TestExpiringExample(t *testing.T) {
	s := openCopy(t)
	got := s.Expiring(exampleNow, month)
	type key struct {
		kind SubjectKind
		id   string
		doc  DocumentKind
	}
	var keys []key
	for _, e := range got {
		keys = append(keys, key{e.Subject.Kind, e.Subject.ID, e.Document})
	}
	want := []key{
		{SubjectVehicle, "PIU-003", DocInspecao}, // 2026-11-20, expired
		{SubjectLicensee, "L2", DocLicenca},      // 2026-12-20
		{SubjectVehicle, "PIU-001", DocCSV},      // 2026-12-28; the older CSV is history
	}
	if !reflect.DeepEqual(keys, want) {
		t.Errorf("Expiring(example) = %+v\nwant %+v", keys, want)
	}
	if !got[0].Expired || got[0].DaysLeft != -9 || got[0].Number != "VT-2025-031" {
		t.Errorf("PIU-003 inspection: %+v", got[0])
	}
}

func TestExpiredFor(t *testing.T) {
	// Everything expired yesterday except the licence.
	s := storeWith(t, "2027-01-01", "2026-11-28", "2026-11-28", "2026-11-28", "2026-11-28")
	got := s.ExpiredFor("V1", "0000000086H10100", exampleNow)
	want := []item{ // by date, then subject kind (device, driver, licensee, vehicle)
		{DocAfericaoTacografo, -1, true, ProblemExpired},
		{DocAtestadoMedico, -1, true, ProblemExpired},
		{DocCNH, -1, true, ProblemExpired},
		{DocInspecao, -1, true, ProblemExpired},
	}
	if g := items(got); !reflect.DeepEqual(g, want) {
		t.Errorf("ExpiredFor = %+v\nwant %+v", g, want)
	}
	for _, e := range got {
		if e.Subject.Kind == SubjectDriver && (e.Subject.ID != "D1" || e.Number != "") {
			t.Errorf("driver item %+v", e)
		}
		if e.Subject.Kind == SubjectDevice && (e.Subject.Vehicle != "V1" || e.Subject.ID != "T1" || e.Subject.Device != DeviceTachograph) {
			t.Errorf("device item %+v", e)
		}
	}
	// Without a card, or with an unknown one, the driver is not judged.
	if g := items(s.ExpiredFor("V1", "", exampleNow)); len(g) != 2 {
		t.Errorf("no card: %+v", g)
	}
	if g := items(s.ExpiredFor("V1", "0000000099X999", exampleNow)); len(g) != 2 {
		t.Errorf("unknown card: %+v", g)
	}
	// An unknown vehicle is not judged.
	if g := s.ExpiredFor("V9", "0000000086H101", exampleNow); g != nil {
		t.Errorf("unknown vehicle: %+v", g)
	}
	// On its last valid day nothing has expired.
	if g := s.ExpiredFor("V1", "0000000086H101", time.Date(2026, 11, 28, 23, 0, 0, 0, DefaultLocation)); len(g) != 0 {
		t.Errorf("last valid day: %+v", g)
	}
}

func TestExpiredForCategory(t *testing.T) {
	s := storeWith(t, "", "", "", "2030-01-01", "")
	r := s.Snapshot()
	r.Drivers[0].CNHCategory = "B"
	if err := s.Replace(r); err != nil {
		t.Fatal(err)
	}
	got := s.ExpiredFor("V1", "86H101", exampleNow)
	if len(got) != 1 || got[0].Problem != ProblemCategory || got[0].Document != DocCNH || got[0].Expired || got[0].Detail == "" {
		t.Errorf("category: %+v", got)
	}
	r.Drivers[0].CNHCategory = "AE"
	if err := s.Replace(r); err != nil {
		t.Fatal(err)
	}
	if got := s.ExpiredFor("V1", "86H101", exampleNow); len(got) != 0 {
		t.Errorf("AE covers D: %+v", got)
	}
}

func TestDocumentHistory(t *testing.T) {
	s := storeWith(t, "2026-01-01", "", "", "", "")
	r := s.Snapshot()
	// A renewal: the newer licence counts, in whatever order.
	r.Licensees[0].Documents = append([]Document{{Kind: DocLicenca, Number: "LIC-2", ValidUntil: MustDate("2027-06-01")}},
		r.Licensees[0].Documents...)
	if err := s.Replace(r); err != nil {
		t.Fatal(err)
	}
	if got := s.ExpiredFor("V1", "", exampleNow); len(got) != 0 {
		t.Errorf("renewed licence reported: %+v", got)
	}
	// A licence with no end date does not expire.
	r.Licensees[0].Documents = []Document{{Kind: DocLicenca, ValidUntil: MustDate("2026-01-01")}, {Kind: DocLicenca}}
	if err := s.Replace(r); err != nil {
		t.Fatal(err)
	}
	if got := s.Expiring(exampleNow, month); len(got) != 0 {
		t.Errorf("open-ended licence reported: %+v", got)
	}
}
