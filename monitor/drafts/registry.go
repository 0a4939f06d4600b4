package drafts

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/registry"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// register completes a draft with what the registry says when it is made (Config.Registry):
// the licensee, the vehicle and its measuring devices, r₁, and the driver — by the card the
// tachograph reported during the facts, else the driver the registry assigns to the vehicle.
// Without a registry only r₁ (the profile's) is recorded.
func (d *Drafter) register(draft *Draft, eps []rules.Episode, batches []RawBatch) {
	p := d.cfg.Profile
	reg := d.cfg.Registry
	var w []string
	var vehicle registry.Vehicle
	known := false
	if reg != nil && !draft.Unregistered {
		if vehicle, known = reg.Vehicle(draft.Vehicle); !known {
			w = append(w, "O veículo não consta mais do cadastro no momento da minuta: titular, condutor e equipamentos não identificados pelo cadastro.")
		}
	}
	// The licensee of the time of the fact, not today's: a vehicle transferred since is drafted
	// against the licensee it had then.
	licensee := vehicle.LicenseeOn(registry.DateOf(draft.Start.In(p.Location())))
	if known && licensee == "" {
		known = false
		w = append(w, "Nenhum licenciado vinculado ao veículo no cadastro na data dos fatos: titular não identificado.")
	}
	if known {
		draft.Licensee = licensee
		r := &Registered{Licensee: licensee, Plate: vehicle.Plate, ManufactureYear: vehicle.ManufactureYear}
		if l, ok := reg.Licensee(licensee); ok {
			r.RazaoSocial, r.CNPJ, r.Address = l.RazaoSocial, l.CNPJ, l.Address
		}
		for _, dev := range vehicle.Devices {
			r.Devices = append(r.Devices, Device{Kind: string(dev.Kind), Serial: dev.Serial, Model: dev.Model,
				INMETROVerification: dev.INMETROVerification.String(), Calibration: dev.Calibration.String(),
				ValidUntil: dev.ValidUntil.String()})
		}
		draft.Registry = r
		SealInstruments(draft)
		w = append(w, expiredInstruments(p, draft, r.Devices)...)
	}

	// r₁: what the noise estimate used (the episode records it), else what it would use.
	draft.MeterDistanceM, draft.MeterDistanceSource = p.Noise.R1M, "profile"
	if known && vehicle.MeterDistanceM > 0 {
		draft.MeterDistanceM, draft.MeterDistanceSource = vehicle.MeterDistanceM, "registry"
	}
	for _, ep := range eps {
		if ep.R1M > 0 && ep.R1M != draft.MeterDistanceM {
			draft.MeterDistanceM, draft.MeterDistanceSource = ep.R1M, "registry"
			if ep.R1M == p.Noise.R1M {
				draft.MeterDistanceSource = "profile"
			}
			break
		}
	}

	cards := reportedCards(batches, draft.Start.Time, draft.End.Time)
	if reg != nil && (known || len(cards) > 0) {
		var dw []string
		draft.Driver, dw = identifyDriver(reg, vehicle, known, cards)
		w = append(w, dw...)
	}
	if draft.Driver != nil {
		// A fact about the driver's documents names the driver, not the registry id.
		for i := range draft.Facts {
			f := &draft.Facts[i]
			if f.Document != nil && f.Document.Subject.Kind == registry.SubjectDriver && f.Document.Subject.ID == draft.Driver.ID {
				f.Description = strings.Replace(f.Description, "condutor "+draft.Driver.ID,
					"condutor "+draft.Driver.Name+" (cadastro "+draft.Driver.ID+")", 1)
			}
		}
	}
	for _, s := range w {
		if !slices.Contains(draft.Warnings, s) {
			draft.Warnings = append(draft.Warnings, s)
		}
	}
}

// identifyDriver finds the draft's driver: the registered driver of the first card the
// tachograph reported during the facts that the registry knows, else — only when no card was
// reported — the driver the registry assigns to the vehicle.
func identifyDriver(reg *registry.Store, vehicle registry.Vehicle, known bool, cards []string) (*Driver, []string) {
	var w []string
	var found *Driver
	var unknown []string
	for _, c := range cards {
		dr, ok := reg.DriverByCard(c)
		switch {
		case !ok:
			unknown = append(unknown, c)
		case found == nil:
			found = driverOf(dr)
			found.Card, found.IdentifiedBy = c, DriverByCard
			found.Identification = "cartão do tacógrafo nº " + c
		case found.ID != dr.ID:
			w = append(w, fmt.Sprintf("O tacógrafo registrou cartões de mais de um condutor durante os fatos (%s): confirmar quem conduzia.", strings.Join(cards, ", ")))
		}
	}
	if len(unknown) > 0 {
		w = append(w, fmt.Sprintf("Cartão do tacógrafo não cadastrado (nº %s): condutor a identificar pelo agente.", strings.Join(unknown, ", ")))
	}
	if found != nil || len(cards) > 0 || !known || vehicle.Driver == "" {
		return found, w
	}
	dr, ok := reg.Driver(vehicle.Driver)
	if !ok {
		return nil, w
	}
	found = driverOf(dr)
	found.IdentifiedBy = DriverByRegistry
	found.Identification = "cadastro: condutor designado para o veículo (o tacógrafo não registrou cartão)"
	w = append(w, "Condutor identificado pelo cadastro (condutor designado para o veículo), não pelo cartão do tacógrafo: confirmar no local.")
	return found, w
}

func driverOf(dr registry.Driver) *Driver {
	return &Driver{ID: dr.ID, Name: dr.Name, CNHNumber: dr.CNHNumber, CNHCategory: dr.CNHCategory,
		CNHValidUntil: dr.CNHValidUntil.String()}
}

// reportedCards are the driver cards the tachograph reported in the raw batches between from
// and to, in the order first reported.
func reportedCards(batches []RawBatch, from, to time.Time) []string {
	type seen struct {
		card string
		t    time.Time
	}
	var all []seen
	for _, rb := range batches {
		var b wire.Batch
		if json.Unmarshal([]byte(rb.Payload), &b) != nil {
			continue
		}
		for _, t := range b.Tacho {
			if t.Card != "" && !t.T.Before(from) && !t.T.After(to) {
				all = append(all, seen{t.Card, t.T.Time})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b seen) int { return a.t.Compare(b.t) })
	var out []string
	for _, s := range all {
		if !slices.Contains(out, s.card) {
			out = append(out, s.card)
		}
	}
	return out
}

// instrumentDevice maps a fact's source to the registry's device kind.
var instrumentDevice = map[string]string{"tacho": "tachograph", "gps": "gps", "slm": "slm"}

// expiredInstruments warns about the measuring devices whose verification or calibration had
// expired on the day a fact they measured began.
func expiredInstruments(p *profile.Profile, draft *Draft, devices []Device) []string {
	var w []string
	for _, f := range draft.Facts {
		kind, ok := instrumentDevice[f.Source]
		if !ok {
			continue
		}
		day := registry.DateOf(f.Start.In(p.Location()))
		for _, dev := range devices {
			if dev.Kind != kind || dev.ValidUntil == "" {
				continue
			}
			until, err := registry.ParseDate(dev.ValidUntil)
			if err != nil || !until.Before(day) {
				continue
			}
			s := fmt.Sprintf("O %s nº %s que mediu o fato estava com a verificação/calibração vencida (válida até %s): a medição pode ser contestada.",
				registry.DeviceKind(kind).Label(), dev.Serial, until.FormatBR())
			if !slices.Contains(w, s) {
				w = append(w, s)
			}
		}
	}
	return w
}

// MeasuredBy is the kind of registered instrument whose measurement a rule's article relies on:
// the tachograph for speed (Art. 22, III: "equipamento registrador instantâneo e inalterável de
// velocidade e tempo (tacógrafo)"; Art. 23), the sound-level meter for noise_limit, whose
// article cites a level (Art. 27, NBR 10151). "" for a rule that cites no measured value.
func MeasuredBy(rule string) registry.DeviceKind {
	switch rule {
	case rules.RuleSpeed:
		return registry.DeviceTachograph
	case rules.RuleNoiseLimit:
		return registry.DeviceSLM
	}
	return ""
}

// SealInstruments records in each fact the registered instrument its article relies on
// (MeasuredBy): the vehicle's device of that kind in draft.Registry, the first listed.
func SealInstruments(draft *Draft) {
	if draft.Registry == nil {
		return
	}
	devices := draft.Registry.Devices
	for i := range draft.Facts {
		f := &draft.Facts[i]
		kind := MeasuredBy(f.Rule)
		if kind == "" {
			continue
		}
		for _, dev := range devices {
			if dev.Kind == string(kind) {
				dev := dev
				f.Instrument = &dev
				break
			}
		}
	}
}
