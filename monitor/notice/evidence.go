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
