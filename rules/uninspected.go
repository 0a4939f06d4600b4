package rules

import (
	"strings"

	"github.com/trenzinho/trenzinho/registry"
)

// uninspectedRule flags a vehicle in service after it failed an inspection, or after an accident
// that compromised its safety, before an approved inspection released it (registry vehicle
// events). Lei 2.277/2018 Art. 32 §3: "Os veículos não aprovados em inspeção ficarão
// impossibilitados de trafegar, podendo voltar a circular quando sanadas as irregularidades e
// após liberação do vistoriador"; Art. 33: after an accident, "antes de colocar o veículo
// novamente em circulação, deverá submetê-lo a nova inspeção técnica"; fined by Art. 45, VI
// ("não submeter o veículo à inspeção técnica depois de realizado algum reparo, ou que tenha
// sofrido acidente que comprometa a segurança"). The detail is the event's kind and date. Not
// evaluated without a registry or a licensee.
type uninspectedRule struct{}

func (uninspectedRule) id() string { return RuleUninspectedCirculating }

// RuleUninspectedCirculating is the id of the rule.
const RuleUninspectedCirculating = "uninspected_circulating"

func (uninspectedRule) observe(e *Engine, v *Vehicle, r *reading) {
	if v.uninspectedOn == nil {
		return
	}
	day := registry.DateOf(r.T.In(e.profile.Location()))
	var detail string
	cond, judged := inService(e, v, r, func() bool {
		ev, ok := v.uninspectedOn(day)
		detail = ev.Kind + " " + ev.Date.String()
		return ok
	})
	if !judged {
		return
	}
	stepInService(e, v, r, RuleUninspectedCirculating, cond, func(ep *Episode) {
		ep.Detail = detail
		if strings.HasPrefix(detail, registry.EventAccident+" ") {
			// The rule's mapping is the failed inspection's (Art. 32 § 3º c/c Art. 47); an
			// accident on record is Art. 45, VI, another article and penalty: the agent's.
			ep.noGround(noteUninspectedAccident)
		}
	})
}

// noteUninspectedAccident is the grounds note of circulating after an accident on record.
const noteUninspectedAccident = "circulação após acidente registrado: a infração é a do Art. 45, VI (não submeter o veículo à inspeção técnica depois de acidente), não a do Art. 32, § 3º; autuação manual pelo agente"
