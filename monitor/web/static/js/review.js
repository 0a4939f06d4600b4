// The review queue: machine-made drafts of autos de infração waiting for an agent, and each
// draft's facts, integrity and evidence seal, with the decision (issue or dismiss with a reason).

import { store } from "./store.js";
import { api, superseding } from "./api.js";
import { h, icon, chip, field, emptyRow, tableWrap, theadOf, confirmDialog } from "./dom.js";
import { fmtDateTime, fmtDuration, fmtValue, fmtNum, fmtBRL, isoDateBR, ruleName, RULES, DRAFT_STATUS, CATEGORIES, SOURCES, AREAS, CLOSED, CASE_STATES } from "./fmt.js";
import { mountCase, caseChip } from "./cases.js";
import { licenseeEl, licenseeName, penaltyOf } from "./names.js";
import { toastOk } from "./toast.js";

const STATUS_TONE = { draft: "warn", issued: "ok", dismissed: "neutral" };

export function integrityChip(d) {
  if (!d.integrity) return chip("não verificada", "neutral");
  return d.integrity === "ok" ? chip("íntegro", "ok", "Hash, assinatura e encadeamento conferem") : chip("violada", "danger", d.integrity);
}

export const reviewView = {
  title: "Revisão",
  mount(el, id) {
    if (id) return mountDraft.call(this, el, decodeURIComponent(id));
    return mountQueue.call(this, el);
  },
  unmount() { if (this.off) this.off(); this.off = null; },
};

// settleNote says when a draft comes (GET /api/v1/config's draft_settle_s and
// verification_wait_s): an episode that has just closed has no draft yet, and one that needs an
// agent's verification waits for it; the agent should know for how long that is expected.
function settleNote() {
  const s = store.config.draft_settle_s;
  if (!s) return null;
  const w = store.config.verification_wait_s;
  return h("p", { class: "muted small", id: "draft-settle" },
    `Cada minuta é feita ${fmtDuration(s)} depois da última alteração do seu episódio (encerramento ou dados atrasados), ` +
    "para que os dados dos minutos seguintes — parte das evidências — tenham chegado. Um episódio recém-encerrado ainda não tem minuta." +
    (w ? ` Um episódio que precisa da verificação de um agente espera por ela até ${fmtDuration(w)}; a verificação registrada nesse prazo entra na mesma minuta.` : ""));
}

function mountQueue(el) {
  let status = sessionStorage.getItem("trenzinho.review.status") || "draft";
  const tbody = h("tbody");
  const info = h("p", { class: "muted", role: "status" });
  const more = h("button", { type: "button", class: "btn", hidden: true }, "Carregar mais");
  const vehicle = h("input", { type: "search", placeholder: "ex.: PIU-001", autocomplete: "off" });
  const rule = h("select", null, h("option", { value: "" }, "Todas as regras"), Object.entries(RULES).map(([k, v]) => h("option", { value: k }, v)));
  // For issued notices, the state of their process (GET /api/v1/cases?origin=draft&state=…).
  const caseState = h("select", { id: "case-state-filter" }, h("option", { value: "" }, "Todas"),
    ["issued", "notified", "defence_filed", "confirmed", "defence_accepted", "paid", "dividaativa"].map((k) => h("option", { value: k }, CASE_STATES[k])));
  caseState.value = sessionStorage.getItem("trenzinho.review.case") || "";
  const caseField = field("Processo", caseState);
  let items = [], cursor = "";
  const tabs = h("div", { class: "segmented", role: "group", "aria-label": "Situação" },
    ...[["draft", "Pendentes"], ["issued", "Emitidos"], ["dismissed", "Arquivados"], ["", "Todos"]].map(([k, label]) =>
      h("button", { type: "button", "aria-pressed": String(k === status), dataset: { status: k }, onclick: () => {
        status = k; sessionStorage.setItem("trenzinho.review.status", k);
        caseField.hidden = !cases || k !== "issued";
        for (const b of tabs.children) b.setAttribute("aria-pressed", String(b.dataset.status === k));
        load();
      } }, label)));
  const visible = () => items.filter((d) => (!vehicle.value.trim() || d.vehicle.toLowerCase().includes(vehicle.value.trim().toLowerCase())) &&
    (!rule.value || (d.rules || []).includes(rule.value)));
  const render = () => {
    const list = visible();
    tbody.replaceChildren(...(list.length ? list.map(row) : [emptyRow(9, status === "draft" ? "Nenhuma minuta aguardando revisão." : "Nenhum auto com esses filtros.")]));
    info.textContent = `${list.length} de ${items.length} carregado(s)`;
  };
  const row = (d) => h("tr", { dataset: { draft: d.id }, class: store.hasRole("fiscal") ? "is-clickable" : "" },
    h("td", null, fmtDateTime(d.created_at)),
    h("td", { class: "nowrap" }, h("strong", null, d.vehicle)),
    h("td", { class: "col-low" }, licenseeEl(d.licensee)),
    // A draft may name its driver: only fiscal and above open it (the API refuses viewers).
    h("td", null, store.hasRole("fiscal") ? h("a", { href: "#/revisao/" + encodeURIComponent(d.id) }, (d.rules || []).map(ruleName).join(" + "))
      : (d.rules || []).map(ruleName).join(" + ")),
    h("td", { class: "col-low" }, (d.articles || []).join("; ")),
    h("td", null, penaltyCell(d)),
    h("td", { class: "num" }, fineCell(d)),
    h("td", { class: "col-low" }, d.case ? h("span", { class: "muted" }, "—") : integrityChip(d)),
    h("td", null, chip(d.notice || DRAFT_STATUS[d.status] || d.status, STATUS_TONE[d.status] || "neutral"), d.case ? h("span", { class: "block" }, caseChip(d.case)) : null));
  tbody.addEventListener("click", (ev) => {
    const tr = ev.target.closest("tr[data-draft]");
    if (tr && !ev.target.closest("a") && store.hasRole("fiscal")) location.hash = "#/revisao/" + encodeURIComponent(tr.dataset.draft);
  });
  const cases = !!store.config.cases;
  caseField.hidden = !cases || status !== "issued";
  // fromCase shows a draft's case as a row of the queue.
  const fromCase = (c) => ({ id: c.draft_id, created_at: c.issued_at, vehicle: c.vehicle || "", licensee: c.licensee, rules: c.rules, articles: c.articles,
    penalty: c.penalty, fine_ufmp: c.assessment ? c.assessment.total_ufmp : null, status: "issued", notice: c.notice, case: c });
  // Each load supersedes the ones before it: a tab and then a filter chosen quickly send two
  // requests, and the list must be the last one's even when the first answers last.
  const begin = superseding();
  const load = async (append = false) => {
    const current = begin();
    info.textContent = "Carregando…";
    if (cases && status === "issued" && caseState.value) {
      try {
        const q = new URLSearchParams({ limit: "200", origin: "draft", state: caseState.value });
        if (append && cursor) q.set("cursor", cursor);
        const page = await api("/api/v1/cases?" + q);
        if (!current()) return;
        const got = page.items.filter((c) => c.draft_id).map(fromCase);
        items = append ? items.concat(got) : got;
        cursor = page.next_cursor || "";
        more.hidden = !cursor;
        render();
      } catch (e) { if (current()) info.textContent = e.message; }
      return;
    }
    try {
      const q = new URLSearchParams({ limit: "200" });
      if (status) q.set("status", status);
      if (append && cursor) q.set("cursor", cursor);
      const page = await api("/api/v1/drafts?" + q);
      if (!current()) return;
      items = append ? items.concat(page.items) : page.items;
      cursor = page.next_cursor || "";
      more.hidden = !cursor;
      render();
    } catch (e) { if (current()) info.textContent = e.message; }
  };
  vehicle.addEventListener("input", render);
  rule.addEventListener("change", render);
  caseState.addEventListener("change", () => { sessionStorage.setItem("trenzinho.review.case", caseState.value); load(); });
  more.addEventListener("click", () => load(true));
  el.append(
    h("div", { class: "page-head" }, h("p", { class: "lead" }, "Minutas feitas pelo monitor a partir dos episódios encerrados. Nada é emitido sem a decisão de um agente."),
      settleNote()),
    h("div", { class: "card" },
      h("div", { class: "toolbar" }, tabs, field("Veículo", vehicle), field("Regra", rule), caseField),
      tableWrap("Fila de revisão", h("table", { class: "table", id: "drafts-table" },
        theadOf(["Criada em", "Veículo", ["Permissionário", "col-low"], "Infrações", ["Artigos", "col-low"], "Penalidade", "Multa (UFMP)", ["Integridade", "col-low"], "Situação"]),
        tbody)),
      h("div", { class: "table-foot" }, info, more)));
  this.off = store.on("draft", ({ draft }) => {
    const i = items.findIndex((d) => d.id === draft.id);
    if (i >= 0) items[i] = { ...items[i], ...draft };
    else if (caseField.hidden === false && caseState.value) return; // a list of cases: reloaded on demand
    else if (!status || draft.status === status) items.unshift(draft);
    if (status) items = items.filter((d) => d.status === status);
    render();
  });
  load();
}

async function mountDraft(el, id) {
  el.append(h("p", { class: "muted", role: "status" }, "Carregando a minuta…"));
  let d;
  try {
    d = await api("/api/v1/drafts/" + encodeURIComponent(id));
  } catch (e) {
    el.replaceChildren(h("div", { class: "card" }, h("p", { class: "form-error" }, e.message), h("a", { href: "#/revisao" }, "Voltar à fila")));
    return;
  }
  if (!el.isConnected) return;
  renderDraft(el, d);
  focusTitle(el);
  this.off = store.on("draft", async ({ draft }) => {
    if (draft.id !== id || draft.status === d.status) return;
    try { d = await api("/api/v1/drafts/" + encodeURIComponent(id)); renderDraft(el, d); focusTitle(el); } catch { /* keep the page */ }
  });
}

// focusTitle moves the focus to the draft's title, so that a keyboard or screen reader user
// starts reading the draft (and not the page behind it).
function focusTitle(el) {
  const t = el.querySelector("#draft-title");
  if (t) t.focus({ preventScroll: true });
}

// driverText is the draft's driver as the agent reads it: name and CNH when the user may see
// them, and how the driver was identified.
function driverText(dr) {
  if (!dr) return "não identificado (sem cartão do tacógrafo nem condutor designado no cadastro)";
  const who = dr.name ? dr.name + (dr.cnh_number ? ` — CNH ${dr.cnh_number}${dr.cnh_category ? " (" + dr.cnh_category + ")" : ""}` : "") : "";
  return who ? `${who}; identificado por ${dr.identification}` : dr.identification;
}

const pdfURL = (d) => `/api/v1/drafts/${encodeURIComponent(d.id)}/pdf`;

// togglePreview shows the draft's PDF, as the server renders it, inside the page (the PDF is
// loaded on the first opening only).
function togglePreview(btn, d) {
  const box = document.getElementById("pdf-preview");
  const open = box.hidden;
  box.hidden = !open;
  btn.setAttribute("aria-expanded", String(open));
  if (open && !box.querySelector("iframe")) {
    box.append(h("iframe", { src: pdfURL(d), title: "PDF do auto " + (d.notice || d.id), class: "pdf-frame" }));
  }
  if (open) box.scrollIntoView({ behavior: "smooth", block: "start" });
}

function renderDraft(el, d) {
  const doc = d.draft || {};
  const ok = d.integrity === "ok";
  const pending = d.status === "draft";
  const pen = penaltyOf(d);
  const warning = pen.kind === "warning";
  const title = d.notice ? `${warning ? "Notificação preliminar" : "Auto de infração"} ${d.notice}` : warning ? "Minuta de notificação preliminar" : "Minuta de auto de infração";
  const integrity = h("div", { class: "banner " + (ok ? "banner--ok" : "banner--danger"), id: "integrity", role: ok ? "status" : "alert" },
    icon(ok ? "shield-ok" : "shield-bad", "icon icon-lg"),
    h("div", null, h("strong", null, ok ? "Integridade verificada" : "Integridade violada"),
      h("p", null, ok ? "O pacote de evidências confere com o hash, a assinatura do monitor e o encadeamento com o auto anterior."
        : d.integrity + ". Este auto não pode ser emitido nem exportado.")));
  const warnings = (doc.warnings || []).length ? h("div", { class: "banner banner--warn", role: "note" }, icon("warn", "icon icon-lg"),
    h("div", null, h("strong", null, d.status === "draft" ? "Atenção antes de decidir" : "Avisos da minuta"), h("ul", null, doc.warnings.map((w) => h("li", null, w))))) : null;
  const dl = (pairs) => h("dl", { class: "facts" }, pairs.filter(([, v]) => v != null && v !== "").flatMap(([k, v]) => [h("dt", null, k), h("dd", null, v)]));
  const facts = (doc.facts || []).map((f, i) => h("article", { class: "fact" },
    h("h4", null, `Fato ${i + 1}: ${ruleName(f.rule)} — ${f.article}`),
    h("p", { class: "fact-desc" }, f.description),
    f.legal_text ? h("blockquote", { class: "legal" }, f.legal_text) : null,
    dl([
      ["Período", `${fmtDateTime(f.start)} a ${fmtDateTime(f.end)} (${fmtDuration(f.duration_s)})`],
      ["Pico", (f.estimate ? "≈ " : "") + fmtValue(f.peak, f.unit) + (f.estimate ? " (estimativa no receptor)" : "")],
      ["Limite", fmtValue(f.limit, f.unit) + (f.tolerance ? ` + tolerância de ${fmtValue(f.tolerance, f.unit)}` : "")],
      ["Local", f.site ? h("span", null, `${f.site.name} (${CATEGORIES[f.site.category] || f.site.kind}) a ${fmtValue(f.site.distance_m, "m", 0)} `,
        f.site.verified ? chip("verificado", "ok") : chip("não verificado", "warn")) : null],
      ["Zona NBR 10151", f.area ? AREAS[f.area] || f.area : null],
      ["Posição", `${fmtNum(f.lat, 6)}; ${fmtNum(f.lon, 6)}`],
      ["Instrumento", SOURCES[f.source] || f.source],
      ["Encerramento", f.closed_reason ? CLOSED[f.closed_reason] || f.closed_reason : null],
      ["Evidências", h("span", null, `${f.evidence_count} leitura(s) · `, h("a", { href: "#/episodio/" + encodeURIComponent(f.episode_id) }, "ver trajeto e gráficos"))],
    ])));
  const sealed = d.sealed || {};
  const addenda = (d.addenda || []).length ? h("section", { class: "card" }, h("h3", { class: "card-title" }, "Adendos (dados recebidos depois da minuta)"),
    h("ul", null, d.addenda.map((a) => h("li", null, `${fmtDateTime(a.created_at)} — episódio ${a.episode_id}`)))) : null;
  const decided = !pending ? h("section", { class: "card" }, h("h3", { class: "card-title" }, "Decisão"),
    dl([["Situação", chip(DRAFT_STATUS[d.status] || d.status, STATUS_TONE[d.status])], ["Número do auto", d.notice],
      ["Decidido por", d.decided_by], ["Em", d.decided_at ? fmtDateTime(d.decided_at) : null], ["Motivo / observações", d.reason]])) : null;

  // Once issued: the notice's process (cases.js).
  const caseMain = d.case ? h("div", { class: "case-host" }) : null;
  const caseSide = d.case ? h("div", { class: "case-host" }) : null;
  if (d.case) mountCase(d.case, caseMain, caseSide);

  el.replaceChildren(
    h("div", { class: "page-head page-head--split" },
      h("div", null, h("a", { class: "back-link", href: "#/revisao" }, icon("back"), "Fila de revisão"),
        h("h2", { class: "page-title", id: "draft-title", tabindex: "-1" }, title),
        h("p", { class: "muted" }, `${doc.municipality || ""} · ${doc.fiscal_organ || ""}`)),
      h("div", { class: "head-actions" }, chip(d.notice || DRAFT_STATUS[d.status] || d.status, STATUS_TONE[d.status] || "neutral"),
        // The PDF names the driver: fiscal and above (the API refuses it to viewers).
        store.hasRole("fiscal") ? h("button", { type: "button", class: "btn", id: "pdf-preview-btn", "aria-expanded": "false", "aria-controls": "pdf-preview",
          onclick: (e) => togglePreview(e.currentTarget, d) }, icon("file"), "Pré-visualizar PDF") : null,
        store.hasRole("fiscal") ? h("a", { class: "btn", href: pdfURL(d), target: "_blank", rel: "noopener" }, icon("file"), "Abrir PDF") : null,
        store.hasRole("fiscal") && ok ? h("a", { class: "btn", href: `/api/v1/drafts/${encodeURIComponent(d.id)}/export`, download: d.id + ".json" }, icon("download"), "Exportar selado") : null)),
    integrity, warnings || "",
    h("div", { class: "draft-grid" },
      h("div", { class: "draft-main" },
        h("section", { class: "card" }, h("h3", { class: "card-title" }, "Identificação e enquadramento"),
          dl([
            ["Veículo", h("span", null, h("a", { href: "#/mapa/" + encodeURIComponent(d.vehicle) }, d.vehicle), doc.unregistered ? " " : "", doc.unregistered ? chip("veículo não cadastrado", "warn") : null)],
            ["Permissionário", d.licensee ? licenseeEl(d.licensee) : "não cadastrado"],
            ["Condutor", driverText(doc.driver)],
            ["Infrações", (d.rules || []).map(ruleName).join(" + ")],
            ["Artigos", (d.articles || []).join("; ")],
            ["Penalidade", pen.penalty !== d.penalty && d.penalty ? `${pen.penalty} (minuta: ${d.penalty})` : pen.penalty],
            ["Multa", fineText(d, pen, doc)],
            ["Lei", doc.law],
            ["Período dos fatos", doc.start ? `${fmtDateTime(doc.start)} a ${fmtDateTime(doc.end)}` : null],
            ["Minuta criada em", fmtDateTime(d.created_at)],
            ["Perfil legal", doc.profile_id ? `${doc.profile_id} (${/^\d{4}-\d{2}-\d{2}$/.test(doc.profile_version || "") ? isoDateBR(doc.profile_version) : doc.profile_version})` : null],
          ])),
        caseMain,
        h("section", { class: "card pdf-preview", id: "pdf-preview", hidden: true }, h("h3", { class: "card-title" }, "Pré-visualização do PDF")),
        h("section", { class: "card" }, h("h3", { class: "card-title" }, `Fatos (${(doc.facts || []).length})`), ...facts),
        addenda),
      h("aside", { class: "draft-side" },
        pending ? decisionCard(d, ok) : decided,
        caseSide,
        h("section", { class: "card" }, h("h3", { class: "card-title" }, "Selo de evidências"),
          dl([["Posição na cadeia", String(sealed.seq ?? "—")], ["SHA-256 do pacote", h("code", { class: "hash" }, sealed.hash || "—")],
            ["Hash anterior", h("code", { class: "hash" }, sealed.prev_hash || "— (primeiro auto)")],
            ["Assinatura (ed25519)", h("code", { class: "hash" }, sealed.signature || "—")],
            ["Chave pública do monitor", h("code", { class: "hash" }, sealed.public_key || "—")], ["Software", doc.software_version]]),
          h("p", { class: "muted small" }, "O arquivo exportado pode ser conferido fora do sistema com “monitor verify”.")))));
}

// fineText: the fine of a draft, or of its notice once issued (the calculus made at issue).
function fineText(d, pen, doc) {
  const a = d.case && d.case.assessment;
  if (pen.kind === "warning") return a ? "sem multa: notificação preliminar (Art. 41, I), conforme o cálculo da emissão" : `${pen.text}; a repetição é conferida na emissão`;
  if (pen.kind === "none") return pen.text;
  if (a) return `${fmtNum(a.total_ufmp, 2)} ${a.fiscal_unit || "UFMP"} = ${fmtBRL(a.total_brl)} (calculada na emissão${a.recidivist ? ", com reincidência" : ""})`;
  return `${fmtNum(d.fine_ufmp, 2)} ${doc.fiscal_unit || "UFMP"} (valor em R$ calculado na emissão; reincidência conferida na emissão)`;
}

function decisionCard(d, ok) {
  if (!store.hasRole("fiscal")) {
    return h("section", { class: "card" }, h("h3", { class: "card-title" }, "Decisão"), h("p", { class: "muted" }, "Somente fiscais podem emitir ou arquivar autos."));
  }
  const reason = h("textarea", { name: "reason", rows: "3", maxlength: "2000", placeholder: "Obrigatório para arquivar; opcional ao emitir." });
  const msg = h("p", { class: "form-error", role: "alert" });
  const pen = penaltyOf(d);
  const warning = pen.kind === "warning";
  // Every reason the server would refuse the issue for (issue_blockers), shown before trying;
  // the button stays disabled and says why.
  const blockers = d.issue_blockers || [];
  const blocked = blockers.length > 0;
  const why = blocked ? `Não pode ser emitido: ${blockers.map((b) => b.text).join(" ")}` : "";
  const blockersEl = blocked ? h("div", { class: "banner banner--warn issue-blockers", id: "issue-blockers", role: "note" },
    h("strong", null, blockers.length === 1 ? "Impedimento à emissão" : `Impedimentos à emissão (${blockers.length})`),
    h("ul", null, ...blockers.map((b) => h("li", { "data-code": b.code }, b.text)))) : null;
  const issueBtn = h("button", { type: "button", class: "btn btn-primary", id: "issue-btn", disabled: !ok || blocked,
    title: why || null, "aria-describedby": blocked ? "issue-blockers" : null }, warning ? "Emitir notificação" : "Emitir auto");
  const dismissBtn = h("button", { type: "button", class: "btn btn-danger-outline", id: "dismiss-btn", disabled: !ok }, "Arquivar");
  const decide = async (decision) => {
    msg.textContent = "";
    if (decision === "dismiss" && reason.value.trim().length < 5) {
      msg.textContent = "Informe o motivo do arquivamento (pelo menos 5 caracteres).";
      reason.focus();
      return;
    }
    const confirmed = await confirmDialog(
      decision === "issue" ? (warning ? "Emitir a notificação preliminar?" : "Emitir o auto de infração?") : "Arquivar a minuta?",
      decision === "issue"
        ? `${warning ? "A notificação" : "O auto"} será numerad${warning ? "a" : "o"} e registrad${warning ? "a" : "o"} em seu nome. Veículo ${d.vehicle}, ${d.penalty}, ${pen.text}. A penalidade (e uma eventual repetição ou reincidência) é calculada na emissão.`
        : `A minuta será arquivada com o motivo informado, em seu nome. Esta decisão não pode ser desfeita.`,
      decision === "issue" ? "Emitir" : "Arquivar");
    if (!confirmed) return;
    issueBtn.disabled = dismissBtn.disabled = true;
    try {
      const res = await api(`/api/v1/drafts/${encodeURIComponent(d.id)}/decision`, { method: "POST", body: { decision, reason: reason.value.trim() } });
      store.applyDraft(res);
      toastOk(decision === "issue" ? `${res.notice ? "Emitido: " + res.notice : "Emitido"} — veículo ${d.vehicle}.` : `Minuta arquivada — veículo ${d.vehicle}.`);
    } catch (e) {
      msg.textContent = e.message;
      issueBtn.disabled = blocked;
      dismissBtn.disabled = false;
    }
  };
  issueBtn.addEventListener("click", () => decide("issue"));
  dismissBtn.addEventListener("click", () => decide("dismiss"));
  return h("section", { class: "card decision", id: "decision" }, h("h3", { class: "card-title" }, "Decisão do agente"),
    h("p", { class: "muted small" }, "Confira os fatos, as evidências e os avisos. A decisão fica registrada na auditoria."),
    blockersEl, field("Motivo / observações", reason), msg,
    h("div", { class: "btn-row" }, issueBtn, dismissBtn));
}

// penaltyCell: the penalty article, and "notificação preliminar" when the first offence is not fined.
function penaltyCell(d) {
  const p = penaltyOf(d);
  return h("span", null, p.penalty || "—", p.kind === "warning" ? h("small", { class: "muted block" }, "notificação preliminar") : null);
}
// fineCell: the fine in the fiscal unit, "—" when there is none.
function fineCell(d) {
  const p = penaltyOf(d);
  if (p.kind !== "fine") return h("span", { class: "muted", title: p.text }, "—");
  return fmtNum(d.case && d.case.assessment ? d.case.assessment.total_ufmp : d.fine_ufmp, 2);
}
