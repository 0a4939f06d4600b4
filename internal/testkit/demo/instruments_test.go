package demo

import (
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/registry"
)

// TestInstrumentsVerifiedForTheIssue: on the demonstration's day every measuring instrument of
// the demonstration registry (tachographs, sound-level meters) has a verification dated before
// it and valid for a month after, so that `make run` issues a speed auto (instrument_unverified
// otherwise); and PIU-003's expired inspection has a date set by the organ that passed without
// submission, so that its document_expired episode grounds an Art. 45, IV auto.
func TestInstrumentsVerifiedForTheIssue(t *testing.T) {
	now := time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC)
	f, err := Write(t.TempDir(), now)
	if err != nil {
		t.Fatal(err)
	}
	reg, err := registry.Load(f.Registry)
	if err != nil {
		t.Fatal(err)
	}
	day := registry.DateOf(now)
	measuring := 0
	for _, v := range reg.Vehicles {
		for _, d := range v.Devices {
			if d.Kind != registry.DeviceTachograph && d.Kind != registry.DeviceSLM {
				continue
			}
			measuring++
			verified := d.INMETROVerification
			if verified.IsZero() {
				verified = d.Calibration
			}
			if verified.IsZero() || day.Before(verified) || d.ValidUntil.Before(day.AddDays(30)) {
				t.Errorf("%s %s %s: verified %s, valid until %s", v.ID, d.Kind, d.Serial, verified, d.ValidUntil)
			}
		}
	}
	if measuring < 4 {
		t.Errorf("%d measuring instruments", measuring)
	}
	for _, v := range reg.Vehicles {
		_, overdue := v.InspectionOverdue(day)
		if overdue != (v.ID == "PIU-003") {
			t.Errorf("%s: inspection overdue %v", v.ID, overdue)
		}
	}
}
