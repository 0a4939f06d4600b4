package rules

import "github.com/trenzinho/trenzinho/registry"

// driverRemovedRule flags a vehicle in service driven (by its tachograph card) by a driver
// whose removal the public authority ordered (Lei 2.277/2018 Art. 45, III: "manter em serviço
// condutor cujo afastamento tenha sido exigido pelo Poder Público"), from the day the registry
// records the order (registry driver removal_ordered_on). As driver_unregistered otherwise.
type driverRemovedRule struct{}

func (driverRemovedRule) id() string { return RuleDriverRemoved }

// RuleDriverRemoved is the id of the rule.
const RuleDriverRemoved = "driver_removed"

func (driverRemovedRule) observe(e *Engine, v *Vehicle, r *reading) {
	day := registry.DateOf(r.T.In(e.profile.Location()))
	cond, judged := driverStep(e, v, r, func(card string) bool {
		d, ok := v.driverByCard(card)
		return ok && !d.RemovalOrderedOn.IsZero() && !day.Before(d.RemovalOrderedOn)
	})
	if !judged {
		return
	}
	stepInService(e, v, r, RuleDriverRemoved, cond, func(*Episode) {})
}
