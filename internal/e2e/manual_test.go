package e2e

import (
	"context"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/internal/testkit/testenv"
	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
)

// issueManual issues, through the office of the auto over db, a manual notice (art16) of the
// registry's vehicle observed at offence, issued at issued by an identified agent, with the
// licensee's identification from reg — all the issue gate asks of it. p is confirmed in place
// (the UFMP value, the acts of competence, the holidays), as a profile that issues must be.
func issueManual(t *testing.T, db *store.DB, reg *registry.Store, p *profile.Profile, vehicle string, offence, issued time.Time) *cases.Case {
	t.Helper()
	v, ok := reg.Vehicle(vehicle)
	if !ok {
		t.Fatalf("vehicle %s not in the registry", vehicle)
	}
	l, ok := reg.Licensee(v.Licensee)
	if !ok {
		t.Fatalf("licensee %s not in the registry", v.Licensee)
	}
	o := &cases.Office{Ledger: db, Profile: testenv.ConfirmedProfile(p), Now: func() time.Time { return issued }}
	c, err := o.IssueManual(context.Background(), store.ManualNotice{Vehicle: vehicle, Licensee: l.ID, LicenseeName: l.RazaoSocial,
		LicenseeCNPJ: l.CNPJ, LicenseeAddress: l.Address, Infractions: []string{"art16"}, Offence: offence,
		ManualDetails: store.ManualDetails{Place: "Avenida Beira-Mar", Description: "Passageiros em pé no veículo.", Agent: "joao"}},
		store.Actor{User: "joao", Role: store.RoleFiscal, Agent: cases.Agent{FullName: "João Teste", Matricula: "T-1", Cargo: "Fiscal de Posturas"}})
	if err != nil {
		t.Fatalf("manual notice of %s: %v", vehicle, err)
	}
	return c
}
