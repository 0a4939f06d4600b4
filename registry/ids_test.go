package registry

import (
	"strings"
	"testing"
)

func TestParseCPF(t *testing.T) {
	valid := []struct{ in, want string }{
		{"123.456.789-09", "12345678909"},
		{"12345678909", "12345678909"},
		{" 987.654.321-00 ", "98765432100"},
		{"111.444.777-35", "11144477735"},
		{"52998224725", "52998224725"},
	}
	for _, c := range valid {
		got, err := ParseCPF(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseCPF(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	invalid := []string{
		"",
		"123.456.789-08", // wrong second digit
		"123.456.789-19", // wrong first digit
		"12345678900",    // wrong digits
		"000.000.000-00", // all equal, digits "valid"
		"11111111111",    // all equal
		"99999999999",    // all equal
		"1234567890",     // too short
		"123456789090",   // too long
		"123-456.789.09", // separators misplaced
		"123.456.789/09", // wrong separator
		"1234567890A",    // letter
		"123.456.78909",  // partly formatted
		"１２３4567890９",    // not ASCII
	}
	for _, in := range invalid {
		if got, err := ParseCPF(in); err == nil {
			t.Errorf("ParseCPF(%q) = %q, want an error", in, got)
		} else if in != "" && strings.Contains(err.Error(), in) {
			t.Errorf("ParseCPF(%q): error %q quotes the number", in, err)
		}
	}
}

func TestCPFCheckDigits(t *testing.T) {
	for base, want := range map[string]string{"123456789": "09", "987654321": "00", "111444777": "35", "529982247": "25"} {
		if got, err := CPFCheckDigits(base); err != nil || got != want {
			t.Errorf("CPFCheckDigits(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
	for _, base := range []string{"", "12345678", "1234567890", "12345678A"} {
		if _, err := CPFCheckDigits(base); err == nil {
			t.Errorf("CPFCheckDigits(%q): no error", base)
		}
	}
}

func TestParseCNPJ(t *testing.T) {
	valid := []struct{ in, want string }{
		// The Receita Federal's example of the alphanumeric CNPJ (IN RFB 2.229/2024).
		{"12.ABC.345/01DE-35", "12ABC34501DE35"},
		{"12ABC34501DE35", "12ABC34501DE35"},
		{"12.abc.345/01de-35", "12ABC34501DE35"},
		{"12abc34501de35", "12ABC34501DE35"},
		// Numeric CNPJs: the traditional algorithm is the same one.
		{"11.222.333/0001-81", "11222333000181"},
		{"11222333000181", "11222333000181"},
		{"11.444.777/0001-61", "11444777000161"},
		{" 11222333000262 ", "11222333000262"},
	}
	for _, c := range valid {
		got, err := ParseCNPJ(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseCNPJ(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	invalid := []string{
		"",
		"12.ABC.345/01DE-36",  // wrong second digit
		"12.ABC.345/01DE-45",  // wrong first digit
		"12ABC34501DF35",      // a character changed
		"11.222.333/0001-82",  // wrong digit
		"11222333000180",      // wrong digit
		"00.000.000/0000-00",  // all equal
		"AAAAAAAAAAAAAA",      // all equal (and letters in the check digits)
		"12ABC34501DE3A",      // letter in the check digits
		"12.ABC.345/01DE35",   // partly formatted
		"12-ABC-345/01DE.35",  // separators misplaced
		"12ABC34501DE3",       // too short
		"12ABC34501DE355",     // too long
		"12ABÇ34501DE35",      // not A–Z
		"12AB*34501DE35",      // symbol
		"12.ABC.345/01DE-35x", // trailing junk
	}
	for _, in := range invalid {
		if got, err := ParseCNPJ(in); err == nil {
			t.Errorf("ParseCNPJ(%q) = %q, want an error", in, got)
		}
	}
}

func TestCNPJCheckDigits(t *testing.T) {
	for base, want := range map[string]string{
		"12ABC34501DE": "35", // IN RFB 2.229/2024 example
		"112223330001": "81",
		"114447770001": "61",
	} {
		if got, err := CNPJCheckDigits(base); err != nil || got != want {
			t.Errorf("CNPJCheckDigits(%q) = %q, %v; want %q", base, got, err, want)
		}
	}
	for _, base := range []string{"", "12ABC34501D", "12abc34501de", "12ABC34501D-"} {
		if _, err := CNPJCheckDigits(base); err == nil {
			t.Errorf("CNPJCheckDigits(%q): no error", base)
		}
	}
}

func TestFormat(t *testing.T) {
	if got := FormatCNPJ("12ABC34501DE35"); got != "12.ABC.345/01DE-35" {
		t.Errorf("FormatCNPJ = %q", got)
	}
	if got := FormatCPF("12345678909"); got != "123.456.789-09" {
		t.Errorf("FormatCPF = %q", got)
	}
	if got := MaskCPF("12345678909"); got != "***.456.789-**" {
		t.Errorf("MaskCPF = %q", got)
	}
	if got := MaskCPF("123"); got != "***" {
		t.Errorf("MaskCPF(short) = %q", got)
	}
	if got := FormatPlate("MTA1234"); got != "MTA-1234" {
		t.Errorf("FormatPlate(old) = %q", got)
	}
	if got := FormatPlate("ABC1D23"); got != "ABC1D23" {
		t.Errorf("FormatPlate(Mercosul) = %q", got)
	}
}

func TestParsePlate(t *testing.T) {
	valid := []struct{ in, want string }{
		{"ABC1234", "ABC1234"},
		{"ABC-1234", "ABC1234"},
		{"abc 1234", "ABC1234"},
		{"ABC1D23", "ABC1D23"},
		{"abc1d23", "ABC1D23"},
		{"ABC-1D23", "ABC1D23"},
		{" MTA1234 ", "MTA1234"},
	}
	for _, c := range valid {
		got, err := ParsePlate(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParsePlate(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"", "AB1234", "ABCD123", "ABC12345", "ABC1DD3", "1BC1234", "ABC-12D3",
		"ABC--1234", "ABC_1234", "ABC1D2", "ÁBC1234", "ABC12D3"} {
		if got, err := ParsePlate(in); err == nil {
			t.Errorf("ParsePlate(%q) = %q, want an error", in, got)
		}
	}
}

func TestCardsMatch(t *testing.T) {
	const card = "0000000086H101" // the simulator's card
	match := []string{
		"0000000086H101",   // as printed (14: driver identification)
		"86H101",           // without leading zeros
		"0000000086h101",   // lower case
		" 0000000086H101 ", // spaces
		"0000000086H10100", // 16: identification + replacement and renewal indexes (Stoneridge)
		"0000000086H10112", // a replacement card of the same driver
		"000000000086H101", // 16: padded on the left (VDO)
		"0086H101",
	}
	for _, m := range match {
		if !CardsMatch(card, m) || !CardsMatch(m, card) {
			t.Errorf("CardsMatch(%q, %q) = false", card, m)
		}
	}
	nomatch := []string{"", "0000000000000000", "0000000086H102", "0000000086H1", "86H1010", "1000000086H101",
		"0000000086H10", "0000000186H10100"}
	for _, m := range nomatch {
		if CardsMatch(card, m) || CardsMatch(m, card) {
			t.Errorf("CardsMatch(%q, %q) = true", card, m)
		}
	}
	if CardsMatch("", "") || CardsMatch("000", "0") {
		t.Error("empty or all-zero numbers match")
	}
}

func TestCNHCovers(t *testing.T) {
	cases := []struct {
		have, need string
		want       bool
	}{
		{"D", "D", true}, {"E", "D", true}, {"D", "C", true}, {"D", "B", true}, {"C", "D", false},
		{"B", "D", false}, {"AD", "D", true}, {"AD", "A", true}, {"AE", "AD", true}, {"D", "AD", false},
		{"A", "B", false}, {"B", "A", false}, {"AB", "AB", true}, {"E", "E", true}, {"AC", "D", false},
		{"X", "D", false}, {"D", "", false}, {"", "D", false},
	}
	for _, c := range cases {
		if got := CNHCovers(c.have, c.need); got != c.want {
			t.Errorf("CNHCovers(%q, %q) = %v, want %v", c.have, c.need, got, c.want)
		}
	}
}

func TestAbbreviateName(t *testing.T) {
	for in, want := range map[string]string{
		"Maria Aparecida dos Santos": "Maria A. S.",
		"João Carlos Ferreira":       "João C. F.",
		"Ana Paula de Oliveira":      "Ana P. O.",
		"  José   e  Silva ":         "José S.",
		"Ícaro élio":                 "Ícaro É.",
		"Pelé":                       "Pelé",
		"":                           "",
	} {
		if got := AbbreviateName(in); got != want {
			t.Errorf("AbbreviateName(%q) = %q, want %q", in, got, want)
		}
	}
}
