package cases

import "strings"

// ReasonFineContradictsLaw: the fine the draft states is not the one the law sets for its
// penalty's article (profile.FineContradiction; Art. 45 and 46, parágrafo único, Art. 47); the
// renderer refuses such a document too (notice.ErrFineContradictsLaw).
const ReasonFineContradictsLaw = "fine_contradicts_law"

// fineBlocker is the reason against an issue whose draft fines against the law ("" why: none).
func fineBlocker(why string) (Reason, bool) {
	if strings.TrimSpace(why) == "" {
		return Reason{}, false
	}
	return Reason{ReasonFineContradictsLaw, "A penalidade da minuta contradiz a lei: " + why +
		". Arquive a minuta e gere outra com o perfil legal corrigido."}, true
}
