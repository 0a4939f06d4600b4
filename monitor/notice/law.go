package notice

import (
	"errors"
	"fmt"

	"github.com/trenzinho/trenzinho/monitor/drafts"
)

// ReasonFineContradictsLaw is the code of an auto whose fine is not the one the law sets for
// its penalty's article (profile.FineContradiction); the issue refuses it too (cases).
const ReasonFineContradictsLaw = "fine_contradicts_law"

// ErrFineContradictsLaw is Render's refusal of an auto whose fine contradicts the law: an auto
// that states a fine its own article does not set would not survive the defence.
var ErrFineContradictsLaw = errors.New("notice: " + ReasonFineContradictsLaw)

// fineAgainstLaw refuses a document whose penalty contradicts its article: the draft's base
// fine under the draft's penalty, and once issued the calculus's — its penalty (a repeat may
// move it, e.g. to Art. 45, I) with its base fine, and the total as the base times the
// recidivism factor at most.
func fineAgainstLaw(in Input, d *drafts.Draft) error {
	p := in.Profile
	refuse := func(why string) error {
		return fmt.Errorf("%w: %s", ErrFineContradictsLaw, why)
	}
	pe := in.Penalty
	if pe == nil || pe.Article == "" || pe.Article == d.Penalty {
		if why := p.FineContradiction(d.Penalty, d.FineUFMP, d.FineUFMP > 0); why != "" {
			return refuse(why)
		}
	}
	if pe == nil || pe.Warning {
		return nil
	}
	article := pe.Article
	if article == "" {
		article = d.Penalty
	}
	if pe.BaseUFMP != 0 {
		if why := p.FineContradiction(article, pe.BaseUFMP, true); why != "" {
			return refuse(why)
		}
	}
	if law, _, ok := p.LawFine(article); ok && pe.FineUFMP != law {
		factor := p.Recidivism.Factor
		if factor <= 0 {
			factor = 2
		}
		if pe.FineUFMP != law*factor {
			return refuse(fmt.Sprintf("a multa de %s %s não é a que a lei fixa para %s (%s), nem o seu dobro por reincidência (Art. 48)",
				num(pe.FineUFMP, 2), p.FiscalUnit.Name, article, num(law, 2)))
		}
	}
	return nil
}

// repeatPenalty is the penalty line of an auto the calculus fined by another article than the
// draft's — a conduct repeated after its notificação preliminar (Art. 41, I) — as itself: its
// article and its base fine, never the draft's warning beside it.
func (d *doc) repeatPenalty(pe *Penalty) string {
	base := pe.BaseUFMP
	if base == 0 {
		base = pe.FineUFMP
	}
	return "multa-base de " + num(base, 2) + " " + d.unit() + " (" + pe.Article +
		"), aplicada na emissão por repetição de infração já notificada (valor da penalidade no item 6)."
}
