package notice

import (
	"testing"

	"github.com/go-pdf/fpdf"
)

func TestPortugueseFormats(t *testing.T) {
	for in, want := range map[string]string{
		"3360.00": "R$ 3.360,00", "3360,5": "R$ 3.360,50", "4.2000": "R$ 4,20", "1234567": "R$ 1.234.567,00",
		"0.125": "R$ 0,125", "R$ 12": "R$ 12,00", "abc": "R$ abc",
	} {
		if got := money(in); got != want {
			t.Errorf("money(%q) = %q, want %q", in, got, want)
		}
	}
	if got := cnpj("11222333000181"); got != "11.222.333/0001-81" {
		t.Errorf("cnpj = %q", got)
	}
	for in, want := range map[string]string{
		"Mo-Fr 07:00-18:00; PH off": "seg. a sex. 07:00-18:00; feriados fechado",
		"Sa,Su 08:00-12:00":         "sáb.,dom. 08:00-12:00",
		"24/7":                      "todos os dias, 24 horas",
		"":                          "não cadastrado (o horário de funcionamento não é presumido)",
	} {
		if got := openingHours(in); got != want {
			t.Errorf("openingHours(%q) = %q, want %q", in, got, want)
		}
	}
	for n, want := range map[int]string{10: "dez", 15: "quinze", 30: "trinta", 45: "quarenta e cinco"} {
		if got := inWords(n); got != want {
			t.Errorf("inWords(%d) = %q", n, got)
		}
	}
	for s, want := range map[float64]string{19.4: "19,4 s", 124: "2 min 4 s", 120: "2 min", 3780: "1 h 03 min"} {
		if got := duration(s); got != want {
			t.Errorf("duration(%v) = %q, want %q", s, got, want)
		}
	}
	if got := coord(-40.7300001); got != "-40,730000" {
		t.Errorf("coord = %q", got)
	}
}

func TestCP1252(t *testing.T) {
	tr := cp1252(fpdf.New("P", "mm", "A4", ""))
	if got, want := tr("ção — nº ≥ 70 dB · r₁ 漢"), "\xe7\xe3o \x97 n\xba >= 70 dB \xb7 r1 ?"; got != want {
		t.Errorf("cp1252 = %q, want %q", got, want)
	}
}
