package api

import (
	"net/http"
	"strings"

	"github.com/trenzinho/trenzinho/monitor/cases"
	"github.com/trenzinho/trenzinho/monitor/penalty"
)

// An auto handed over at its issue (the agent in the street hands it to the licensee's
// representative): the issue names the recipient, and the delivery in hand is recorded on the
// day of issue right after it, before the document is frozen — so the frozen auto prints the
// last day to defend, counted from that receipt (Art. 55). Without it the auto prints the rule
// and a blank "Recebido em", and the deadline runs from the delivery recorded later.

// handoverInvalid says (pt-BR) why a hand-over's proof would be refused, before anything is
// issued; "" when there is none or it is complete.
func handoverInvalid(h *cases.Proof) string {
	if h == nil {
		return ""
	}
	if len([]rune(strings.TrimSpace(h.Recipient))) < 3 || len([]rune(strings.TrimSpace(h.RecipientRole))) < 3 {
		return "a entrega em mãos na emissão (handed_over) exige o nome de quem recebeu o auto (recipient) e a sua qualidade ou cargo (recipient_role)."
	}
	if h.AR != "" || h.ARScan != 0 || h.Publication != "" {
		return "a entrega em mãos na emissão (handed_over) tem só recipient e recipient_role."
	}
	return ""
}

// handOver records the delivery in hand of the just issued case c on its day of issue; false
// when it was refused (and answered).
func (s *Server) handOver(w http.ResponseWriter, r *http.Request, o *cases.Office, c *cases.Case, h *cases.Proof) bool {
	if h == nil {
		return true
	}
	act := cases.Action{Action: cases.ActionNotify, Mode: penalty.ModeInPerson, Date: cases.DayOf(c.Issued, o.Profile.Location()),
		Proof: cases.Proof{Recipient: h.Recipient, RecipientRole: h.RecipientRole}, Note: "Auto entregue em mãos no ato da emissão."}
	if _, _, err := o.Act(r.Context(), c.ID, act, actor(r)); err != nil {
		s.fail(w, r, err, "auto")
		return false
	}
	return true
}
