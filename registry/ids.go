package registry

import (
	"errors"
	"fmt"
	"strings"
)

// CPF

// errCPFFormat is returned for a CPF of the wrong shape. CPF errors never quote the number: they
// may end up in logs.
var errCPFFormat = errors.New("CPF em formato inválido (use 000.000.000-00 ou 11 dígitos)")

// ParseCPF validates a CPF (Cadastro de Pessoas Físicas) number, formatted ("123.456.789-09") or
// not ("12345678909"), and returns it unformatted. The two check digits are the Receita
// Federal's modulo-11 digits; numbers of eleven equal digits, whose check digits are right but
// which are never issued, are rejected.
func ParseCPF(s string) (string, error) {
	s = strings.TrimSpace(s)
	var c string
	switch len(s) {
	case 11:
		c = s
	case 14:
		if s[3] != '.' || s[7] != '.' || s[11] != '-' {
			return "", errCPFFormat
		}
		c = s[0:3] + s[4:7] + s[8:11] + s[12:14]
	default:
		return "", errCPFFormat
	}
	for i := range len(c) {
		if !isDigit(c[i]) {
			return "", errCPFFormat
		}
	}
	if allSame(c) {
		return "", errors.New("CPF inválido (todos os dígitos iguais)")
	}
	dv, _ := CPFCheckDigits(c[:9])
	if c[9:] != dv {
		return "", errors.New("CPF inválido: dígitos verificadores não conferem")
	}
	return c, nil
}

// CPFCheckDigits returns the two check digits of the nine-digit base of a CPF.
func CPFCheckDigits(base string) (string, error) {
	if len(base) != 9 {
		return "", errors.New("CPF: a base tem 9 dígitos")
	}
	for i := range len(base) {
		if !isDigit(base[i]) {
			return "", errors.New("CPF: a base tem 9 dígitos")
		}
	}
	d1 := mod11(base, digitValue)
	d2 := mod11(base+string(rune('0'+d1)), digitValue)
	return string([]byte{byte('0' + d1), byte('0' + d2)}), nil
}

// FormatCPF writes an unformatted CPF as 000.000.000-00. Anything else is returned unchanged.
func FormatCPF(cpf string) string {
	if len(cpf) != 11 {
		return cpf
	}
	return cpf[0:3] + "." + cpf[3:6] + "." + cpf[6:9] + "-" + cpf[9:11]
}

// MaskCPF hides the first three and the last two digits of a CPF, in the style of the federal
// transparency portal: ***.456.789-**. Anything that is not an 11-digit CPF is masked whole.
func MaskCPF(cpf string) string {
	if len(cpf) != 11 {
		return "***"
	}
	return "***." + cpf[3:6] + "." + cpf[6:9] + "-**"
}

// CNPJ

// ParseCNPJ validates a CNPJ (Cadastro Nacional da Pessoa Jurídica) number and returns it
// unformatted and in upper case. It accepts the numeric CNPJ and the alphanumeric CNPJ the
// Receita Federal issues from July 2026 (IN RFB 2.229/2024): twelve characters 0–9 or A–Z
// (eight of the root, four of the branch) and two numeric check digits, formatted
// ("12.ABC.345/01DE-35") or not ("12ABC34501DE35"); lower-case letters are taken as upper case.
// Numbers of fourteen equal characters are rejected.
func ParseCNPJ(s string) (string, error) {
	s = strings.TrimSpace(s)
	var c string
	switch len(s) {
	case 14:
		c = s
	case 18:
		if s[2] != '.' || s[6] != '.' || s[10] != '/' || s[15] != '-' {
			return "", fmt.Errorf("CNPJ %q: formato inválido (use 00.000.000/0000-00 ou 14 caracteres)", s)
		}
		c = s[0:2] + s[3:6] + s[7:10] + s[11:15] + s[16:18]
	default:
		return "", fmt.Errorf("CNPJ %q: formato inválido (use 00.000.000/0000-00 ou 14 caracteres)", s)
	}
	c = upperASCII(c)
	for i := range 12 {
		if !isDigit(c[i]) && !isUpper(c[i]) {
			return "", fmt.Errorf("CNPJ %q: caractere inválido %q (só 0–9 e A–Z)", s, c[i])
		}
	}
	if !isDigit(c[12]) || !isDigit(c[13]) {
		return "", fmt.Errorf("CNPJ %q: os dígitos verificadores são numéricos", s)
	}
	if allSame(c) {
		return "", fmt.Errorf("CNPJ %q: inválido (todos os caracteres iguais)", s)
	}
	dv, _ := CNPJCheckDigits(c[:12])
	if c[12:] != dv {
		return "", fmt.Errorf("CNPJ %q: dígitos verificadores não conferem", s)
	}
	return c, nil
}

// CNPJCheckDigits returns the two check digits of the twelve-character base of a CNPJ, numeric
// or alphanumeric (upper case). Each character counts as its ASCII code minus 48 ('0' is 0,
// 'A' is 17, 'Z' is 42); weights 2 to 9 are given from the right and repeat; a remainder
// modulo 11 below 2 gives 0, any other r gives 11 − r. For a numeric base this is the
// traditional algorithm.
func CNPJCheckDigits(base string) (string, error) {
	if len(base) != 12 {
		return "", errors.New("CNPJ: a base tem 12 caracteres")
	}
	for i := range len(base) {
		if !isDigit(base[i]) && !isUpper(base[i]) {
			return "", errors.New("CNPJ: a base tem só 0–9 e A–Z")
		}
	}
	d1 := mod11Cycling(base)
	d2 := mod11Cycling(base + string(rune('0'+d1)))
	return string([]byte{byte('0' + d1), byte('0' + d2)}), nil
}

// FormatCNPJ writes an unformatted CNPJ as 00.000.000/0000-00. Anything else is returned
// unchanged.
func FormatCNPJ(cnpj string) string {
	if len(cnpj) != 14 {
		return cnpj
	}
	return cnpj[0:2] + "." + cnpj[2:5] + "." + cnpj[5:8] + "/" + cnpj[8:12] + "-" + cnpj[12:14]
}

// mod11 is the CPF check digit of s: weights len(s)+1 down to 2.
func mod11(s string, value func(byte) int) int {
	sum := 0
	for i := range len(s) {
		sum += value(s[i]) * (len(s) + 1 - i)
	}
	return digitOf(sum % 11)
}

// mod11Cycling is the CNPJ check digit of s: weights 2…9 from the right, repeating.
func mod11Cycling(s string) int {
	sum, w := 0, 2
	for i := len(s) - 1; i >= 0; i-- {
		sum += (int(s[i]) - '0') * w
		if w++; w > 9 {
			w = 2
		}
	}
	return digitOf(sum % 11)
}

// digitOf is the check digit of a remainder modulo 11.
func digitOf(r int) int {
	if r < 2 {
		return 0
	}
	return 11 - r
}

func digitValue(c byte) int { return int(c - '0') }

// Plates

// ParsePlate validates a Brazilian licence plate and returns it in upper case without
// separators. It accepts the old format ABC1234 (also written ABC-1234) and the Mercosul format
// ABC1D23; a hyphen or a space between the letters and the digits is allowed.
func ParsePlate(s string) (string, error) {
	p := upperASCII(strings.TrimSpace(s))
	if len(p) == 8 && (p[3] == '-' || p[3] == ' ') {
		p = p[:3] + p[4:]
	}
	if len(p) != 7 || !isUpper(p[0]) || !isUpper(p[1]) || !isUpper(p[2]) || !isDigit(p[3]) ||
		!(isDigit(p[4]) || isUpper(p[4])) || !isDigit(p[5]) || !isDigit(p[6]) {
		return "", fmt.Errorf("placa %q inválida (formatos ABC1234 ou Mercosul ABC1D23)", s)
	}
	return p, nil
}

// FormatPlate writes a plate as it is printed: ABC-1234 for the old format, ABC1D23 for the
// Mercosul format.
func FormatPlate(plate string) string {
	if len(plate) == 7 && isDigit(plate[4]) {
		return plate[:3] + "-" + plate[3:]
	}
	return plate
}

// Tachograph cards

// NormalizeCard is a driver card number as the registry stores it: spaces removed and letters
// in upper case, leading zeros kept (they are printed on the card).
func NormalizeCard(s string) string {
	return upperASCII(strings.ReplaceAll(strings.TrimSpace(s), " ", ""))
}

// cardKeys are the keys under which a card number matches (see CardsMatch): the number without
// leading zeros and, for a 16-character number, its first 14 characters without leading zeros.
// A key is empty when the number is all zeros.
func cardKeys(card string) (full, ident string) {
	c := NormalizeCard(card)
	full = strings.TrimLeft(c, "0")
	if len(c) == 16 {
		ident = strings.TrimLeft(c[:14], "0")
	}
	return full, ident
}

// CardsMatch reports whether two driver card numbers name the same driver. Tachographs report a
// card in different lengths: the 14-character driver identification ("0000000086H101"), the
// 16-character card number that adds the replacement and renewal indexes ("0000000086H10100"),
// or the identification padded with zeros on the left to 16 characters ("000000000086H101").
// Two numbers match when, after removing spaces, taking letters as upper case and removing
// leading zeros, they are equal, or when one of them has 16 characters and its first 14 match
// the other (or the other's first 14). An all-zero number matches nothing.
func CardsMatch(a, b string) bool {
	af, ai := cardKeys(a)
	bf, bi := cardKeys(b)
	for _, x := range []string{af, ai} {
		for _, y := range []string{bf, bi} {
			if x != "" && x == y {
				return true
			}
		}
	}
	return false
}

// validCard reports whether a normalized card number is 1 to 32 characters 0–9 and A–Z, not
// all zeros.
func validCard(c string) bool {
	if len(c) == 0 || len(c) > 32 || strings.Trim(c, "0") == "" {
		return false
	}
	for i := range len(c) {
		if !isDigit(c[i]) && !isUpper(c[i]) {
			return false
		}
	}
	return true
}

// CNH

// CNH categories (Código de Trânsito Brasileiro, Art. 143).
var cnhCategories = []string{"A", "B", "C", "D", "E", "AB", "AC", "AD", "AE"}

// ValidCNHCategory reports whether c is a CNH category: A, B, C, D, E, AB, AC, AD or AE.
func ValidCNHCategory(c string) bool {
	for _, k := range cnhCategories {
		if c == k {
			return true
		}
	}
	return false
}

// CNHCovers reports whether a driver licensed in category have may drive a vehicle that needs
// category need. C, D and E each include the lower categories from B (a D licence drives B and C
// vehicles); A (two and three wheels) is separate, so AD covers A, B, C and D.
func CNHCovers(have, need string) bool {
	if !ValidCNHCategory(have) || !ValidCNHCategory(need) {
		return false
	}
	hasA := strings.Contains(have, "A")
	var top byte // highest of B–E held, 0 if none
	for i := range len(have) {
		if have[i] != 'A' && have[i] > top {
			top = have[i]
		}
	}
	for i := range len(need) {
		switch n := need[i]; {
		case n == 'A':
			if !hasA {
				return false
			}
		case top < n:
			return false
		}
	}
	return true
}

// helpers

func isDigit(c byte) bool { return '0' <= c && c <= '9' }
func isUpper(c byte) bool { return 'A' <= c && c <= 'Z' }

// upperASCII upper-cases ASCII letters only.
func upperASCII(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

func allSame(s string) bool {
	return s != "" && strings.Count(s, s[:1]) == len(s)
}
