package notice

import "strings"

// bundleRoutes tells the licensee how to obtain the sealed evidence bundle (ARQUIVO.json) and
// verify it by routes the licensee can use — the licensee's portal, the public verification
// page of the auto, the protocol of the fiscal organ on paper — never a staff route of the
// control room.
func (d *doc) bundleRoutes() string {
	portal := "no portal do permissionário (com o usuário do permissionário: Autos › este auto › «Baixar o pacote de evidências»"
	if u := strings.TrimSpace(d.p.Defence.Portal); u != "" {
		portal += ", em " + u
	}
	portal += ")"
	organ := "do órgão autuante"
	if d.d.FiscalOrgan != "" {
		organ += " — " + d.d.FiscalOrgan
	}
	s := "ARQUIVO.json é o pacote de evidências selado " + d.this() + ". O autuado o obtém " + portal +
		", ou por requerimento em papel no protocolo " + organ + ", indicando o número do auto, que o entrega em mídia digital."
	if p := d.in.Public; p != nil && d.issued() {
		target := p.URL
		if target == "" {
			target = p.Path
		}
		s += " Sem instalar nada, a página pública de verificação deste auto (" + target + ", abaixo) confere se um pacote ou PDF recebido é o registrado."
	}
	return s
}

// competence prints the acts of the Executive the auto rests on (profile.Competence): who
// inspects, who decides and what makes the telemetry a means of proof, each with the provisions
// of the law that leave it to the Executive, quoted verbatim. An act not named is said to be
// missing (the issue refuses such an auto: competence_unproven).
func (d *doc) competence() {
	var lines []string
	for _, a := range d.p.Competence.Acts() {
		act := a.Act
		if act == "" {
			act = "ato não cadastrado no perfil legal (" + a.Key + ")"
		}
		lines = append(lines, a.What+": "+act+" ("+a.Provisions+" da "+d.d.Law+")")
	}
	d.kv("Competência", strings.Join(lines, "; ")+".", 52)
	for _, c := range []string{"Art. 1, § 2º", "Art. 34", "Art. 20, § 1º", "Art. 59"} {
		if t, ok := d.p.ArticleText(c); ok {
			d.font("", 8.2)
			d.need(float64(d.lines(c+": “"+t+"”", width-4))*4 + 1)
			d.pdf.SetX(marginL + 4)
			d.pdf.MultiCell(width-4, 4, d.tr(c+": “"+t+"”"), "", "L", false)
		}
	}
	d.pdf.Ln(0.8)
}
