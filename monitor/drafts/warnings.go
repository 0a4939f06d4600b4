package drafts

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/trenzinho/trenzinho/profile"
	"github.com/trenzinho/trenzinho/rules"
	"github.com/trenzinho/trenzinho/wire"
)

// WarningWindow is how far before an episode's start the warnings of the bridge's driver's coach
// are read with it: shown on its timeline, stated in its draft's facts, and how long after a
// warning an episode of its rule counts as having followed it (docs/rules.md, "Warnings of the
// driver's coach"). Ten minutes covers the coach's lead distance (about 300 m) at any speed the
// vehicle may drive, and the 20 and 5 minute warnings before the end of the service hours.
const WarningWindow = 10 * time.Minute

// Warning is a warning of the driver's coach as the monitor received it, with the clock of its
// batch: a warning timed by the system clock is shown, never stated as a fact.
type Warning struct {
	wire.Warning
	Clock wire.Clock `json:"clock"`
}

// Stated reports whether a warning may be stated in the facts of ep: a warning about the
// episode's rule — and, when both name a site, about the episode's site — timed by a clock that
// is evidence (gps or rtc), from WarningWindow before the episode's start to its end.
func Stated(w *Warning, ep *rules.Episode) bool {
	if w.Rule != ep.Rule || w.Clock == wire.ClockSystem {
		return false
	}
	if w.Site != "" && ep.Site != nil && ep.Site.ID != "" && w.Site != ep.Site.ID {
		return false
	}
	if w.T.Before(ep.Start.Add(-WarningWindow)) {
		return false
	}
	return ep.End == nil || !w.T.After(ep.End.Time)
}

// warningText states a warning in Portuguese as what it is: a record of the licensee's own
// device, which the monitor reports and does not vouch for ("o condutor foi alertado pelo
// sistema embarcado às 15:02:10, a 290 m do Hospital X").
func warningText(p *profile.Profile, w *Warning, ep *rules.Episode) string {
	var b strings.Builder
	b.WriteString("Segundo registro do próprio sistema embarcado do veículo (equipamento do licenciado), transmitido com a telemetria, o condutor foi alertado pelo sistema embarcado às ")
	b.WriteString(w.T.In(p.Location()).Format("15:04:05"))
	if !sameLocalDay(p, w.T.Time, ep.Start.Time) {
		b.WriteString(" de " + w.T.In(p.Location()).Format("02/01/2006"))
	}
	if w.DistanceM != nil {
		fmt.Fprintf(&b, ", a %s m ", Num(*w.DistanceM, 0))
		if s := ep.Site; s != nil && s.ID == w.Site {
			b.WriteString("de ")
			if c := categories[s.Category]; c != "" {
				b.WriteString(c + " ")
			}
			b.WriteString("\"" + cmp.Or(s.Name, s.ID) + "\"")
		} else if w.Site != "" {
			b.WriteString("do local \"" + w.Site + "\"")
		} else {
			b.WriteString("do local")
		}
	}
	if w.Value != nil && w.Limit != nil {
		switch w.Kind {
		case wire.WarningSiteSound:
			fmt.Fprintf(&b, ", com nível sonoro de %s dB(A) para o limiar de %s dB(A)", Num(*w.Value, 1), Num(*w.Limit, 1))
		case wire.WarningSpeedNear, wire.WarningSpeedOver:
			fmt.Fprintf(&b, ", a %s km/h para o limite de %s km/h", Num(*w.Value, 1), Num(*w.Limit, 1))
		}
	} else if w.Value != nil {
		switch w.Kind {
		case wire.WarningHoursEnd:
			fmt.Fprintf(&b, ", a %s min do fim do horário permitido", Num(*w.Value, 0))
		case wire.WarningDocument:
			fmt.Fprintf(&b, ", a %s dia(s) do vencimento do documento", Num(*w.Value, 0))
		}
	}
	// The times are stated to the second: a warning in the second the fact began is neither
	// before it nor during it as the auto reads them.
	switch at, start := w.T.Truncate(time.Second), ep.Start.Truncate(time.Second); {
	case at.Before(start):
		b.WriteString(", antes do início do fato.")
	case at.Equal(start):
		b.WriteString(", no início do fato.")
	default:
		b.WriteString(", durante o fato.")
	}
	return b.String()
}

func sameLocalDay(p *profile.Profile, a, b time.Time) bool {
	y1, m1, d1 := a.In(p.Location()).Date()
	y2, m2, d2 := b.In(p.Location()).Date()
	return y1 == y2 && m1 == m2 && d1 == d2
}
