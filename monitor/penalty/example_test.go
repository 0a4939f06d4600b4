package penalty_test

import (
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/profile"
)

func ExampleFine() {
	p := profile.Piuma()
	p.FiscalUnit.Values = []profile.UnitValue{{From: "2026-01-01", BRL: "4.2000"}} // R$ per UFMP
	loc := p.Location()
	// An earlier speeding fine of the same licensee, handed over on Monday 2026-10-05 and not
	// defended: final when the period ran out, on 2026-10-15.
	earlier := penalty.Notice{
		ID: "0001/2026", Vehicle: "PIU-001", Licensee: "Trens da Alegria Ltda.",
		Articles: []string{"Art. 23"}, Penalty: "Art. 46, X",
		Offence:  time.Date(2026, 10, 1, 16, 0, 0, 0, loc),
		Issued:   time.Date(2026, 10, 2, 0, 0, 0, 0, loc),
		Notified: time.Date(2026, 10, 5, 0, 0, 0, 0, loc), Mode: penalty.ModeInPerson,
		Status: penalty.StatusConfirmed,
	}
	r, err := penalty.Fine(p, "speed", time.Date(2026, 12, 10, 15, 0, 0, 0, loc), time.Date(2026, 12, 14, 10, 0, 0, 0, loc),
		[]penalty.Notice{earlier}, "Trens da Alegria Ltda.")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(r.BaseUFMP, r.Factor, r.TotalUFMP, r.TotalBRL)
	fmt.Println(r.SuspensionRecommended.MinDays, r.SuspensionRecommended.MaxDays)
	for _, s := range r.Explanation {
		fmt.Println(s)
	}
	// Output:
	// 400 2 800 3360.00
	// 10 45
	// Infração: Art. 23 (dirigir o veículo desenvolvendo velocidade acima da permitida), punida pelo Art. 46, X.
	// Multa prevista: 400 UFMP (Art. 46, X).
	// Reincidência (Art. 48, § 1º): o prestador Trens da Alegria Ltda. já havia sido multado pelo mesmo preceito (Art. 23) — auto 0001/2026 (fato de 01/10/2026; prazo de defesa esgotado em 15/10/2026 sem defesa). Contam multas definitivas — prazo de defesa esgotado sem defesa tempestiva, ou defesa indeferida — antes da data do fato.
	// Em caso de reincidência a multa é aplicada em dobro (Art. 48): 400 × 2 = 800 UFMP.
	// Valor da UFMP vigente na data de emissão, 14/12/2026: R$ 4,2000, desde 01/01/2026 (Art. 44).
	// Valor da multa: 800 UFMP × R$ 4,2000 = R$ 3.360,00 (calculado exatamente e arredondado ao centavo, meio centavo para cima).
	// Reincidência específica (Art. 52): o prestador Trens da Alegria Ltda. já havia sido multado pelo mesmo preceito (Art. 23) — auto 0001/2026 (fato de 01/10/2026). Recomenda-se ao agente a suspensão da licença por 10 a 45 dias (Art. 52, parágrafo único); a decisão é da autoridade competente.
}

func ExampleDefenceDeadline() {
	p := profile.Piuma()
	notified := time.Date(2026, 11, 12, 10, 0, 0, 0, p.Location()) // a Thursday
	deadline, why := penalty.DefenceDeadline(p, notified, penalty.ModeInPerson, time.Time{})
	fmt.Println(deadline.Format(time.DateOnly))
	fmt.Println(why)
	fmt.Println(penalty.DefenceTimely(deadline, time.Date(2026, 11, 23, 17, 0, 0, 0, p.Location())))
	// Output:
	// 2026-11-23
	// Prazo de defesa (Art. 55): 10 dias corridos contados da entrega do auto em mãos em 12/11/2026, excluído o dia do recebimento; o último dia é 22/11/2026 (domingo). Não sendo dia útil, o prazo termina no primeiro dia útil seguinte: 23/11/2026 (segunda-feira).
	// true
}
