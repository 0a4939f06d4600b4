package penalty

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Money is exact: amounts are big.Rat from decimal text and are rounded once, to the centavo,
// at the end. A float never holds an amount of reais.

// parseDecimal parses a plain decimal, digits with an optional point and more digits ("4.2000").
func parseDecimal(s string) (*big.Rat, error) {
	whole, frac, _ := strings.Cut(s, ".")
	if whole == "" || strings.Contains(s, ".") && frac == "" || !digits(whole) || !digits(frac) {
		return nil, fmt.Errorf("not a plain decimal: %q", s)
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("not a plain decimal: %q", s)
	}
	return r, nil
}

func digits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// ratFromFloat returns the decimal a float64 from the profile was written as: the shortest
// decimal that reads back as f, so 0.1 is exactly 1/10 and not the binary value next to it.
func ratFromFloat(f float64) *big.Rat {
	r, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'f', -1, 64))
	return r
}

// roundCents returns r (≥ 0, in reais) in centavos, rounded half-up: half a centavo or more
// goes up.
func roundCents(r *big.Rat) *big.Int {
	// floor((100·num + den/2) / den) = floor((200·num + den) / (2·den))
	num := new(big.Int).Mul(r.Num(), big.NewInt(200))
	num.Add(num, r.Denom())
	den := new(big.Int).Mul(r.Denom(), big.NewInt(2))
	return num.Quo(num, den)
}

// formatCents writes centavos as "3360.00", or in the Brazilian way as "R$ 3.360,00".
func formatCents(c *big.Int, br bool) string {
	s := c.String()
	for len(s) < 3 {
		s = "0" + s
	}
	whole, frac := s[:len(s)-2], s[len(s)-2:]
	if !br {
		return whole + "." + frac
	}
	return "R$ " + group(whole) + "," + frac
}

// formatUFMP writes an amount of fiscal units the Brazilian way: "1.000", "12,5".
func formatUFMP(f float64) string { return formatRat(ratFromFloat(f)) }

// formatRat writes an exact decimal the Brazilian way, with every decimal it has (up to 10).
func formatRat(r *big.Rat) string {
	s := strings.TrimRight(strings.TrimRight(r.FloatString(10), "0"), ".")
	whole, frac, ok := strings.Cut(s, ".")
	if !ok {
		return group(whole)
	}
	return group(whole) + "," + frac
}

// group puts a point between groups of three digits: "1234567" → "1.234.567".
func group(s string) string {
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	return b.String()
}
