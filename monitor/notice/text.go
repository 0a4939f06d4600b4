package notice

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/go-pdf/fpdf"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/rules"
)

// cp1252 returns a function that turns UTF-8 text into the cp1252 bytes of fpdf's core fonts.
// A few characters outside cp1252 that our texts may carry get a close equivalent; any other
// becomes "?". fpdf's translator keeps a buffer: one per document, never shared.
func cp1252(pdf *fpdf.Fpdf) func(string) string {
	base := pdf.UnicodeTranslatorFromDescriptor("")
	near := strings.NewReplacer(
		"≥", ">=", "≤", "<=", "≠", "!=", "−", "-", "→", "->", "←", "<-", "₁", "1", "₂", "2",
		"\u00a0", " ", "\u2009", " ", "\u202f", " ", "Σ", "soma", "√", "raiz",
	)
	return func(s string) string {
		s = near.Replace(s)
		ascii := true
		for i := 0; i < len(s); i++ {
			if s[i] >= utf8.RuneSelf {
				ascii = false
				break
			}
		}
		if ascii {
			return s
		}
		var b strings.Builder
		for _, r := range s {
			if r < utf8.RuneSelf {
				b.WriteRune(r)
				continue
			}
			c := base(string(r))
			if c == "." {
				c = "?"
			}
			b.WriteString(c)
		}
		return b.String()
	}
}

// num is drafts.Num: Brazilian decimal comma, no trailing zeros.
func num(x float64, digits int) string { return drafts.Num(x, digits) }

// coord formats a coordinate with 6 decimals and a decimal comma.
func coord(x float64) string {
	return strings.Replace(fmt.Sprintf("%.6f", x), ".", ",", 1)
}

// duration says a number of seconds the Portuguese way: "45 s", "2 min 5 s", "1 h 03 min".
func duration(s float64) string {
	if s < 60 {
		return num(s, 1) + " s"
	}
	total := int(math.Round(s))
	h, m, sec := total/3600, total%3600/60, total%60
	if h > 0 {
		return fmt.Sprintf("%d h %02d min", h, m)
	}
	if sec == 0 {
		return fmt.Sprintf("%d min", m)
	}
	return fmt.Sprintf("%d min %d s", m, sec)
}

var weekdays = [...]string{"domingo", "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado"}

func date(t time.Time) string     { return t.Format("02/01/2006") }
func clock(t time.Time) string    { return t.Format("15:04:05") }
func dateTime(t time.Time) string { return t.Format("02/01/2006 15:04:05") }

// utcOffset names a zone offset as "UTC-03:00".
func utcOffset(t time.Time) string {
	_, off := t.Zone()
	sign := "+"
	if off < 0 {
		sign, off = "-", -off
	}
	return fmt.Sprintf("UTC%s%02d:%02d", sign, off/3600, off%3600/60)
}

var smallNumbers = [...]string{"zero", "um", "dois", "três", "quatro", "cinco", "seis", "sete", "oito", "nove", "dez",
	"onze", "doze", "treze", "quatorze", "quinze", "dezesseis", "dezessete", "dezoito", "dezenove", "vinte"}

var tens = [...]string{"", "", "vinte", "trinta", "quarenta", "cinquenta", "sessenta", "setenta", "oitenta", "noventa"}

// inWords writes a number of days in full, as laws do ("10 (dez)"), for 0–99.
func inWords(n int) string {
	switch {
	case n < 0 || n > 99:
		return ""
	case n <= 20:
		return smallNumbers[n]
	case n%10 == 0:
		return tens[n/10]
	default:
		return tens[n/10] + " e " + smallNumbers[n%10]
	}
}

// money formats a decimal string in reais: "3360.5" or "3360,50" → "R$ 3.360,50". A string that
// is not a plain decimal is printed as given.
func money(s string) string {
	s = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(s), "R$"))
	if s == "" {
		return ""
	}
	intPart, frac := s, ""
	if i := strings.IndexAny(s, ".,"); i >= 0 && strings.Count(s, ".")+strings.Count(s, ",") == 1 {
		intPart, frac = s[:i], s[i+1:]
	}
	neg := strings.HasPrefix(intPart, "-")
	intPart = strings.TrimPrefix(intPart, "-")
	if !digits(intPart) || !digits(frac) && frac != "" {
		return "R$ " + s
	}
	for len(frac) < 2 {
		frac += "0"
	}
	for len(frac) > 2 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	var b strings.Builder
	for i, c := range intPart {
		if i > 0 && (len(intPart)-i)%3 == 0 {
			b.WriteByte('.')
		}
		b.WriteRune(c)
	}
	sign := ""
	if neg {
		sign = "-"
	}
	return "R$ " + sign + b.String() + "," + frac
}

func digits(s string) bool {
	if s == "" {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// cnpj formats a 14-character CNPJ (numeric or alphanumeric) as 00.000.000/0000-00.
func cnpj(s string) string {
	if len(s) != 14 || strings.ContainsAny(s, "./-") {
		return s
	}
	return s[0:2] + "." + s[2:5] + "." + s[5:8] + "/" + s[8:12] + "-" + s[12:14]
}

var (
	ohDays  = map[string]string{"Mo": "seg.", "Tu": "ter.", "We": "qua.", "Th": "qui.", "Fr": "sex.", "Sa": "sáb.", "Su": "dom.", "PH": "feriados"}
	ohDayRE = regexp.MustCompile(`\b(Mo|Tu|We|Th|Fr|Sa|Su|PH)\b`)
	ohRange = regexp.MustCompile(`(seg\.|ter\.|qua\.|qui\.|sex\.|sáb\.|dom\.)-(seg\.|ter\.|qua\.|qui\.|sex\.|sáb\.|dom\.)`)
	ohOff   = regexp.MustCompile(`\boff\b`)
)

// openingHours puts the OpenStreetMap opening_hours subset of the geofences in Portuguese:
// "Mo-Fr 07:00-18:00; PH off" → "seg. a sex. 07:00-18:00; feriados fechado".
func openingHours(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return "não cadastrado (o horário de funcionamento não é presumido)"
	}
	s = strings.ReplaceAll(s, "24/7", "todos os dias, 24 horas")
	s = ohDayRE.ReplaceAllStringFunc(s, func(d string) string { return ohDays[d] })
	s = ohRange.ReplaceAllString(s, "$1 a $2")
	s = ohOff.ReplaceAllString(s, "fechado")
	return s
}

var siteSources = map[string]string{
	"survey": "levantamento em campo", "osm": "OpenStreetMap", "sample": "dados de exemplo",
	"registry": "cadastro municipal", "manual": "cadastro manual",
}

func siteSource(s string) string {
	if v, ok := siteSources[s]; ok {
		return v
	}
	if s == "" {
		return "não informada"
	}
	return s
}

var categories = map[string]string{
	"hospital": "hospital", "health": "estabelecimento de saúde", "school": "estabelecimento de ensino",
	"library": "biblioteca", "public_office": "repartição pública", "church": "igreja",
}

// ruleName is the rule's name in rules.Table, the one table of the rules' ids.
func ruleName(id string) string {
	if info, ok := rules.Info(id); ok {
		return info.Name
	}
	return "Regra " + id
}

var closedReasons = map[string]string{
	"cleared":     "condição cessou",
	"interrupted": "interrupção dos dados do veículo",
}

func closedReason(s string) string {
	if s == "" {
		return "em aberto"
	}
	if v, ok := closedReasons[s]; ok {
		return v
	}
	return s
}

// instrument names the source of a measurement.
var instruments = map[string]string{
	"tacho": "tacógrafo (saída de dados D8)",
	"gps":   "receptor GPS",
	"slm":   "decibelímetro (medidor de nível sonoro)",
	"clock": "horário dos registros (equipamento de bordo)",
	"sound": "decibelímetro (medidor de nível sonoro)",
	"door":  "entrada da porta de passageiros (equipamento de bordo)",
}

func instrument(s string) string {
	if v, ok := instruments[s]; ok {
		return v
	}
	if s == "" {
		return "não informado"
	}
	return s
}

// quantity says what an instrument measured.
var quantities = map[string]string{
	"tacho": "velocidade", "gps": "posição e velocidade", "slm": "nível sonoro", "clock": "horário",
	"door": "abertura da porta de passageiros",
}

// unitTolerance is the unit of a tolerance of a value in unit: a tolerance in decibels is not
// A-weighted.
func unitTolerance(unit string) string {
	if unit == "dB(A)" {
		return "dB"
	}
	return unit
}
