package cases

import (
	"context"
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/registry"
)

// ReasonInstrumentUnverified: the instrument whose measurement a fact's article relies on (the
// tachograph for speed, the sound-level meter for a level: drafts.MeasuredBy) is not in the
// registry, or has no INMETRO verification (or calibration, for the sound-level meter) valid
// on every day of the fact.
const ReasonInstrumentUnverified = "instrument_unverified"

// InstrumentOnFile finds the registry's current record of a vehicle's instrument, by kind and
// serial, so that a verification registered after the draft was made (a renewal, a correction)
// counts; false when the registry no longer lists it (the record sealed with the draft stands).
type InstrumentOnFile func(ctx context.Context, vehicle, kind, serial string) (drafts.Device, bool)

// instruments checks, for each fact of the draft whose article relies on a measuring
// instrument, that the instrument had a verification valid on every day of the fact: the
// registry's current record of it (onFile, nil: the record sealed with the draft). It returns
// the instruments found fit, each once, for the auto to name, and a text for each that is not.
func instruments(ctx context.Context, d *drafts.Draft, onFile InstrumentOnFile, loc *time.Location) (fit []drafts.Device, unfit []string) {
	if loc == nil {
		loc = time.UTC
	}
	seen := map[string]bool{}
	for _, f := range d.Facts {
		kind := drafts.MeasuredBy(f.Rule)
		if kind == "" {
			continue
		}
		if f.Instrument == nil {
			unfit = appendOnce(unfit, fmt.Sprintf("O fato %s (%s) depende da medição do %s, que não consta do cadastro do veículo: o auto deve identificar o instrumento e a sua verificação.",
				f.EpisodeID, f.Rule, kind.Label()))
			continue
		}
		dev := *f.Instrument
		if onFile != nil {
			if cur, ok := onFile(ctx, d.Vehicle, dev.Kind, dev.Serial); ok {
				dev = cur
			}
		}
		from := registry.DateOf(f.Start.In(loc))
		to := from
		if !f.End.IsZero() {
			to = registry.DateOf(f.End.In(loc))
		}
		if why := unverified(dev, from, to); why != "" {
			unfit = appendOnce(unfit, fmt.Sprintf("O %s nº %s, que mediu o fato %s (%s) em %s, %s: a medição não tem verificação válida na data do fato.",
				kind.Label(), dev.Serial, f.EpisodeID, f.Rule, from.FormatBR(), why))
			continue
		}
		if key := dev.Kind + "\x00" + dev.Serial; !seen[key] {
			seen[key] = true
			fit = append(fit, dev)
		}
	}
	return fit, unfit
}

// unverified says why the device's verification does not cover the days from to to; "" when it
// does: its verification (INMETRO, or for the sound-level meter its calibration when later) on
// or before from, and valid until to or later.
func unverified(dev drafts.Device, from, to registry.Date) string {
	verified := day(dev.INMETROVerification)
	if dev.Kind == string(registry.DeviceSLM) {
		if c := day(dev.Calibration); !c.IsZero() && (verified.IsZero() || verified.Before(c)) && !from.Before(c) {
			verified = c
		}
	}
	until := day(dev.ValidUntil)
	switch {
	case verified.IsZero() && until.IsZero():
		return "não tem verificação (INMETRO) nem validade cadastradas"
	case verified.IsZero():
		return "não tem data de verificação (INMETRO) cadastrada"
	case from.Before(verified):
		return "só foi verificado em " + verified.FormatBR() + ", depois do fato"
	case until.IsZero():
		return "não tem validade da verificação cadastrada"
	case until.Before(to):
		return "tinha a verificação válida só até " + until.FormatBR()
	}
	return ""
}

// day reads a YYYY-MM-DD date; zero when empty or malformed.
func day(s string) registry.Date {
	d, err := registry.ParseDate(s)
	if err != nil {
		return registry.Date{}
	}
	return d
}

func appendOnce(s []string, v string) []string {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// RegistryInstruments is an InstrumentOnFile over the registry's current version.
func RegistryInstruments(s *registry.Store) InstrumentOnFile {
	return func(_ context.Context, vehicle, kind, serial string) (drafts.Device, bool) {
		v, ok := s.Vehicle(vehicle)
		if !ok {
			return drafts.Device{}, false
		}
		for _, dev := range v.Devices {
			if string(dev.Kind) == kind && dev.Serial == serial {
				return drafts.Device{Kind: string(dev.Kind), Serial: dev.Serial, Model: dev.Model,
					INMETROVerification: dev.INMETROVerification.String(), Calibration: dev.Calibration.String(),
					ValidUntil: dev.ValidUntil.String()}, true
			}
		}
		return drafts.Device{}, false
	}
}
