package notice_test

import (
	"strings"
	"testing"
	"time"

	"github.com/trenzinho/trenzinho/monitor/notice"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

// The calculus made at issue, as the notice states it.
func TestPenaltyOf(t *testing.T) {
	p := profile.Piuma()
	loc := p.Location()
	issued := time.Date(2026, 10, 2, 1, 0, 0, 0, time.UTC) // 1 October in Piúma
	earlier := penalty.Notice{ID: "AI-2026/0001", Licensee: "L1", Articles: []string{"Art. 23"}, Penalty: "Art. 46, X",
		Offence: time.Date(2026, 9, 1, 15, 0, 0, 0, loc), Issued: time.Date(2026, 9, 2, 10, 0, 0, 0, loc), Status: penalty.StatusConfirmed,
		Final: time.Date(2026, 9, 14, 12, 0, 0, 0, loc)}
	res, err := penalty.Fine(p, "speed", time.Date(2026, 9, 30, 15, 0, 0, 0, loc), issued, []penalty.Notice{earlier}, "L1")
	if err != nil {
		t.Fatal(err)
	}
	pe := notice.PenaltyOf(&res, "L1", issued, loc)
	if pe.FineUFMP != 800 || pe.FineBRL != "3360.00" || pe.UnitValueBRL != "4.2000" || pe.UnitDate.Format("02/01/2006") != "01/10/2026" {
		t.Errorf("fine %+v", pe)
	}
	if !strings.HasPrefix(pe.Recidivism, "Sim (Art. 48)") || !strings.Contains(pe.Recidivism, "auto nº AI-2026/0001 (fato de 01/09/2026, emitido em 02/09/2026)") {
		t.Errorf("recidivism %q", pe.Recidivism)
	}
	if !strings.Contains(pe.Recommendation, "suspensão da licença por 10 a 45 dias") {
		t.Errorf("recommendation %q", pe.Recommendation)
	}

	res, err = penalty.Fine(p, "speed", time.Date(2026, 9, 30, 15, 0, 0, 0, loc), issued, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	pe = notice.PenaltyOf(&res, "", issued, loc)
	if !strings.HasPrefix(pe.Recidivism, "Não verificada") || pe.FineBRL != "1680.00" || !strings.HasPrefix(pe.Recommendation, "Nenhuma") {
		t.Errorf("unregistered %+v", pe)
	}
}
