package drafts_test

import (
	"slices"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
)

// A vehicle transferred from L1 to L2 on day D: a batch from D−1 that arrives late, after the
// transfer, is judged and drafted against L1, the licensee at the time of the fact; a batch of
// D against L2.
func TestLateBatchIsDraftedAgainstTheLicenseeOfItsDay(t *testing.T) {
	f := newRegFixture(t)
	v, _ := f.reg.Vehicle("PIU-002")
	v.Driver = "" // L1's driver goes with L1
	if _, err := f.reg.PutVehicle(v); err != nil {
		t.Fatal(err)
	}
	if err := f.reg.TransferVehicle("PIU-002", "L2", registry.MustDate("2026-11-27")); err != nil {
		t.Fatal(err)
	}
	v, _ = f.reg.Vehicle("PIU-002")
	if v.Licensee != "L2" || v.LicenseeSince.String() != "2026-11-27" || len(v.LicenseeHistory) != 1 ||
		v.LicenseeHistory[0].Licensee != "L1" || v.LicenseeHistory[0].ValidTo.String() != "2026-11-26" {
		t.Fatalf("after the transfer: %+v", v)
	}
	speeding := slices.Concat(slices.Repeat([]float64{20}, 20), slices.Repeat([]float64{45}, 30), slices.Repeat([]float64{20}, 150))
	f.play(t, "PIU-002", time.Date(2026, 11, 26, 15, 0, 0, 0, time.UTC), "", speeding) // D−1, 12:00 in Piúma
	f.seq += 1000                                                                      // another run of batches
	f.play(t, "PIU-002", time.Date(2026, 11, 27, 15, 0, 0, 0, time.UTC), "", speeding) // D
	got := map[string]string{}
	for _, m := range f.drafts(t) {
		if m.Draft.Rules[0] == rules.RuleSpeed {
			got[m.Draft.Start.In(time.UTC).Format(time.DateOnly)] = m.Draft.Licensee
		}
	}
	if got["2026-11-26"] != "L1" || got["2026-11-27"] != "L2" {
		t.Fatalf("licensees of the speed drafts by day: %v, want L1 on the 26th and L2 on the 27th", got)
	}
}

// A registry written before links had dates keeps each vehicle's licensee from the beginning.
func TestLicenseeLinkWithoutDatesIsFromTheBeginning(t *testing.T) {
	v := registry.Vehicle{ID: "PIU-001", Licensee: "L1"}
	if got := v.LicenseeOn(registry.MustDate("2018-01-01")); got != "L1" {
		t.Fatalf("licensee on 2018-01-01: %q", got)
	}
	v.LicenseeSince = registry.MustDate("2026-01-01")
	if got := v.LicenseeOn(registry.MustDate("2025-12-31")); got != "" {
		t.Fatalf("before the only link: %q", got)
	}
}
