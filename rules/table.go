package rules

import (
	"slices"

	"github.com/trenzinho/trenzinho/profile"
)

// RuleInfo is how people see a rule: its name in Portuguese (notices, the dashboard), its short
// label (the fleet page's chips), its colour (charts and the map) and the chart its evidence is
// drawn on in a notice.
type RuleInfo struct {
	ID    string `json:"id"`
	Name  string `json:"name"`
	Short string `json:"short"`
	Color string `json:"color"`
	// Chart is the kind of chart a notice draws for the rule: ChartSpeed, ChartSound or
	// ChartNone (the facts say it all: hours, documents, drivers).
	Chart string `json:"chart"`
	// NoLimit: the limit of the rule's episodes is no limit of the law their value broke, only
	// the threshold from which the rule judges (telemetry_fault: the GPS speed from which a
	// tachograph must be reporting, gps_min_kmh). The dashboard and the notifications show the
	// value without it: "22 km/h (limite 10 km/h)" would say a limit was exceeded.
	NoLimit bool `json:"no_limit,omitempty"`
}

// Chart kinds.
const (
	ChartSpeed = "speed"
	ChartSound = "sound"
	ChartNone  = "none"
)

// Table is the one table of the rules' ids and what people see of them; the dashboard reads it
// from GET /api/v1/config (rule_labels), the notices from Info. TestRuleTable fails when a rule
// of the engine lacks its entry, its legal text in the profile or its description in drafts.
var Table = []RuleInfo{
	{RuleSpeed, "Excesso de velocidade", "Velocidade", "#d64545", ChartSpeed, false},
	{RuleHours, "Funcionamento fora do horário permitido", "Horário", "#7d5ba6", ChartNone, false},
	{RuleSensitiveZoneSound, "Emissão sonora próxima a local protegido", "Local sensível", "#e07a10", ChartSound, false},
	{RuleBoardingSound, "Emissão sonora no embarque e desembarque", "Embarque", "#c9a227", ChartSound, false},
	{RuleNoiseLimit, "Nível sonoro acima do limite da norma", "Ruído NBR", "#d35d90", ChartSound, false},
	{RuleRouteDeviation, "Circulação fora do itinerário autorizado", "Itinerário", "#2f7ed8", ChartNone, false},
	{RuleParkedPublicRoad, "Veículo estacionado em via pública", "Estacionado", "#5d6d7e", ChartNone, false},
	{RuleTelemetryFault, "Falha da saída de dados do tacógrafo", "Telemetria", "#17a2b8", ChartSpeed, true},
	{profile.DocumentExpiredRule, "Documento vencido", "Documento", "#8d6e63", ChartNone, false},
	{RuleServiceSwitchSuspect, "Chave de serviço desligada em comportamento de serviço", "Chave de serviço", "#6c757d", ChartNone, false},
	{RuleDriverUnregistered, "Condutor não cadastrado ou de outro licenciado", "Condutor", "#a0522d", ChartNone, false},
	{RuleDriverRemoved, "Condutor com afastamento exigido", "Afastado", "#8b0000", ChartNone, false},
	{RuleSuspendedCirculating, "Circulação durante a suspensão da atividade", "Suspenso", "#4b0082", ChartNone, false},
	{RuleRotationConflict, "Itinerário de outro licenciado no dia do rodízio", "Rodízio", "#1e6f5c", ChartNone, false},
	{RuleUninspectedCirculating, "Circulação sem inspeção após reprovação ou acidente", "Sem inspeção", "#556b2f", ChartNone, false},
	{RuleBoardingOutsidePoints, "Embarque e desembarque fora dos pontos demarcados", "Fora do ponto", "#b5651d", ChartNone, false},
	{RuleSpeedOutOfService, "Velocidade acima do limite fora de serviço (alerta operacional, CTB)", "Veloc. fora de serviço", "#9e9e9e", ChartSpeed, false},
}

// Info returns the table's entry of a rule.
func Info(id string) (RuleInfo, bool) {
	i := slices.IndexFunc(Table, func(r RuleInfo) bool { return r.ID == id })
	if i < 0 {
		return RuleInfo{}, false
	}
	return Table[i], true
}

// RuleIDs lists the ids of the rules the engine applies, in its order.
func (e *Engine) RuleIDs() []string {
	ids := make([]string, 0, len(e.rules))
	for _, r := range e.rules {
		ids = append(ids, r.id())
	}
	return ids
}
