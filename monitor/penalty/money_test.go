package penalty

import (
	"math/big"
	"testing"
)

func TestRoundCents(t *testing.T) {
	cases := []struct {
		reais string
		cents string
		plain string
		br    string
	}{
		{"1103.085", "110309", "1103.09", "R$ 1.103,09"}, // half a centavo goes up
		{"1103.0849999", "110308", "1103.08", "R$ 1.103,08"},
		{"2.675", "268", "2.68", "R$ 2,68"}, // a float would hold 2.67499999…
		{"0.005", "1", "0.01", "R$ 0,01"},
		{"0.004", "0", "0.00", "R$ 0,00"},
		{"0", "0", "0.00", "R$ 0,00"},
		{"3360", "336000", "3360.00", "R$ 3.360,00"},
		{"1234567.891", "123456789", "1234567.89", "R$ 1.234.567,89"},
		{"1/3", "33", "0.33", "R$ 0,33"},
		{"2/3", "67", "0.67", "R$ 0,67"},
	}
	for _, c := range cases {
		r, _ := new(big.Rat).SetString(c.reais)
		got := roundCents(r)
		if got.String() != c.cents || formatCents(got, false) != c.plain || formatCents(got, true) != c.br {
			t.Errorf("%s: %s centavos, %q, %q; want %s, %q, %q", c.reais, got, formatCents(got, false), formatCents(got, true), c.cents, c.plain, c.br)
		}
	}
}

func TestParseDecimal(t *testing.T) {
	for _, s := range []string{"4.2000", "4", "0.5", "12345.678901"} {
		if _, err := parseDecimal(s); err != nil {
			t.Errorf("%q: %v", s, err)
		}
	}
	for _, s := range []string{"", "4.", ".5", "1e3", "-1", "+1", "1/3", "4,20", "4.2.0", " 4.2", "0x10"} {
		if r, err := parseDecimal(s); err == nil {
			t.Errorf("%q: parsed as %s", s, r)
		}
	}
}

func TestFormatUFMP(t *testing.T) {
	cases := map[float64]string{400: "400", 1000: "1.000", 12.5: "12,5", 0.1: "0,1", 2: "2", 1234567: "1.234.567"}
	for f, want := range cases {
		if got := formatUFMP(f); got != want {
			t.Errorf("%v: %q, want %q", f, got, want)
		}
	}
	// 0.1 is taken as the decimal it was written as, not its binary neighbour.
	if got := ratFromFloat(0.1); got.Cmp(big.NewRat(1, 10)) != 0 {
		t.Errorf("0.1 → %s", got)
	}
}
