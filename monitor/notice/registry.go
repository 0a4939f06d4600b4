package notice

import (
	"time"

	"github.com/trenzinho/trenzinho/monitor/drafts"
	"github.com/trenzinho/trenzinho/registry"
)

// fromDraft fills what the caller left out of in with what the draft recorded from the
// registry when it was made (drafts.Draft.Registry, Driver, MeterDistanceM): the licensee,
// the vehicle, its devices and the driver. What the caller gives wins.
func fromDraft(in Input, d *drafts.Draft) Input {
	if r := d.Registry; r != nil && !d.Unregistered {
		if in.Licensee == nil && (r.RazaoSocial != "" || r.CNPJ != "") {
			in.Licensee = &Licensee{Name: r.RazaoSocial, CNPJ: r.CNPJ, Address: r.Address}
		}
		if in.Vehicle == nil {
			in.Vehicle = &Vehicle{Plate: registry.FormatPlate(r.Plate), ManufactureYear: r.ManufactureYear}
			if d.MeterDistanceSource == "registry" {
				in.Vehicle.MeterDistanceM = d.MeterDistanceM
			}
		}
		if in.Devices == nil {
			for _, dev := range r.Devices {
				in.Devices = append(in.Devices, DeviceOf(dev))
			}
		}
	}
	for _, v := range in.Verified {
		replaced := false
		for i, dev := range in.Devices {
			if sameKind(dev.Kind, v.Kind) && dev.Serial == v.Serial {
				in.Devices[i], replaced = v, true
			}
		}
		if !replaced {
			in.Devices = append(in.Devices, v)
		}
	}
	if dr := d.Driver; in.Driver == nil && dr != nil {
		in.Driver = &Driver{Name: dr.Name, CNH: dr.CNHNumber, Card: dr.Card}
		if dr.IdentifiedBy == drafts.DriverByRegistry {
			in.Driver.Identification = "cadastro — condutor designado para o veículo; o tacógrafo não registrou cartão"
		} else {
			in.Driver.Identification = "cartão do tacógrafo nº " + dr.Card
			in.Driver.Card = "" // said once, in the identification
		}
	}
	return in
}

// day is a YYYY-MM-DD date as the notice's dates are (midnight UTC, printed as is); zero when
// empty or malformed.
func day(s string) time.Time {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		return time.Time{}
	}
	return t
}

// sameKind reports whether two device kinds name the same instrument ("tacho" is the facts'
// name of the registry's "tachograph").
func sameKind(a, b string) bool {
	norm := func(k string) string {
		if k == "tachograph" {
			return "tacho"
		}
		return k
	}
	return norm(a) == norm(b)
}

// DeviceOf is a draft's device as the notice prints it.
func DeviceOf(dev drafts.Device) Device {
	return Device{Kind: dev.Kind, Model: dev.Model, Serial: dev.Serial,
		Verification: day(dev.INMETROVerification), Calibration: day(dev.Calibration), ValidUntil: day(dev.ValidUntil)}
}
