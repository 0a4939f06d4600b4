package registry

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// A vehicle's assigned driver must be a registered driver of its licensee; a driver assigned to
// a vehicle cannot be deleted; the file keeps the assignment.
func TestAssignedDriver(t *testing.T) {
	s := openCopy(t)
	v, _ := s.Vehicle("PIU-001")
	for _, c := range []struct{ driver, want string }{
		{"D9", `condutor "D9" não cadastrado`},
		{"D3", "é do licenciado L2"},
	} {
		v.Driver = c.driver
		_, err := s.PutVehicle(v)
		fes := FieldErrors(err)
		if !errors.Is(err, ErrInvalid) || len(fes) != 1 || fes[0].Record != "vehicles[PIU-001]" || fes[0].Field != "driver" ||
			!strings.Contains(fes[0].Msg, c.want) {
			t.Errorf("driver %s: %v", c.driver, err)
		}
	}
	v.Driver = " D1 "
	if _, err := s.PutVehicle(v); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.Vehicle("PIU-001"); got.Driver != "D1" {
		t.Errorf("driver %q, want D1", got.Driver)
	}
	err := s.DeleteDriver("D1")
	if !errors.Is(err, ErrInUse) || !strings.Contains(err.Error(), "PIU-001") {
		t.Errorf("deleting an assigned driver: %v", err)
	}
	again, err := Load(s.Path())
	if err != nil {
		t.Fatal(err)
	}
	if again.Vehicles[0].Driver != "D1" {
		t.Errorf("the file has driver %q", again.Vehicles[0].Driver)
	}
	b, _ := os.ReadFile(s.Path())
	if !strings.Contains(string(b), "driver: D1") {
		t.Errorf("file:\n%s", b)
	}
}

func TestLabels(t *testing.T) {
	day := MustDate("2026-11-29")
	cases := []struct {
		e    Expiry
		want string
	}{
		{Expiry{ValidUntil: MustDate("2026-11-20"), DaysLeft: -9, Problem: ProblemExpired}, "vencido: válido até 20/11/2026 (há 9 dias)"},
		{Expiry{ValidUntil: MustDate("2026-11-28"), DaysLeft: -1, Problem: ProblemExpired}, "vencido: válido até 28/11/2026 (há 1 dia)"},
		{Expiry{ValidUntil: day, DaysLeft: 0, Problem: ProblemExpiring}, "vence hoje (válido até 29/11/2026)"},
		{Expiry{ValidUntil: day.AddDays(1), DaysLeft: 1, Problem: ProblemExpiring}, "vence amanhã (válido até 30/11/2026)"},
		{Expiry{ValidUntil: day.AddDays(30), DaysLeft: 30, Problem: ProblemExpiring}, "vence em 30 dias (válido até 29/12/2026)"},
		{Expiry{Problem: ProblemCategory, Detail: "CNH categoria B"}, "CNH categoria B"},
	}
	for _, c := range cases {
		if got := c.e.Status(); got != c.want {
			t.Errorf("Status() = %q, want %q", got, c.want)
		}
	}
	if got := (Subject{Kind: SubjectDevice, ID: "PCE-1", Vehicle: "PIU-001", Device: DeviceSLM}).Label(); got != "decibelímetro nº PCE-1 (veículo PIU-001)" {
		t.Errorf("device label %q", got)
	}
	if DocInspecao.Label() != "inspeção técnica veicular" || DocumentKind("x").Label() != "x" {
		t.Error("document labels")
	}
	if (Date{}).FormatBR() != "" || DateOf(time.Date(2026, 1, 2, 0, 0, 0, 0, time.UTC)).FormatBR() != "02/01/2026" {
		t.Error("FormatBR")
	}
}
