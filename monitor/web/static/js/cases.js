// The process of an issued notice (docs/api.md, "Cases"): its state, the timeline of its acts,
// the defence deadline and whether the fine is suspended, the penalty calculus made at issue,
// and the forms of the next acts a fiscal may record. Used by the draft page (review.js) and
// by the notice page of manual and imported notices (notices.js).

import { store } from "./store.js";
import { api } from "./api.js";
import { h, icon, chip, field, dateInput, confirmDialog } from "./dom.js";
import {
  fmtDateTime, fmtDate, fmtNum, isoDateBR, localDate, weekday, daysUntil, fmtBRL, fmtCNPJ, plural,
  CASE_STATES, CASE_STATE_TONE, CASE_ACTIONS, NOTIFY_MODES, ORIGINS, ROLES, authorityTitle,
} from "./fmt.js";

export const caseChip = (c) => chip(CASE_STATES[c.state] || c.state, CASE_STATE_TONE[c.state] || "neutral", c.state_text);

const dl = (pairs) => h("dl", { class: "facts" }, pairs.filter(([, v]) => v != null && v !== "" && v !== false)
  .flatMap(([k, v]) => [h("dt", null, k), h("dd", null, v)]));

// mountCase renders a case into two hosts (the process and the calculus in main, the acts in
// side) and renders them again after every act recorded.
export function mountCase(c, main, side) {
  const render = (cur, said) => {
    main.replaceChildren(processCard(cur, said), penaltyCard(cur));
    side.replaceChildren(actionsCard(cur, (next, text) => render(next, text)));
    if (said) main.querySelector("#case-title").focus();
    filingsCard(cur).then((card) => { if (card) main.insertBefore(card, main.children[1] || null); });
  };
  render(c);
}

// filingsCard lists the defences and appeals filed in the licensee's portal (their acts carry
// the protocolo), with their text and attachments: what the authority decides on.
async function filingsCard(c) {
  const online = (c.events || []).some((e) => (e.action === "defence" || e.action === "appeal") && String((e.data || {}).note || "").includes("protocolo PROT-"));
  if (!online || !store.hasRole("fiscal")) return null;
  let list;
  try { list = await api(`/api/v1/cases/${c.id}/filings`); } catch { return null; }
  return h("section", { class: "card", id: "case-filings" }, h("h3", { class: "card-title" }, "Peças apresentadas pelo portal"),
    (list.items || []).map((f) => h("article", { class: "filing" },
      h("p", null, h("strong", null, `${f.kind === "appeal" ? "Recurso" : "Defesa"} — protocolo ${f.protocolo}`), ` — ${fmtDateTime(f.filed_at)}, por ${f.user}`),
      h("blockquote", { class: "quote" }, f.text),
      (f.files || []).length ? h("ul", null, f.files.map((a) => h("li", null,
        h("a", { href: `/api/v1/filings/${f.id}/files/${a.n}`, download: "" }, a.name), ` (${a.content_type}, ${a.size} bytes; SHA-256 `, h("code", null, a.sha256), ")"))) : null)));
}

// ---- The process -----------------------------------------------------------------------

// decisionsList links each decision's document (frozen as made: every copy is the same), for
// the control room and, with the portal's routes, for the licensee.
export function decisionsList(decisions) {
  if (!(decisions || []).length) return null;
  return h("div", { id: "case-decisions" }, h("h4", { class: "section-title" }, "Decisões"),
    h("ul", null, decisions.map((d) => h("li", null, `${d.title}, ${isoDateBR(d.date)}: ${d.outcome} — `,
      h("a", { href: d.pdf, download: "" }, "documento da decisão (PDF)")))));
}

function deadlineTile(c) {
  const d = c.deadline;
  if (!d || !d.date) {
    return h("div", { class: "tile" }, h("span", { class: "tile-label" }, "Prazo de defesa (Art. 55)"),
      h("span", { class: "tile-value muted" }, d ? "não calculado" : "aguarda notificação"));
  }
  const left = daysUntil(d.date);
  const open = ["notified"].includes(c.state) && left >= 0;
  const sub = c.defence_filed ? (c.defence_timely === false ? chip("defesa intempestiva", "danger") : chip("defesa no prazo", "ok"))
    : left < 0 ? chip(`encerrado há ${plural(-left, "dia", "dias")}`, "neutral")
      : left === 0 ? chip("termina hoje", "warn") : chip(`${plural(left, "dia restante", "dias restantes")}`, open ? "info" : "neutral");
  return h("div", { class: "tile tile--accent", id: "case-deadline" }, h("span", { class: "tile-label" }, "Prazo de defesa (Art. 55)"),
    h("span", { class: "tile-value" }, isoDateBR(d.date)), h("span", { class: "tile-sub" }, weekday(d.date), " ", sub));
}

function fineTile(c) {
  const a = c.assessment;
  let value = "—", sub = "cálculo não registrado";
  if (a && a.warning) { value = "sem multa"; sub = `notificação preliminar (${a.penalty && a.penalty !== "Art. 41, I" ? a.penalty : "Art. 41, I"})`; }
  else if (a) { value = fmtBRL(a.total_brl); sub = `${fmtNum(a.total_ufmp, 2)} ${a.fiscal_unit || "UFMP"}` + (a.recidivist ? " · reincidente" : ""); }
  return h("div", { class: "tile" }, h("span", { class: "tile-label" }, "Multa"), h("span", { class: "tile-value" }, value), h("span", { class: "tile-sub" }, sub));
}

function suspendedTile(c) {
  const s = c.fine_suspended || {};
  return h("div", { class: "tile" }, h("span", { class: "tile-label" }, "Exigibilidade (Art. 57)"),
    h("span", { class: "tile-value" }, s.suspended ? "suspensa" : c.state === "paid" ? "paga" : "não suspensa"),
    h("span", { class: "tile-sub" }, s.suspended ? chip(c.state === "appeal_filed" ? "recurso tempestivo pendente" : "defesa tempestiva pendente", "info") : chip("sem efeito suspensivo", "neutral")));
}

// nextTile is the next deadline of the process (the defence's, the appeal's or the payment's).
function nextTile(c) {
  const n = c.next || {};
  if (!n.deadline) {
    return h("div", { class: "tile", id: "case-next-deadline" }, h("span", { class: "tile-label" }, "Próximo prazo"),
      h("span", { class: "tile-value muted" }, "nenhum em curso"));
  }
  const left = daysUntil(n.deadline);
  return h("div", { class: "tile", id: "case-next-deadline" }, h("span", { class: "tile-label" }, "Próximo prazo"),
    h("span", { class: "tile-value" }, isoDateBR(n.deadline)),
    h("span", { class: "tile-sub" }, weekday(n.deadline), " ", left === 0 ? chip("termina hoje", "warn") : chip(plural(left, "dia restante", "dias restantes"), "info")));
}

// roleName names the least role that records an act ("Fiscal", the profile's authority title…).
const roleName = (r) => ROLES[r] || r;

// nextStep says where the process stands, the next deadline and who may record each act.
function nextStep(c) {
  const n = c.next;
  if (!n) return null;
  const who = (n.acts || []).map((a) => h("li", null, h("strong", null, ACT_LABELS[a.action] || a.label), ": ",
    roleName(a.role), a.role === "fiscal" ? " ou acima" : "", a.not_by && a.not_by.length ? ` — nunca ${a.not_by.join(" nem ")}` : ""));
  return h("div", { class: "next-step", id: "case-next" },
    h("p", null, h("strong", null, "Situação: "), n.step),
    n.deadline_text ? h("p", { class: "muted small" }, n.deadline_text) : null,
    // The electronic notice in the licensee's portal: waiting, its ciência, or the fallback to
    // the other means (docs/process.md).
    c.electronic ? h("p", { class: c.electronic.fallback ? "banner banner--warn slim" : "muted small", id: "case-electronic" },
      c.electronic.text, c.electronic.opening
        ? ` Aberto no portal em ${fmtDateTime(c.electronic.opening.opened_at)} por ${c.electronic.opening.user} (abrir não é ciência).` : "") : null,
    h("p", { class: "muted small", id: "case-final" }, n.final ? `Multa definitiva (para reincidência) desde ${isoDateBR(n.final)}.` : n.final_text),
    who.length ? h("details", { class: "explain", id: "case-who" }, h("summary", null, "Quem pode registrar os próximos atos"), h("ul", null, who)) : null);
}

function processCard(c, said) {
  const notified = c.notified || c.published ? [
    c.mode === "edital" ? `edital publicado em ${isoDateBR(c.published)}` : `${NOTIFY_MODES[c.mode] || c.mode || ""} em ${isoDateBR(c.notified)}`,
    c.refused_to_sign ? " — o autuado recusou-se a assinar (Art. 54, § 2º)" : "",
  ].join("") : null;
  const decision = c.decided ? h("span", null, `${c.outcome === "accepted" ? "defesa acolhida — auto sem efeito" : "defesa indeferida — multa confirmada"} em ${isoDateBR(c.decided)}`,
    c.decision_text ? h("q", { class: "block quote" }, c.decision_text) : null) : null;
  const sus = c.suspension ? `${isoDateBR(c.suspension.from)} a ${isoDateBR(c.suspension.to)} (${plural(c.suspension.days, "dia", "dias")})` : null;
  return h("section", { class: "card case-card", id: "case", "aria-labelledby": "case-title" },
    h("div", { class: "card-head" },
      h("h3", { class: "card-title", id: "case-title", tabindex: "-1" }, "Processo"),
      h("span", { class: "chips" }, caseChip(c), h("span", { class: "muted small", id: "case-state-text" }, c.state_text)),
      // In one column the acts come far below: a way there.
      store.hasRole("fiscal") && (c.allowed_actions || []).length ? h("button", { type: "button", class: "btn btn-small jump-to-acts", onclick: () => {
        const acts = document.getElementById("case-actions");
        acts.scrollIntoView({ block: "start" });
        acts.querySelector("input, select, textarea, button")?.focus({ preventScroll: true });
      } }, "Ir para o próximo ato") : null),
    said ? h("p", { class: "banner banner--ok slim", role: "status" }, said) : null,
    // A notificação preliminar has no fine whose exigibility a defence could suspend.
    h("div", { class: "tiles" }, deadlineTile(c), nextTile(c), fineTile(c), c.assessment && c.assessment.warning ? null : suspendedTile(c)),
    nextStep(c),
    h("p", { class: "deadline-text", id: "deadline-explanation" }, c.deadline ? c.deadline.explanation
      : "O prazo de defesa de 10 dias (Art. 55) corre a partir da notificação do autuado — em mãos, por correio com AR ou por edital (Art. 54) —, ainda não registrada."),
    c.fine_suspended && c.fine_suspended.explanation ? h("p", { class: "muted small" }, c.fine_suspended.explanation) : null,
    dl([
      ["Auto", c.notice], ["Origem", ORIGINS[c.origin] || c.origin],
      ["Emitido em", `${fmtDateTime(c.issued_at, false)}${c.issued_by ? " por " + c.issued_by : ""}`],
      ["Notificação", notified], ["Defesa apresentada", c.defence_filed ? isoDateBR(c.defence_filed) : null],
      ["Decisão", decision], ["Decisão notificada em", c.decision_notified ? isoDateBR(c.decision_notified) : null],
      ["Recurso", c.appealed ? `interposto em ${isoDateBR(c.appealed)}${c.appeal_decided ? ` — ${c.appeal_outcome === "accepted" ? "provido (auto sem efeito)" : "improvido"} em ${isoDateBR(c.appeal_decided)}` : ""}${c.appeal_notified ? `, notificado em ${isoDateBR(c.appeal_notified)}` : ""}` : null],
      ["Prazo de recurso", c.appeal_deadline && !c.appealed ? isoDateBR(c.appeal_deadline) : null],
      ["Prazo de pagamento", c.payment_deadline && !c.paid ? isoDateBR(c.payment_deadline) : null],
      ["Anulado", c.annulled ? `em ${isoDateBR(c.annulled)}: ${c.annul_reason || ""}` : null],
      ["Pagamento", c.paid ? isoDateBR(c.paid) : null],
      ["Dívida ativa", c.divida_ativa ? `inscrita em ${isoDateBR(c.divida_ativa)}` : null], ["Suspensão aplicada", sus],
      ["Multa definitiva em", c.final ? isoDateBR(c.final) : null],
    ]),
    decisionsList(c.decisions),
    h("h4", { class: "section-title" }, "Histórico do processo"),
    h("ol", { class: "case-timeline", id: "case-timeline" }, (c.events || []).map(eventItem)));
}

function eventItem(e) {
  const d = e.data || {};
  const bits = [];
  switch (e.action) {
    case "issue": if (d.notice) bits.push(`auto ${d.notice}`); break;
    case "import": if (d.status) bits.push(`situação no papel: ${CASE_STATES[d.status] || d.status}`); if (d.note) bits.push(d.note); break;
    case "notify":
      bits.push(NOTIFY_MODES[d.mode] || d.mode);
      if (d.published) bits.push(`edital publicado em ${isoDateBR(d.published)}`);
      if (d.publication) bits.push(d.publication);
      if (d.recipient) bits.push(`recebido por ${d.recipient} (${d.recipient_role})`);
      if (d.ar) bits.push(`AR nº ${d.ar}${d.ar_scan ? ` (digitalização anexada nº ${d.ar_scan})` : ""}`);
      if (d.refused_to_sign) bits.push("recusou-se a assinar (anotado pelo agente)");
      break;
    case "waiver": case "reconsider": if (d.text) bits.push(d.text); break;
    case "decide": bits.push(d.outcome === "accepted" ? "acolhida" : "indeferida"); if (d.revelia) bits.push("à revelia"); if (d.text) bits.push(`“${d.text}”`); break;
    case "decide_appeal": bits.push(d.outcome === "accepted" ? "provido" : "improvido"); if (d.text) bits.push(`“${d.text}”`); break;
    case "delivery_failed": case "annul": if (d.text) bits.push(d.text); break;
    case "suspension": bits.push(`${isoDateBR(d.from)} a ${isoDateBR(d.to)}${d.days ? ` (${plural(d.days, "dia", "dias")})` : ""}`); break;
  }
  if (d.note && e.action !== "import") bits.push("obs.: " + d.note);
  return h("li", { class: "tl-event tl-event--" + e.action, dataset: { action: e.action } },
    h("span", { class: "tl-marker", "aria-hidden": "true" }),
    h("div", { class: "tl-body" },
      h("div", { class: "tl-head" }, h("strong", null, CASE_ACTIONS[e.action] || e.action), e.date ? h("span", { class: "tl-date" }, isoDateBR(e.date)) : null),
      bits.length ? h("p", { class: "tl-detail" }, bits.filter(Boolean).join(" · ")) : null,
      h("small", { class: "muted" }, `registrado por ${e.user || "—"} em ${fmtDateTime(e.recorded_at, false)}`)));
}

// ---- The penalty calculus --------------------------------------------------------------

function noticeList(ns) {
  return h("ul", { class: "cell-list relied" }, ns.map((n) => h("li", null, h("strong", null, n.id),
    ` — infração em ${fmtDate(n.offence)}, emitido em ${fmtDate(n.issued)}`,
    n.articles && n.articles.length ? ` · ${n.articles.join("; ")}` : "", n.status ? " · " : "", n.status ? chip(CASE_STATES[n.status] || n.status, CASE_STATE_TONE[n.status] || "neutral") : null)));
}

function penaltyCard(c) {
  const a = c.assessment;
  const card = h("section", { class: "card", id: "assessment", "aria-labelledby": "assessment-title" },
    h("h3", { class: "card-title", id: "assessment-title" }, "Penalidade calculada na emissão"));
  if (!a) {
    card.append(h("p", { class: "muted" }, c.assessment_note || "Sem cálculo registrado."));
    return card;
  }
  const unit = a.fiscal_unit || "UFMP";
  card.append(...[
    a.warning ? h("div", { class: "banner banner--warn", role: "note" }, icon("warn", "icon icon-lg"),
      h("div", null, h("strong", null, "Notificação preliminar (Art. 41, I)"), h("p", null, "Primeira ocorrência de uma regra multada só na repetição: sem multa."))) : null,
    // A notificação preliminar carries no fine: no amounts to show.
    dl(a.warning ? [
      ["Medida", "notificação preliminar, sem multa"], ["Penalidade", a.penalty], ["Artigos", (a.articles || []).join("; ")],
    ] : [
      ["Penalidade", a.penalty], ["Artigos", (a.articles || []).join("; ")],
      ["Multa base", `${fmtNum(a.base_ufmp, 2)} ${unit}`],
      ["Reincidência (Art. 48)", a.recidivist ? h("span", null, chip("reincidente", "danger"), ` multa × ${fmtNum(a.factor, 2)}`) : chip("não reincidente", "ok")],
      ["Total", h("strong", null, `${fmtNum(a.total_ufmp, 2)} ${unit}`)],
      ["Valor da unidade", a.unit_value_brl ? `${fmtBRL(a.unit_value_brl)} por ${unit}${a.unit_value_from ? ` (vigente desde ${isoDateBR(a.unit_value_from)})` : ""}` : null],
      ["Total em reais (Art. 44)", h("strong", { class: "money", id: "fine-brl" }, fmtBRL(a.total_brl))],
    ]),
    a.relying_on && a.relying_on.length ? h("div", null, h("h4", { class: "section-title" }, "Autos anteriores que caracterizam a reincidência"), noticeList(a.relying_on)) : null,
    a.repeat_of && a.repeat_of.length ? h("div", null, h("h4", { class: "section-title" }, "Notificações anteriores (repetição)"), noticeList(a.repeat_of)) : null,
    a.suspension_recommended ? h("div", { class: "banner banner--warn", role: "note", id: "suspension-recommended" }, icon("warn", "icon icon-lg"),
      h("div", null, h("strong", null, `Recomenda-se suspensão de ${a.suspension_recommended.min_days} a ${a.suspension_recommended.max_days} dias (Art. 52)`),
        h("p", null, a.suspension_recommended.reason))) : null,
    a.cassacao_recommended ? h("div", { class: "banner banner--danger", role: "note", id: "cassacao-recommended" }, icon("warn", "icon icon-lg"),
      h("div", null, h("strong", null, "Recomenda-se a cassação da licença (Art. 53, III) — decisão do agente, nunca automática"),
        h("p", null, a.cassacao_recommended.reason))) : null,
    (a.explanation || []).length ? h("details", { class: "explain" }, h("summary", null, "Como o cálculo foi feito"),
      h("ul", null, a.explanation.map((s) => h("li", null, s)))) : null].filter(Boolean));
  return card;
}

// ---- The acts --------------------------------------------------------------------------

const ACT_ORDER = ["delivery_failed", "notify", "defence", "decide", "notify_decision", "appeal", "reconsider", "decide_appeal", "notify_appeal_decision",
  "pay", "waiver", "divida_ativa", "suspension", "annul"];
const ACT_LABELS = {
  delivery_failed: "Registrar tentativa frustrada", annul: "Anular de ofício",
  notify: "Registrar notificação", defence: "Registrar defesa", decide: "Registrar decisão", notify_decision: "Registrar notificação da decisão", pay: "Registrar pagamento",
  divida_ativa: "Inscrever em dívida ativa", suspension: "Aplicar suspensão", waiver: "Registrar renúncia expressa",
  reconsider: "Reconsiderar a decisão", appeal: "Registrar recurso", decide_appeal: "Decidir o recurso", notify_appeal_decision: "Registrar notificação da decisão do recurso",
};
const ACT_DONE = {
  delivery_failed: "Tentativa de entrega registrada.", annul: "Auto anulado de ofício.",
  notify: "Notificação registrada.", defence: "Defesa registrada.", decide: "Decisão registrada.", notify_decision: "Notificação da decisão registrada.", pay: "Pagamento registrado.",
  divida_ativa: "Inscrição em dívida ativa registrada.", suspension: "Suspensão registrada.", waiver: "Renúncia expressa registrada.",
  reconsider: "Decisão reconsiderada: recurso provido.", appeal: "Recurso registrado.", decide_appeal: "Decisão do recurso registrada.", notify_appeal_decision: "Notificação da decisão do recurso registrada.",
};

// mayRecord reports whether the user may record the act as the server says who may
// (c.next.acts: the least role, and the users impeded: the issuer, the defence's judge).
function mayRecord(c, action) {
  const a = ((c.next && c.next.acts) || []).find((x) => x.action === action);
  if (!a) return store.hasRole("fiscal");
  const me = store.user ? store.user.name.toLowerCase() : "";
  // The appeal is the superior authority's, never admin's (an IT role): the server refuses it.
  if (action === "decide_appeal" && store.user && store.user.role === "admin") return false;
  return store.hasRole(a.role) && !(a.not_by || []).some((u) => u.toLowerCase() === me);
}

function actionsCard(c, done) {
  const card = h("section", { class: "card decision", id: "case-actions", "aria-labelledby": "acts-title" }, h("h3", { class: "card-title", id: "acts-title" }, "Próximo ato do processo"));
  if (!store.hasRole("fiscal")) {
    card.append(h("p", { class: "muted" }, "Somente fiscais registram os atos do processo."));
    return card;
  }
  // Dívida ativa (Art. 51) only once the payment deadline has run out without payment
  // (the server refuses it before).
  const deadline = c.payment_deadline;
  const beforeDeadline = !deadline || localDate() <= deadline;
  // The acts that decide are the autoridade's (the appeal's, the superior authority's), never
  // of who issued the auto nor, for the appeal, of who decided the defence (the server refuses
  // them otherwise): the page names who may record them.
  const others = (c.allowed_actions || []).filter((a) => !mayRecord(c, a));
  const allowed = ACT_ORDER.filter((a) => (c.allowed_actions || []).includes(a) && !(a === "divida_ativa" && beforeDeadline) && !others.includes(a));
  const authorityNote = others.length ? h("p", { class: "muted small", id: "authority-only" },
    `${others.map((a) => ACT_LABELS[a]).join(", ")}: ${others.includes("decide_appeal") && others.length === 1 ? "somente a autoridade superior" : `somente a ${authorityTitle()} (Art. 57)`}, e nunca quem emitiu o auto.`) : null;
  const waiting = beforeDeadline && (c.allowed_actions || []).includes("divida_ativa")
    ? h("p", { class: "muted small", id: "divida-ativa-later" }, deadline ? `Inscrição em dívida ativa: após o prazo de pagamento, ${isoDateBR(deadline)} (Art. 51).`
      : "Inscrição em dívida ativa: só depois da notificação da decisão e do prazo de pagamento (Art. 51).") : null;
  if (!allowed.length) {
    card.append(h("p", { class: "muted" }, `Nenhum ato a registrar: auto ${c.state_text}.`), waiting || "", authorityNote || "");
    return card;
  }
  const host = h("div", { class: "act-host" });
  const buttons = allowed.map((a) => h("button", { type: "button", class: "btn btn-small", "aria-pressed": "false", dataset: { act: a }, "aria-controls": "act-form" }, ACT_LABELS[a]));
  const open = (a, focus) => {
    for (const b of buttons) b.setAttribute("aria-pressed", String(b.dataset.act === a));
    host.replaceChildren(actForm(c, a, done));
    if (focus) host.querySelector("input, select, textarea").focus();
  };
  for (const b of buttons) b.addEventListener("click", () => open(b.dataset.act, true));
  card.append(h("p", { class: "muted small" }, "Os atos ficam no histórico do auto e na auditoria, em seu nome, e não podem ser alterados depois."),
    h("div", { class: "btn-row act-buttons", role: "group", "aria-label": "Atos possíveis" }, buttons), waiting || "", authorityNote || "", host);
  // The next act of the process opens first; a failed delivery or an annulment is chosen.
  open(allowed.find((a) => a !== "delivery_failed" && a !== "annul") || allowed[0], false);
  return card;
}

function radios(name, legend, options, value) {
  return h("fieldset", { class: "radios" }, h("legend", null, legend),
    options.map(([v, label]) => h("label", { class: "check" }, h("input", { type: "radio", name, value: v, checked: v === value }), h("span", null, label))));
}

function actForm(c, action, done) {
  const today = localDate();
  const msg = h("p", { class: "form-error", role: "alert", id: "act-error" });
  const note = h("textarea", { rows: "2", maxlength: "2000", id: "act-note" });
  const date = dateInput(today, { required: true, id: "act-date" });
  const parts = [];
  let body = () => ({ date: date.iso() });
  let prepare = async (b) => b;
  let dateField = field("Data", date);
  if (action === "notify") {
    const label = h("label", { htmlFor: "act-date" }, "Data da entrega");
    dateField = h("div", { class: "field" }, label, date, h("small", { class: "hint" }, "dd/mm/aaaa; o prazo de defesa é contado a partir dela."));
    const refused = h("input", { type: "checkbox", id: "act-refused" });
    const refusedBox = h("label", { class: "check" }, refused, h("span", null, "O autuado recusou-se a assinar; a recusa foi anotada no auto (Art. 54, § 2º)"));
    // The electronic ciência is only the licensee's own, in the portal: never recorded here.
    const modes = radios("mode", "Forma da notificação (Art. 54)", [["in_person", "Pessoalmente (em mãos)"], ["mail", "Por correio com AR"],
      ["edital", "Por edital (publicação)"]], "in_person");
    const recipient = h("input", { type: "text", maxlength: "200", id: "act-recipient", autocomplete: "off" });
    const role = h("input", { type: "text", maxlength: "200", id: "act-recipient-role", autocomplete: "off" });
    const ar = h("input", { type: "text", maxlength: "40", id: "act-ar", autocomplete: "off" });
    const scan = h("input", { type: "file", id: "act-ar-scan", accept: "application/pdf,image/jpeg,image/png" });
    const publication = h("input", { type: "text", maxlength: "300", id: "act-publication", autocomplete: "off" });
    const inHand = h("div", null, field("Quem recebeu o auto (nome)", recipient), field("Qualidade ou cargo de quem recebeu", role, "Ex.: sócio-administrador, gerente da sede."));
    const byPost = h("div", null, field("Número do AR", ar), field("Digitalização do AR (PDF, JPEG ou PNG)", scan, "O AR digitalizado é anexado ao processo."));
    const edital = h("div", null, field("Publicação do edital", publication, "Diário oficial ou jornal de grande circulação, com número e página: \"Diário Oficial nº 1234, pág. 5\" (Art. 54, § 1º)."));
    const sync = () => {
      const m = modes.querySelector("input:checked").value;
      label.textContent = { in_person: "Data da entrega", mail: "Data do recebimento no AR", edital: "Data da publicação do edital" }[m];
      refusedBox.hidden = inHand.hidden = m !== "in_person";
      byPost.hidden = m !== "mail";
      edital.hidden = m !== "edital";
    };
    modes.addEventListener("change", sync);
    sync();
    parts.push(modes, dateField, inHand, refusedBox, byPost, edital);
    body = () => {
      const m = modes.querySelector("input:checked").value;
      const b = { mode: m };
      if (m === "edital") b.published = date.iso(); else b.date = date.iso();
      if (m === "in_person") { b.recipient = recipient.value.trim(); b.recipient_role = role.value.trim(); }
      if (m === "in_person" && refused.checked) b.refused_to_sign = true;
      if (m === "mail") b.ar = ar.value.trim();
      if (m === "edital") b.publication = publication.value.trim();
      return b;
    };
    // The AR's scan is uploaded to the case first; the delivery then names it.
    prepare = async (b) => {
      if (b.mode !== "mail") return b;
      const f = scan.files && scan.files[0];
      if (!f) throw new Error("Anexe a digitalização do AR.");
      const fd = new FormData();
      fd.append("kind", "ar");
      fd.append("file", f, f.name);
      const r = await fetch(`/api/v1/cases/${c.id}/attachments`, { method: "POST", credentials: "same-origin", headers: { Accept: "application/json" }, body: fd });
      const data = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(data.error || `Erro ${r.status} do servidor`);
      return { ...b, ar_scan: data.id };
    };
  } else if (action === "reconsider") {
    const text = h("textarea", { rows: "3", maxlength: "4000", required: true, id: "act-text" });
    parts.push(field("Data da reconsideração", date, "Até 5 dias da interposição do recurso (Lei nº 9.784/1999, art. 56, § 1º); depois, o recurso segue para a autoridade superior."),
      field("Fundamentação: por que as razões do recurso procedem", text));
    body = () => ({ date: date.iso(), text: text.value.trim() });
  } else if (action === "waiver") {
    const text = h("textarea", { rows: "2", maxlength: "2000", required: true, id: "act-text" });
    parts.push(field("Data da renúncia", date), field("Declaração escrita de renúncia à defesa e ao recurso", text,
      "O pagamento não é renúncia: registre só a declaração expressa do autuado (ex.: termo assinado, nº do protocolo)."));
    body = () => ({ date: date.iso(), text: text.value.trim() });
  } else if (action === "defence") {
    dateField = field("Data do protocolo da defesa", date, c.deadline && c.deadline.date ? `Prazo: até ${isoDateBR(c.deadline.date)}. Depois dele a defesa é registrada como intempestiva.` : null);
    parts.push(dateField);
  } else if (action === "decide" || action === "decide_appeal") {
    // A decision states its relatório, its fundamentação (answering each point of the defence
    // or the appeal) and its dispositivo (Lei nº 9.784/1999, art. 50).
    const report = h("textarea", { rows: "3", maxlength: "8000", required: true, minLength: "20", id: "act-report" });
    const grounds = h("textarea", { rows: "5", maxlength: "20000", required: true, minLength: "40", id: "act-grounds" });
    const ruling = h("textarea", { rows: "2", maxlength: "4000", required: true, minLength: "10", id: "act-text" });
    const outcome = action === "decide"
      ? radios("outcome", "Resultado", [["rejected", "Indeferida — multa confirmada"], ["accepted", "Acolhida — auto sem efeito"]], "rejected")
      : radios("outcome", "Resultado do recurso", [["rejected", "Improvido — multa confirmada"], ["accepted", "Provido — auto sem efeito"]], "rejected");
    parts.push(outcome, field("Data da decisão", date),
      field("Relatório", report, "O auto, a defesa ou o recurso e os pontos que levantam."),
      field("Fundamentação", grounds, "Responda a cada ponto da defesa ou do recurso, com os fatos e o fundamento jurídico."),
      field("Dispositivo", ruling, "O que se decide."));
    body = () => ({ outcome: outcome.querySelector("input:checked").value, date: date.iso(),
      report: report.value.trim(), grounds: grounds.value.trim(), ruling: ruling.value.trim(), text: ruling.value.trim() });
  } else if (action === "appeal") {
    parts.push(field("Data do protocolo do recurso", date, c.appeal_deadline ? `Prazo: até ${isoDateBR(c.appeal_deadline)}. Recurso fora do prazo não é conhecido.` : null));
  } else if (action === "notify_appeal_decision") {
    parts.push(field("Data em que o autuado recebeu a decisão do recurso", date, `O prazo para pagamento (${(store.config.payment_days || 30)} dias) corre de novo desta data.`));
  } else if (action === "delivery_failed") {
    const text = h("textarea", { rows: "2", maxlength: "2000", required: true, id: "act-text" });
    const modes = radios("mode", "Tentativa", [["in_person", "Pessoalmente (em mãos)"], ["mail", "Por correio com AR"]], "in_person");
    const seat = h("input", { type: "checkbox", id: "act-at-seat" });
    parts.push(modes, field("Data da tentativa", date), field("O que aconteceu (onde, e por que a entrega não foi possível)", text,
      "O edital (Art. 54, § 1º) só é aceito depois de esgotados os meios: tentativas em ao menos dois dias, ou por meios diferentes, um deles na sede registrada."),
      h("label", { class: "check" }, seat, h("span", null, "Tentativa feita na sede registrada do permissionário")));
    body = () => ({ mode: modes.querySelector("input:checked").value, date: date.iso(), text: text.value.trim(), ...(seat.checked ? { at_seat: true } : {}) });
  } else if (action === "annul") {
    const text = h("textarea", { rows: "3", maxlength: "4000", required: true, id: "act-text" });
    parts.push(field("Data da anulação", date), field("Motivo da anulação de ofício", text, "A Administração anula os próprios atos ilegais (Súmula 473 do STF)."));
    body = () => ({ date: date.iso(), text: text.value.trim() });
  } else if (action === "notify_decision") {
    parts.push(field("Data em que o autuado recebeu a decisão", date, `O prazo de recurso (${(store.config.appeal_days || 10)} dias), o prazo para pagamento (${(store.config.payment_days || 30)} dias) e a definitividade da multa contam desta data.`));
  } else if (action === "pay") {
    parts.push(field("Data do pagamento", date));
  } else if (action === "divida_ativa") {
    const after = c.payment_deadline ? `Só depois de terminado o prazo de pagamento (${isoDateBR(c.payment_deadline)}).` : null;
    parts.push(field("Data da inscrição (Art. 51)", date, after));
  } else if (action === "suspension") {
    const range = store.config.suspension || { min_days: 10, max_days: 45 };
    const rec = c.assessment && c.assessment.suspension_recommended;
    const days = h("input", { type: "number", min: String(range.min_days), max: String(range.max_days), step: "1", required: true, id: "act-days", value: String(rec ? rec.min_days : range.min_days), inputmode: "numeric" });
    const to = dateInput("", { id: "act-to" });
    parts.push(field("Primeiro dia da suspensão", date), field("Dias (contados o primeiro e o último)", days, `Entre ${range.min_days} e ${range.max_days} dias (Art. 52).`),
      field("Último dia (opcional)", to, "Se informado, deve bater com os dias."));
    body = () => {
      const b = { from: date.iso(), days: Number(days.value) };
      if (to.iso()) b.to = to.iso();
      return b;
    };
  }
  const submit = h("button", { type: "submit", class: "btn btn-primary", id: "act-submit" }, ACT_LABELS[action]);
  const form = h("form", { class: "act-form", id: "act-form", novalidate: true, dataset: { act: action } },
    ...parts, field("Observação (opcional)", note, null), msg, h("div", { class: "btn-row" }, submit));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    const b = { action, ...body() };
    if (note.value.trim()) b.note = note.value.trim();
    if (!form.checkValidity()) {
      const bad = form.querySelector(":invalid");
      msg.textContent = "Confira os campos: " + (bad && bad.validationMessage ? bad.validationMessage : "dado obrigatório ou inválido") + ".";
      if (bad) bad.focus();
      return;
    }
    const ok = await confirmDialog(ACT_LABELS[action] + "?", actSummary(c, b), "Registrar");
    if (!ok) return;
    submit.disabled = true;
    try {
      const next = await api(`/api/v1/cases/${c.id}/actions`, { method: "POST", body: await prepare(b) });
      done(next, ACT_DONE[action]);
    } catch (e) {
      msg.textContent = e.message;
      submit.disabled = false;
    }
  });
  return form;
}

function actSummary(c, b) {
  const when = isoDateBR(b.date || b.published || b.from);
  const what = {
    notify: `Notificação do auto ${c.notice} ${NOTIFY_MODES[b.mode]} em ${when}${b.recipient ? `, recebida por ${b.recipient} (${b.recipient_role})` : ""}${b.ar ? `, AR nº ${b.ar}` : ""}${b.refused_to_sign ? ", com recusa de assinatura" : ""}.`,
    defence: `Defesa do auto ${c.notice} apresentada em ${when}.`,
    decide: `Decisão de ${when}: defesa ${b.outcome === "accepted" ? "acolhida (o auto fica sem efeito)" : "indeferida (a multa fica confirmada)"}.`,
    pay: `Pagamento da multa do auto ${c.notice} em ${when}.`,
    reconsider: `Reconsideração, em ${when}, da decisão sobre o auto ${c.notice}: o recurso é provido e o auto fica sem efeito.`,
    waiver: `Renúncia expressa à defesa e ao recurso no auto ${c.notice}, declarada em ${when}.`,
    divida_ativa: `Inscrição da multa do auto ${c.notice} em dívida ativa em ${when}.`,
    suspension: `Suspensão de ${plural(b.days, "dia", "dias")} a partir de ${when}, aplicada no auto ${c.notice}.`,
    delivery_failed: `Tentativa frustrada de entrega do auto ${c.notice} em ${when}.`,
    annul: `Anulação de ofício do auto ${c.notice} em ${when}.`,
    notify_decision: `Notificação da decisão sobre o auto ${c.notice} em ${when}.`,
    appeal: `Recurso contra a decisão sobre o auto ${c.notice} interposto em ${when}.`,
    decide_appeal: `Decisão de ${when}: recurso ${b.outcome === "accepted" ? "provido (o auto fica sem efeito)" : "improvido (a multa fica confirmada)"}.`,
    notify_appeal_decision: `Notificação da decisão do recurso do auto ${c.notice} em ${when}.`,
  }[b.action];
  return what + " O ato fica registrado em seu nome e não pode ser desfeito.";
}

// licenseeText names the licensee of a case: razão social and CNPJ when known.
export function licenseeText(c) {
  if (!c.licensee && !c.licensee_name) return "não identificado";
  return [c.licensee_name, c.licensee_cnpj ? "CNPJ " + fmtCNPJ(c.licensee_cnpj) : null, c.licensee ? `(${c.licensee})` : null].filter(Boolean).join(" ");
}
