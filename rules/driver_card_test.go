package rules

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/registry"
)

// driverRegistry: PIU-002 of L1; D1 of L1, D2 of L2, D4 of L1 whose removal was ordered on
// 2026-11-20.
func driverRegistry(t *testing.T) *registry.Store {
	t.Helper()
	d := registry.MustDate
	r := &registry.Registry{
		Licensees: []registry.Licensee{{ID: "L1", RazaoSocial: "Um Ltda", CNPJ: "11.222.333/0001-81"},
			{ID: "L2", RazaoSocial: "Dois Ltda", CNPJ: "11.444.777/0001-61"}},
		Vehicles: []registry.Vehicle{{ID: "PIU-002", Plate: "MTA1234", Licensee: "L1"}},
		Drivers: []registry.Driver{
			{ID: "D1", Name: "Maria", CPF: "123.456.789-09", TachographCard: "0000000086H101", Licensee: "L1"},
			{ID: "D2", Name: "João", CPF: "111.444.777-35", TachographCard: "0000000077B303", Licensee: "L2"},
			{ID: "D4", Name: "Ana", CPF: "529.982.247-25", TachographCard: "0000000055C505", Licensee: "L1",
				RemovalOrderedOn: d("2026-11-20")},
		},
	}
	s, err := registry.NewStore(r, "")
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestDriverUnregistered(t *testing.T) {
	reg := driverRegistry(t)
	for _, c := range []struct {
		name, card, detail string
	}{
		{"a card the registry does not know", "0000000099Z999", DriverNotRegistered},
		{"another licensee's driver", "0000000077B303", DriverOtherLicensee},
		{"the licensee's own driver", "0000000086H101", ""},
		{"no card", "", ""},
	} {
		r := docRun(t, reg)
		tr := newTrip(noon)
		tr.vehicle = "PIU-002"
		tr.service = ptr(true)
		r.apply(t, withCard(tr.batches(repeat(20, 180)...), c.card), time.Second)
		eps := r.rule(RuleDriverUnregistered)
		if c.detail == "" {
			if len(eps) != 0 {
				t.Errorf("%s: %d episodes", c.name, len(eps))
			}
			continue
		}
		if len(eps) != 1 || eps[0].Detail != c.detail || eps[0].Article != "Art. 19" || eps[0].Penalty != "Art. 47" || !eps[0].GroundsAuto {
			t.Errorf("%s: %+v", c.name, eps)
		}
	}
}

func TestDriverRemoved(t *testing.T) {
	reg := driverRegistry(t)
	for _, c := range []struct {
		day  time.Time
		want int
	}{
		{time.Date(2026, 11, 19, 15, 0, 0, 0, time.UTC), 0}, // the day before the order
		{time.Date(2026, 11, 20, 15, 0, 0, 0, time.UTC), 1},
	} {
		r := docRun(t, reg)
		tr := newTrip(c.day)
		tr.vehicle = "PIU-002"
		tr.service = ptr(true)
		r.apply(t, withCard(tr.batches(repeat(20, 180)...), "0000000055C505"), time.Second)
		eps := r.rule(RuleDriverRemoved)
		if len(eps) != c.want || c.want == 1 && (eps[0].Article != "Art. 45, III" || !eps[0].GroundsAuto) {
			t.Errorf("%s: %+v", c.day.Format(time.DateOnly), eps)
		}
	}
}
