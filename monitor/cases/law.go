package cases

import "strings"

// ReasonCompetenceUnproven: the profile does not name the acts of the Executive the auto rests
// on — the fiscal organ's designation (Art. 1, § 2º; Art. 34), the deciding authorities' (Art.
// 57; Art. 59) and the adoption of the telemetry as a means of proof (Art. 20, § 1º; Art. 59):
// competence.fiscal_organ_act, authorities_act and telemetry_act.
const ReasonCompetenceUnproven = "competence_unproven"

// competenceBlocker is the reason against an issue while acts of competence are missing (their
// profile keys).
func competenceBlocker(missing []string) (Reason, bool) {
	if len(missing) == 0 {
		return Reason{}, false
	}
	return Reason{ReasonCompetenceUnproven, "O perfil legal não cadastra os atos do Poder Executivo em que o auto se apoia (" + join(missing) +
		"): a designação do órgão fiscalizador (Art. 1, § 2º, e Art. 34), a das autoridades julgadoras (Art. 57 e Art. 59) e a adoção da telemetria como meio de prova (Art. 20, § 1º, e Art. 59)."}, true
}

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
