package registry

import (
	"errors"
	"testing"
	"time"
)

// A licensee change through PutVehicle keeps the old link until the day before; a history that
// overlaps or outlives the current link is refused.
func TestLicenseeLinkHistory(t *testing.T) {
	r := validRegistry()
	r.Licensees = append(r.Licensees, Licensee{ID: "L9", RazaoSocial: "Outra Ltda", CNPJ: "11444777000161"})
	for i := range r.Drivers {
		r.Drivers[i].Licensee = "L1"
	}
	s, err := NewStore(r, "")
	if err != nil {
		t.Fatal(err)
	}
	id := r.Vehicles[0].ID
	v, _ := s.Vehicle(id)
	old := v.Licensee
	v.Licensee, v.Driver = "L9", ""
	if _, err := s.PutVehicle(v); err != nil {
		t.Fatal(err)
	}
	v, _ = s.Vehicle(id)
	today := DateOf(time.Now().In(registryZone))
	if v.LicenseeSince != today || len(v.LicenseeHistory) != 1 || v.LicenseeHistory[0].Licensee != old ||
		v.LicenseeHistory[0].ValidTo != today.AddDays(-1) || v.LicenseeOn(today.AddDays(-1)) != old || v.LicenseeOn(today) != "L9" {
		t.Fatalf("after the change: %+v", v)
	}
	// An edit that does not mention the history keeps it.
	v.LicenseeHistory = nil
	v.Plate = "XYZ9A87"
	if _, err := s.PutVehicle(v); err != nil {
		t.Fatal(err)
	}
	if v, _ = s.Vehicle(id); len(v.LicenseeHistory) != 1 {
		t.Fatalf("history lost by an edit: %+v", v)
	}
	bad := v
	bad.LicenseeHistory = []LicenseeLink{{Licensee: old, ValidTo: today}}
	if _, err := s.PutVehicle(bad); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a past link that outlives the current one: %v", err)
	}
	bad.LicenseeHistory = []LicenseeLink{{Licensee: "L404", ValidTo: today.AddDays(-1)}}
	if _, err := s.PutVehicle(bad); !errors.Is(err, ErrInvalid) {
		t.Fatalf("a past link to an unknown licensee: %v", err)
	}
}
