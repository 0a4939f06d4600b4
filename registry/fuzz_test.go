package registry

import (
	"strings"
	"testing"
)

// FuzzCNPJ checks that ParseCNPJ never panics and that whatever it accepts is canonical, has
// the check digits of its base and reads back the same formatted, unformatted and in lower case.
func FuzzCNPJ(f *testing.F) {
	for _, s := range []string{"12.ABC.345/01DE-35", "12ABC34501DE35", "11.222.333/0001-81", "00000000000000",
		"12.abc.345/01de-35", "12ABC34501DE3A", "", "..../-", "12ABÇ34501DE35"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCNPJ(s)
		if err != nil {
			return
		}
		if len(c) != 14 || strings.Trim(c[:12], "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ") != "" ||
			strings.Trim(c[12:], "0123456789") != "" {
			t.Fatalf("ParseCNPJ(%q) = %q: not canonical", s, c)
		}
		if dv, err := CNPJCheckDigits(c[:12]); err != nil || dv != c[12:] {
			t.Fatalf("ParseCNPJ(%q) = %q: check digits %q, %v", s, c, dv, err)
		}
		for _, in := range []string{c, FormatCNPJ(c), strings.ToLower(FormatCNPJ(c))} {
			if c2, err := ParseCNPJ(in); err != nil || c2 != c {
				t.Fatalf("ParseCNPJ(%q) = %q, %v; want %q", in, c2, err, c)
			}
		}
	})
}

// FuzzCPF does the same for ParseCPF, and checks that its errors never depend on the input (so
// that they never quote a CPF).
func FuzzCPF(f *testing.F) {
	for _, s := range []string{"123.456.789-09", "12345678909", "111.111.111-11", "123.456.789-00", "",
		"123.456.789/09", "1234567890A"} {
		f.Add(s)
	}
	messages := map[string]bool{}
	for _, s := range []string{"1", "11111111111", "12345678900"} {
		_, err := ParseCPF(s)
		messages[err.Error()] = true
	}
	f.Fuzz(func(t *testing.T, s string) {
		c, err := ParseCPF(s)
		if err != nil {
			if !messages[err.Error()] {
				t.Fatalf("ParseCPF(%q): error %q depends on the input", s, err)
			}
			return
		}
		if len(c) != 11 || strings.Trim(c, "0123456789") != "" || allSame(c) {
			t.Fatalf("ParseCPF(%q) = %q: not canonical", s, c)
		}
		if dv, err := CPFCheckDigits(c[:9]); err != nil || dv != c[9:] {
			t.Fatalf("ParseCPF(%q) = %q: check digits %q, %v", s, c, dv, err)
		}
		for _, in := range []string{c, FormatCPF(c)} {
			if c2, err := ParseCPF(in); err != nil || c2 != c {
				t.Fatalf("ParseCPF(%q) = %q, %v; want %q", in, c2, err, c)
			}
		}
		if m := MaskCPF(c); m != "***."+c[3:6]+"."+c[6:9]+"-**" {
			t.Fatalf("MaskCPF(%q) = %q", c, m)
		}
	})
}
