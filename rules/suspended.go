package rules

import "github.com/trenzinho/trenzinho/registry"

// suspendedRule flags a vehicle in service while its licensee's activity is suspended (the
// registry's licensee suspensions: a notice to suspend the activity, Lei 2.277/2018 Art. 42, or
// the suspension of the licence, Art. 52). Art. 42, parágrafo único: "Caso o prestador do
// serviço persista em transitar com o veículo antes de sanar a irregularidade, lavrar-se-á auto
// de apreensão ou retenção do veículo": the episode recommends the apreensão to the agent (the
// profile's notice), never automatic. The episode's detail is the suspension's reference.
// Not evaluated without a registry or a licensee.
type suspendedRule struct{}

func (suspendedRule) id() string { return RuleSuspendedCirculating }

// RuleSuspendedCirculating is the id of the rule.
const RuleSuspendedCirculating = "suspended_circulating"

func (suspendedRule) observe(e *Engine, v *Vehicle, r *reading) {
	if v.suspendedOn == nil {
		return
	}
	day := registry.DateOf(r.T.In(e.profile.Location()))
	var ref string
	cond, judged := inService(e, v, r, func() bool {
		p, ok := v.suspendedOn(v.Licensee, day)
		ref = p.Reference
		return ok
	})
	if !judged {
		return
	}
	stepInService(e, v, r, RuleSuspendedCirculating, cond, func(ep *Episode) { ep.Detail = ref })
}

// inService judges a condition of the registry while the vehicle is in service; judged is false
// when the reading is not judged at all.
func inService(e *Engine, v *Vehicle, r *reading, bad func() bool) (cond, judged bool) {
	if v.Licensee == "" {
		return false, false
	}
	if r.Tacho == nil && (r.GPS == nil || !r.Evidence) && r.Service == nil {
		return false, false
	}
	in, known := e.InService(v, r.T)
	if !known {
		return false, false
	}
	return in && bad(), true
}
