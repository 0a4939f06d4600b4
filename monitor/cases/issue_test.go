package cases

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func codes(rs []Reason) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

func TestIssueBlockers(t *testing.T) {
	loc, _ := time.LoadLocation("America/Sao_Paulo")
	now := time.Date(2026, 11, 29, 15, 0, 0, 0, loc)
	ok := IssueFacts{Licensee: &Licensee{ID: "L1", RazaoSocial: "Trenzinho Ltda", CNPJ: "11222333000181", Address: "Av. Beira-Mar, 1000"},
		Sites: []Site{{ID: "s1", Name: "Escola", Verified: true, Source: "survey"}}, UnitName: "UFMP", UnitConfirmed: true, UnitChecked: true,
		Integrity: "ok", FactEnd: now.AddDate(0, 0, -3), PrescriptionYears: 5, Now: now, Location: loc,
		User: "joao", Agent: Agent{FullName: "João", Matricula: "1", Cargo: "Fiscal"}, Plate: "ABC1D23", PlateChecked: true}
	if rs := IssueBlockers(ok); len(rs) != 0 {
		t.Fatalf("nothing blocks, got %+v", rs)
	}
	for _, c := range []struct {
		name string
		edit func(*IssueFacts)
		want []string
		text string
	}{
		{"no licensee", func(f *IssueFacts) { f.Licensee = nil }, []string{ReasonLicenseeUnidentified}, "Art. 48, § 2º"},
		{"unregistered", func(f *IssueFacts) { f.Licensee, f.Unregistered = nil, true }, []string{ReasonLicenseeUnidentified}, "Veículo não cadastrado"},
		{"no address", func(f *IssueFacts) { l := *f.Licensee; l.Address, l.CNPJ = "", ""; f.Licensee = &l }, []string{ReasonLicenseeUnidentified}, "CNPJ e endereço"},
		{"sample site", func(f *IssueFacts) { f.Sites = []Site{{ID: "s", Name: "X", Verified: true, Source: "sample"}} }, []string{ReasonSiteUnverified}, "source: sample"},
		{"unverified site", func(f *IssueFacts) { f.Sites = []Site{{ID: "s", Name: "X"}} }, []string{ReasonSiteUnverified}, "não verificado por agente"},
		{"UFMP", func(f *IssueFacts) { f.UnitConfirmed = false }, []string{ReasonUFMPUnconfirmed}, "fiscal_unit.confirmed_by"},
		{"UFMP not checked", func(f *IssueFacts) { f.UnitConfirmed, f.UnitChecked = false, false }, nil, ""},
		{"integrity", func(f *IssueFacts) { f.Integrity = "hash não confere" }, []string{ReasonIntegrityBroken}, "hash não confere"},
		{"prescribed to the day", func(f *IssueFacts) { f.FactEnd = now.AddDate(-5, 0, 0) }, []string{ReasonPrescribed}, "29/11/2026"},
		{"a day before prescription", func(f *IssueFacts) { f.FactEnd = now.AddDate(-5, 0, 1) }, nil, ""},
		{"3 years", func(f *IssueFacts) { f.PrescriptionYears, f.FactEnd = 3, now.AddDate(-4, 0, 0) }, []string{ReasonPrescribed}, "3 anos"},
		{"agent", func(f *IssueFacts) { f.Agent.Matricula, f.Agent.Cargo = " ", "" }, []string{ReasonAgentIncomplete}, "matrícula e cargo"},
		{"grounds", func(f *IssueFacts) { f.GroundsMissing = []string{"O episódio E1 não fundamenta um auto."} }, []string{ReasonGroundsMissing}, "E1"},
		{"no plate", func(f *IssueFacts) { f.Plate = " " }, []string{ReasonVehicleUnidentified}, "placa"},
		{"plate not checked", func(f *IssueFacts) { f.Plate, f.PlateChecked = "", false }, nil, ""},
		{"before the facts end", func(f *IssueFacts) { f.FactEnd = now.Add(time.Second) }, []string{ReasonIssueBeforeFacts}, "29/11/2026 15:00:01"},
		{"as the facts end", func(f *IssueFacts) { f.FactEnd = now }, nil, ""},
		{"all at once", func(f *IssueFacts) {
			f.Licensee, f.Integrity, f.UnitConfirmed, f.Agent, f.User = nil, "x", false, Agent{}, "u"
		}, []string{ReasonIntegrityBroken, ReasonLicenseeUnidentified, ReasonUFMPUnconfirmed, ReasonAgentIncomplete}, ""},
	} {
		f := ok
		c.edit(&f)
		rs := IssueBlockers(f)
		if !slices.Equal(codes(rs), c.want) {
			t.Errorf("%s: codes %v, want %v", c.name, codes(rs), c.want)
			continue
		}
		if c.text != "" && !strings.Contains(rs[0].Text, c.text) {
			t.Errorf("%s: text %q lacks %q", c.name, rs[0].Text, c.text)
		}
	}
	if s := Summary([]Reason{{Text: "Falta algo."}}); s != "O auto não pode ser emitido: Falta algo." {
		t.Errorf("summary %q", s)
	}
}
