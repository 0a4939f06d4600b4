// The legal profile in force (admin): its identity and version, what the issue of an auto reads
// from it, and each warning with what it blocks and the keys of the profile's file that fix it.
// The profile is a file (TRENZINHO_PROFILE), versioned with the monitor's configuration and
// validated at start: the page shows it and says what to edit there.

import { api } from "./api.js";
import { h } from "./dom.js";

const orNone = (v) => (v && String(v).trim()) || "— não cadastrado";

export const legalProfileView = {
  title: "Perfil legal",
  role: "admin",
  async mount(el) {
    const status = h("p", { class: "muted", role: "status" }, "Carregando…");
    el.append(status);
    let p;
    try { p = await api("/api/v1/profile"); } catch (e) { status.textContent = e.message; return; }
    status.remove();
    const kv = (k, v) => [h("dt", null, k), h("dd", null, v)];
    const fu = p.fiscal_unit || {};
    const values = (fu.values || []).map((v) => `R$ ${String(v.brl).replace(".", ",")} desde ${v.from}` + (v.note ? ` (${v.note})` : "")).join("; ");
    const warnings = p.warnings || [];
    el.append(
      p.demonstration ? h("div", { class: "banner banner--warn demo-label", id: "profile-demonstration", role: "note" },
        h("div", null, h("strong", null, p.demonstration_label),
          h("p", null, "Perfil de demonstração (make run): a confirmação da UFMP, o ato que a publica, o destinatário da defesa e o ato da notificação eletrônica são fictícios. Nenhum auto emitido com ele vale."))) : null,
      h("section", { class: "card", id: "profile-identity" },
        h("h2", null, "Perfil em vigor"),
        h("dl", { class: "facts" },
          kv("Perfil", p.id), kv("Versão", h("span", { id: "profile-version" }, p.version)),
          kv("Município", [p.municipality, p.state].filter(Boolean).join("-")), kv("Órgão", orNone(p.fiscal_organ)),
          kv("Lei", `${p.law}${p.law_in_force ? "" : " (não vigente)"}`),
          kv(`Valor da ${fu.name || "unidade fiscal"}`, orNone(values)),
          kv("Confirmado por", orNone(fu.confirmed_by)), kv("Ato que o publica", orNone(fu.act)),
          kv("Defesa: destinatário", orNone(p.defence?.to)),
          kv("Defesa: onde protocolar", orNone([p.defence?.address, p.defence?.email, p.defence?.portal].filter(Boolean).join("; "))),
          kv("Notificação eletrônica", p.electronic?.on ? `sim — ${p.electronic.act}` : "não"))),
      h("section", { class: "card", id: "profile-warnings-list" },
        h("h2", null, warnings.length ? `Avisos (${warnings.length})` : "Avisos"),
        warnings.length ? h("ul", { class: "profile-warning-items" }, warnings.map((w) =>
          h("li", { dataset: { blocksIssue: String(!!w.blocks_issue) } },
            h("strong", null, w.text),
            h("p", null, (w.blocks_issue ? "Impede: " : "Efeito: ") + (w.blocks || "—")),
            h("p", null, "Corrige: ", (w.keys || []).length ? w.keys.map((k, i) => [i ? ", " : "", h("code", null, k)]) : "—"))))
          : h("p", null, "Nenhum aviso: o perfil tem o que a emissão e os prazos dos autos precisam.")),
      h("section", { class: "card" },
        h("h2", null, "Como corrigir"),
        h("p", null, "O perfil legal é um arquivo YAML (TRENZINHO_PROFILE), a fonte única: edite as chaves indicadas no arquivo, versione-o junto com a configuração do monitor (mude ",
          h("code", null, "version"), ") e reinicie o monitor, que o valida ao iniciar e recusa um perfil inválido. Cada minuta registra a versão do perfil com que foi feita.")));
  },
};
