package api

import (
	"errors"
	"fmt"
	"time"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/penalty"
	"github.com/trenzinho/trenzinho/monitor/store"
	"github.com/trenzinho/trenzinho/profile"
)

// importPrescription refuses an imported paper notice that stands as a fine although it was
// issued after the facts prescribed (cases.PrescribedAtIssue: such an auto is void and counts
// for no recidivism), or whose inscription in dívida ativa came after its collection
// prescribed (counted from the day the fine became final, final_date).
func importPrescription(p *profile.Profile, n *store.ImportedNotice, offence, issued string) error {
	void := n.Status == penalty.StatusAnnulled || n.Status == penalty.StatusDismissed ||
		n.Status == penalty.StatusDefenceAccepted || n.Status == penalty.StatusAppealAccepted
	if why := cases.PrescribedAtIssue(p, offence, issued); why != "" && !void {
		return errors.New(why + ": importe-o com a situação annulled (o auto prescrito não conta para a reincidência)")
	}
	if n.DividaAtiva == "" || n.Final == "" {
		return nil
	}
	final, err := time.Parse(time.DateOnly, n.Final)
	if err != nil {
		return nil
	}
	years := p.PrescriptionPeriod()
	if limit := final.AddDate(years, 0, 0); n.DividaAtiva >= limit.Format(time.DateOnly) {
		inscribed, _ := time.Parse(time.DateOnly, n.DividaAtiva)
		return fmt.Errorf("a inscrição em dívida ativa (divida_ativa_date, %s) é posterior à prescrição da cobrança: a multa se tornou definitiva em %s e o prazo de %d anos (Decreto nº 20.910/1932, art. 1º) terminou em %s",
			inscribed.Format("02/01/2006"), final.Format("02/01/2006"), years, limit.Format("02/01/2006"))
	}
	return nil
}
