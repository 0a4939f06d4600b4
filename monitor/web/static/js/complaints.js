// Citizens' complaints (fiscal): the moderation queue with each complaint's matches against the
// telemetry, the confirmation against an episode of a matched vehicle (supporting evidence,
// never the ground of an auto), and the audited read of the complainant's contact.

import { api, superseding } from "./api.js";
import { h, emptyRow, tableWrap, theadOf } from "./dom.js";
import { fmtDateTime } from "./fmt.js";

const KINDS = { som_alto: "Som alto", velocidade: "Velocidade", fora_do_horario: "Fora do horário", outro: "Outro" };
const STATUS = { pending: "Aguardando análise", accepted: "Aceita", rejected: "Rejeitada" };
const num = (x) => Math.round(x).toLocaleString("pt-BR");

function matchText(m, limit) {
  let s = `${m.vehicle} a ${num(m.distance_m)} m às ${fmtDateTime(m.at)}`;
  if (m.speed_kmh != null) s += `, ${num(m.speed_kmh)} km/h`;
  if (m.level_db != null) s += `, ≈${num(m.level_db)} dB(A) estimado` + (limit != null ? (m.above ? ` (acima de ${num(limit)})` : ` (até ${num(limit)})`) : "");
  return s;
}

export const complaintsView = {
  title: "Reclamações",
  role: "fiscal",
  mount(el) {
    const status = h("select", { id: "complaints-status" },
      h("option", { value: "pending" }, "Aguardando análise"), h("option", { value: "accepted" }, "Aceitas"),
      h("option", { value: "rejected" }, "Rejeitadas"), h("option", { value: "" }, "Todas"));
    const tbody = h("tbody");
    const info = h("p", { class: "muted", role: "status" });
    const begin = superseding();
    const load = async () => {
      const current = begin();
      info.textContent = "Carregando…";
      try {
        const q = new URLSearchParams({ limit: "200" });
        if (status.value) q.set("status", status.value);
        const page = await api("/api/v1/complaints?" + q);
        if (!current()) return;
        tbody.replaceChildren(...(page.items.length ? page.items.map((c) => row(c, load)) : [emptyRow(6, "Nenhuma reclamação.")]));
        info.textContent = `${page.items.length} reclamação(ões)`;
      } catch (e) { if (current()) info.textContent = e.message; }
    };
    status.addEventListener("change", load);
    el.append(
      h("div", { class: "page-head" }, h("p", { class: "lead" },
        "Reclamações de cidadãos, comparadas com a telemetria. O nível no local é estimado: a reclamação é indício e nunca fundamenta um auto sozinha.")),
      h("section", { class: "card" },
        h("div", { class: "toolbar" }, h("label", null, "Situação ", status)),
        tableWrap("Reclamações", h("table", { class: "table", id: "complaints-table" },
          theadOf(["Recebida", "Horário e tipo", "Local", "O que os dados mostram", "Situação", "Ações"]), tbody)),
        h("div", { class: "table-foot" }, info)));
    load();
  },
};

function row(c, reload) {
  const res = c.result || { matches: [] };
  const matches = res.matches || [];
  const actions = h("div", { class: "row-actions" });
  const say = h("p", { class: "muted small", role: "status" });
  const act = async (fn) => { try { await fn(); reload(); } catch (e) { say.textContent = e.message; } };
  if (!c.episode_id) {
    if (c.status !== "accepted") actions.append(h("button", { type: "button", class: "btn btn-small", onclick: () => act(() => api(`/api/v1/complaints/${c.id}/moderation`, { method: "POST", body: { status: "accepted" } })) }, "Aceitar"));
    if (c.status !== "rejected") actions.append(h("button", { type: "button", class: "btn btn-small", onclick: () => act(() => api(`/api/v1/complaints/${c.id}/moderation`, { method: "POST", body: { status: "rejected" } })) }, "Rejeitar"));
    if (c.status !== "rejected" && matches.length) actions.append(h("button", { type: "button", class: "btn btn-small", onclick: () => confirmForm(c, res, actions, reload) }, "Vincular a episódio"));
  }
  if (c.has_contact) {
    actions.append(h("button", { type: "button", class: "btn btn-small btn-ghost", title: "Dado pessoal: a consulta fica registrada na auditoria",
      onclick: async (ev) => {
        try {
          const r = await api(`/api/v1/complaints/${c.id}/contact`);
          ev.target.replaceWith(h("span", { class: "contact" }, r.contact || "—"));
        } catch (e) { say.textContent = e.message; }
      } }, "Ver contato"));
  }
  actions.append(say);
  return h("tr", { dataset: { id: c.id } },
    h("td", { class: "nowrap" }, fmtDateTime(c.created_at), h("small", { class: "muted block" }, c.source === "156" ? `156 ${c.external_ref || ""}` : "formulário")),
    h("td", null, fmtDateTime(c.at), h("small", { class: "muted block" }, KINDS[c.kind] || c.kind), c.text ? h("small", { class: "block" }, c.text) : null),
    h("td", null, c.address || `${c.lat.toFixed(5)}, ${c.lon.toFixed(5)}`),
    h("td", null, matches.length ? h("ul", { class: "plain" }, matches.map((m) => h("li", null, matchText(m, res.limit_db))))
      : (c.detail || c.answer || []).join(" ")),
    h("td", null, STATUS[c.status] || c.status, c.episode_id ? h("a", { class: "block", href: "#/episodio/" + encodeURIComponent(c.episode_id) }, "episódio vinculado") : null),
    h("td", null, actions));
}

// confirmForm lists the episodes of the matched vehicles in the complaint's window to pick one.
async function confirmForm(c, res, el, reload) {
  const select = h("select", { "aria-label": "Episódio" });
  const vehicles = [...new Set(res.matches.map((m) => m.vehicle))];
  for (const v of vehicles) {
    const q = new URLSearchParams({ vehicle: v, from: new Date(new Date(res.from).getTime() - 3600e3).toISOString(), to: res.to, limit: "50" });
    try {
      const page = await api("/api/v1/episodes?" + q);
      for (const e of page.items) select.append(h("option", { value: e.id }, `${e.vehicle} · ${e.rule} · ${fmtDateTime(e.start)}`));
    } catch { /* shown as none */ }
  }
  const msg = h("p", { class: "muted small", role: "status" });
  if (!select.options.length) { el.append(h("p", { class: "muted small" }, "Nenhum episódio dos veículos no horário.")); return; }
  el.append(h("form", { class: "inline-form", onsubmit: async (ev) => {
    ev.preventDefault();
    try { await api(`/api/v1/complaints/${c.id}/confirm`, { method: "POST", body: { episode_id: select.value } }); reload(); } catch (e) { msg.textContent = e.message; }
  } }, select, h("button", { type: "submit", class: "btn btn-small btn-primary" }, "Vincular"), msg));
}

// episodeComplaints is the episode page's section of the complaints confirmed against it;
// empty (and hidden) when there are none or the monitor takes no complaints.
export function episodeComplaints(id) {
  const list = h("ul", { class: "plain" });
  const section = h("section", { class: "card", id: "episode-complaints", hidden: true },
    h("h3", { class: "card-title" }, "Reclamações de cidadãos"),
    h("p", { class: "muted small" }, "Indício de apoio: uma reclamação nunca fundamenta um auto sozinha."), list);
  api(`/api/v1/episodes/${encodeURIComponent(id)}/complaints`).then((page) => {
    if (!page.items.length) return;
    list.replaceChildren(...page.items.map((c) => h("li", null,
      `${fmtDateTime(c.at)} — ${KINDS[c.kind] || c.kind}` + (c.text ? `: “${c.text}”` : "") + ` (confirmada por ${c.confirmed_by || "—"})`)));
    section.hidden = false;
  }).catch(() => {});
  return section;
}
