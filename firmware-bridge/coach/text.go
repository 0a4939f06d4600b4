package coach

import (
	"fmt"
	"strings"
)

// categoryName is the site category as the driver reads it.
var categoryName = map[string]string{
	"hospital":      "HOSPITAL",
	"health":        "UNIDADE DE SAÚDE",
	"school":        "ESCOLA",
	"library":       "BIBLIOTECA",
	"public_office": "REPARTIÇÃO PÚBLICA",
	"church":        "IGREJA",
}

// documentName is a document kind (the registry's) as the driver reads it.
var documentName = map[string]string{
	"licenca":            "LICENÇA",
	"csv":                "CSV",
	"inspecao":           "LAUDO DE VISTORIA",
	"afericao_tacografo": "AFERIÇÃO DO TACÓGRAFO",
}

// Text is a warning as the local page shows it, in Portuguese and upper case, short enough to
// read at a glance: "ESCOLA A 180 m — ABAIXE O SOM", "31 km/h — LIMITE 30".
func Text(a Active) string {
	n := func(x float64) string { return fmt.Sprintf("%.0f", x) }
	switch a.Kind {
	case KindSiteSound:
		site := categoryName[a.SiteCategory]
		if site == "" {
			site = "LOCAL PROTEGIDO"
		}
		return site + " A " + n(a.DistanceM) + " m — ABAIXE O SOM"
	case KindSpeedOver:
		return n(a.Value) + " km/h — LIMITE " + n(a.Limit)
	case KindSpeedNear:
		return n(a.Value) + " km/h — PERTO DO LIMITE " + n(a.Limit)
	case KindHoursEnd:
		return "O HORÁRIO DE SERVIÇO TERMINA EM " + n(a.Value) + " min"
	case KindItinerary:
		return "FORA DO ITINERÁRIO — " + n(a.Value) + " m DA ROTA"
	case KindDocument:
		doc := documentName[a.Document[strings.IndexByte(a.Document, ':')+1:]]
		if doc == "" {
			doc = "DOCUMENTO"
		}
		switch {
		case a.Value < 0:
			return doc + " — PRAZO VENCIDO"
		case a.Value == 0:
			return doc + " VENCE HOJE"
		case a.Value == 1:
			return doc + " VENCE AMANHÃ"
		}
		return doc + " VENCE EM " + n(a.Value) + " DIAS"
	}
	return strings.ToUpper(string(a.Kind))
}
