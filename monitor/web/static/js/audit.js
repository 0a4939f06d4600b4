// The audit log (admin): logins and failures, user changes, draft exports and decisions, the
// acts of the notices' processes, registry edits and reads of drivers' data.

import { api, superseding } from "./api.js";
import { h, field, emptyRow, dateInput, tableWrap, theadOf } from "./dom.js";
import { fmtDateTime, isoDateBR, AUDIT_ACTIONS, ROLES, dayRange, auditObject } from "./fmt.js";

export const auditView = {
  title: "Auditoria",
  role: "admin",
  mount(el) {
    const user = h("input", { type: "search", autocomplete: "off" });
    const action = h("select", null, h("option", { value: "" }, "Todas"), Object.entries(AUDIT_ACTIONS).map(([k, v]) => h("option", { value: k }, v)));
    const object = h("input", { type: "search", autocomplete: "off", placeholder: "ex.: draft:… ou user:maria" });
    const from = dateInput();
    const to = dateInput();
    const tbody = h("tbody");
    const info = h("p", { class: "muted", role: "status" });
    const more = h("button", { type: "button", class: "btn", hidden: true }, "Carregar mais");
    let items = [], cursor = "";
    const begin = superseding();
    const load = async (append = false) => {
      const current = begin();
      info.textContent = "Carregando…";
      const q = new URLSearchParams({ limit: "100" });
      if (user.value.trim()) q.set("user", user.value.trim());
      if (action.value) q.set("action", action.value);
      if (object.value.trim()) q.set("object", object.value.trim());
      if (from.iso()) q.set("from", dayRange(from.iso())[0].toISOString());
      if (to.iso()) q.set("to", dayRange(to.iso())[1].toISOString());
      if (append && cursor) q.set("cursor", cursor);
      try {
        const page = await api("/api/v1/audit?" + q);
        if (!current()) return;
        items = append ? items.concat(page.items) : page.items;
        cursor = page.next_cursor || "";
        more.hidden = !cursor;
        tbody.replaceChildren(...(items.length ? items.map(row) : [emptyRow(6, "Nenhum registro com esses filtros.")]));
        info.textContent = `${items.length} registro(s)` + (cursor ? " (há mais)" : "");
      } catch (e) { if (current()) info.textContent = e.message; }
    };
    more.addEventListener("click", () => load(true));
    action.addEventListener("change", () => load());
    el.append(
      h("div", { class: "page-head" }, h("p", { class: "lead" }, "Registro permanente e somente de acréscimo: quem fez o quê, quando e de onde.")),
      h("section", { class: "card" },
        h("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); load(); } },
          field("Usuário", user), field("Ação", action), field("Objeto", object), field("De", from), field("Até", to),
          h("button", { type: "submit", class: "btn btn-primary" }, "Filtrar")),
        tableWrap("Registros da auditoria", h("table", { class: "table", id: "audit-table" },
          theadOf(["Data e hora", "Usuário", "Ação", "Objeto", "Alteração", ["Endereço", "col-low"]]),
          tbody)),
        h("div", { class: "table-foot" }, info, more)));
    load();
  },
};

function row(e) {
  return h("tr", { dataset: { action: e.action, object: e.object || "" } },
    h("td", { class: "nowrap" }, fmtDateTime(e.time)),
    h("td", null, e.user || h("span", { class: "muted" }, "—")),
    h("td", null, AUDIT_ACTIONS[e.action] || e.action, h("small", { class: "muted block" }, e.action)),
    h("td", { class: "audit-object" }, e.object ? h("span", { title: e.object }, auditObject(e.object)) : "—"),
    h("td", null, change(e)),
    h("td", { class: "col-low" }, e.remote_addr || "—"));
}

const KEYS = { status: "situação", notice: "auto", reason: "motivo", role: "papel", disabled: "desativado", name: "nome",
  created_at: "criado em", password: "senha", state: "situação", notified: "notificação", mode: "forma", published: "edital publicado",
  refused_to_sign: "recusa de assinatura", defence_filed: "defesa", decided: "decisão", outcome: "resultado", paid: "pagamento",
  divida_ativa: "dívida ativa", origin: "origem", vehicle: "veículo", licensee: "permissionário", penalty: "penalidade", plate: "placa",
  cnpj: "CNPJ", razao_social: "razão social", meter_distance_m: "r₁ (m)", date: "data", action: "ato", text: "texto", note: "observação",
  redacted: "dados abreviados", drivers: "condutores", fields: "campos", driver: "condutor", address: "endereço", manufacture_year: "ano",
  required_cnh_category: "categoria de CNH", key_id: "chave", decision: "decisão", from: "de", to: "até", days: "dias" };
// Role names are looked up in ROLES at the time of display (the profile names the autoridade).
const VALUES = { draft: "pendente", issued: "emitido", dismissed: "arquivado", true: "sim", false: "não",
  notified: "notificado", defence_filed: "defesa pendente", defence_rejected: "defesa indeferida", defence_accepted: "defesa acolhida",
  confirmed: "multa confirmada", paid: "pago", dividaativa: "dívida ativa", annulled: "anulado", appeal_filed: "recurso pendente", appeal_accepted: "recurso provido",
  in_person: "em mãos", mail: "correio com AR", edital: "edital", accepted: "acolhida", rejected: "indeferida", manual: "lavrado na rua", import: "importado" };

// change shows what an entry changed: the plain values before → after, and the records in
// full (a case's calculus, a registry record) behind a disclosure.
function change(e) {
  if (!e.before && !e.after) return h("span", { class: "muted" }, "—");
  const val = (k, v) => (k === "created_at" ? fmtDateTime(v) : /^\d{4}-\d{2}-\d{2}$/.test(String(v)) ? isoDateBR(String(v)) : VALUES[String(v)] || ROLES[String(v)] || String(v));
  const flat = (v) => typeof v !== "object" || (Array.isArray(v) && v.every((x) => x == null || typeof x !== "object"));
  const plain = (o) => (o == null || typeof o !== "object" ? [] : Object.entries(o).filter(([, v]) => v !== "" && v != null && flat(v) && !(Array.isArray(v) && !v.length)));
  const shown = (k, v) => (Array.isArray(v) ? v.map((x) => val(k, x)).join(", ") : val(k, v));
  const fmt = (o) => (o == null ? "—" : plain(o).map(([k, v]) => `${KEYS[k] || k}: ${shown(k, v)}`).join(" · ") || "registro");
  const nested = [e.before, e.after].some((o) => o && typeof o === "object" && Object.values(o).some((v) => v && typeof v === "object" && !flat(v)));
  return h("span", { class: "change" }, e.before ? h("span", { class: "before" }, fmt(e.before)) : null,
    e.before && e.after ? " → " : null, e.after ? h("span", { class: "after" }, fmt(e.after)) : null,
    nested ? h("details", { class: "change-full" }, h("summary", null, "dados completos"),
      h("pre", null, JSON.stringify(e.before && e.after ? { antes: e.before, depois: e.after } : e.after || e.before, null, 2))) : null);
}
