// Autos: every notice with its process (issued drafts, manual notices written in the street,
// imported paper notices), the page of one manual or imported notice, the form of a manual
// notice (fiscal) and the import of paper notices (supervisor). docs/api.md, "Cases".
//
// Routes: #/autos, #/autos/novo, #/autos/importar, #/autos/{id}.

import { store } from "./store.js";
import { api, listAll, superseding } from "./api.js";
import { h, icon, field, emptyRow, dateInput, tableWrap, theadOf, confirmDialog } from "./dom.js";
import { fmtDateTime, fmtDate, fmtNum, fmtBRL, isoDateBR, localDate, offsetMinutes, plural, CASE_STATES, ORIGINS } from "./fmt.js";
import { mountCase, caseChip, licenseeText } from "./cases.js";
import { licenseeEl } from "./names.js";

// caseHref: the page of a case (a draft's case lives on the draft's page).
// Viewers may not read drafts (they may name the driver): they get the case's own page.
export const caseHref = (c) => (c.origin === "draft" && c.draft_id && store.hasRole("fiscal") ? "#/revisao/" + encodeURIComponent(c.draft_id) : "#/autos/" + c.id);

export const noticesView = {
  title: "Autos",
  mount(el, arg) {
    if (!store.config.cases) {
      el.append(h("section", { class: "card" }, h("h2", { class: "card-title" }, "Processos não disponíveis"),
        h("p", { class: "muted" }, "Este monitor não mantém os processos dos autos emitidos.")));
      return;
    }
    if (arg === "novo") return mountManual(el);
    if (arg === "importar") return mountImport(el);
    if (arg) return mountNotice.call(this, el, arg);
    return mountList(el);
  },
  unmount() {},
};

// ---- The list --------------------------------------------------------------------------

function mountList(el) {
  const state = h("select", { id: "cases-state" }, h("option", { value: "" }, "Todas"), Object.entries(CASE_STATES).map(([k, v]) => h("option", { value: k }, v)));
  const origin = h("select", { id: "cases-origin" }, h("option", { value: "" }, "Todas"), Object.entries(ORIGINS).map(([k, v]) => h("option", { value: k }, v)));
  const licensee = h("input", { type: "search", autocomplete: "off", placeholder: "ex.: L1", id: "cases-licensee" });
  const saved = JSON.parse(sessionStorage.getItem("trenzinho.cases.filter") || "{}");
  state.value = saved.state || "";
  origin.value = saved.origin || "";
  licensee.value = saved.licensee || "";
  const tbody = h("tbody");
  const info = h("p", { class: "muted", role: "status" });
  const more = h("button", { type: "button", class: "btn", hidden: true }, "Carregar mais");
  let items = [], cursor = "";
  const begin = superseding();
  const load = async (append = false) => {
    const current = begin();
    info.textContent = "Carregando…";
    const q = new URLSearchParams({ limit: "100" });
    if (state.value) q.set("state", state.value);
    if (origin.value) q.set("origin", origin.value);
    if (licensee.value.trim()) q.set("licensee", licensee.value.trim());
    if (append && cursor) q.set("cursor", cursor);
    sessionStorage.setItem("trenzinho.cases.filter", JSON.stringify({ state: state.value, origin: origin.value, licensee: licensee.value.trim() }));
    try {
      const page = await api("/api/v1/cases?" + q);
      if (!current()) return;
      items = append ? items.concat(page.items) : page.items;
      cursor = page.next_cursor || "";
      more.hidden = !cursor;
      tbody.replaceChildren(...(items.length ? items.map(caseRow) : [emptyRow(10, "Nenhum auto com esses filtros.")]));
      info.textContent = `${plural(items.length, "auto", "autos")}` + (cursor ? " (há mais)" : "");
    } catch (e) { if (current()) info.textContent = e.message; }
  };
  tbody.addEventListener("click", (ev) => {
    const tr = ev.target.closest("tr[data-href]");
    if (tr && !ev.target.closest("a")) location.hash = tr.dataset.href;
  });
  state.addEventListener("change", () => load());
  origin.addEventListener("change", () => load());
  more.addEventListener("click", () => load(true));
  el.append(
    h("div", { class: "page-head page-head--split" },
      h("p", { class: "lead" }, "Todos os autos de infração com o seu processo: emitidos a partir das minutas do monitor, lavrados na rua pelos agentes e importados dos autos em papel. Todos contam para a reincidência."),
      h("div", { class: "head-actions" },
        store.hasRole("fiscal") ? h("a", { class: "btn btn-primary", href: "#/autos/novo", id: "manual-new" }, icon("plus"), "Lavrar auto na rua") : null,
        store.hasRole("supervisor") ? h("a", { class: "btn", href: "#/autos/importar", id: "import-link" }, icon("upload"), "Importar autos em papel") : null)),
    h("section", { class: "card" },
      h("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); load(); } },
        field("Situação", state), field("Origem", origin), field("Permissionário", licensee), h("button", { type: "submit", class: "btn" }, "Filtrar")),
      tableWrap("Autos", h("table", { class: "table", id: "cases-table" },
        theadOf(["Auto", ["Origem", "col-low"], "Veículo", ["Permissionário", "col-low"], ["Artigos", "col-low"], "Infração em", ["Emitido em", "col-low"], "Multa", "Prazo de defesa", "Situação"]),
        tbody)),
      h("div", { class: "table-foot" }, info, more)));
  load();
}

export function caseRow(c) {
  const a = c.assessment;
  return h("tr", { class: "is-clickable", dataset: { case: c.id, href: caseHref(c), state: c.state } },
    h("th", { scope: "row", class: "nowrap" }, h("a", { href: caseHref(c) }, c.notice)),
    h("td", { class: "col-low" }, ORIGINS[c.origin] || c.origin),
    h("td", { class: "nowrap" }, c.vehicle || h("span", { class: "muted" }, "—")),
    h("td", { class: "col-low" }, c.licensee_name ? h("span", { title: c.licensee ? "Permissionário " + c.licensee : null }, c.licensee_name) : licenseeEl(c.licensee, "—")),
    h("td", { class: "col-low" }, (c.articles || []).join("; ")),
    h("td", { class: "nowrap" }, fmtDate(c.offence_at)),
    h("td", { class: "nowrap col-low" }, fmtDate(c.issued_at)),
    h("td", { class: "num" }, a ? (a.warning ? h("span", { title: "Notificação preliminar (Art. 41, I): sem multa" }, "—", h("small", { class: "muted block" }, "notificação preliminar")) : fmtBRL(a.total_brl)) : h("span", { class: "muted" }, "—"),
      a && !a.warning ? h("small", { class: "muted block" }, `${fmtNum(a.total_ufmp, 2)} ${a.fiscal_unit || "UFMP"}`) : null),
    h("td", { class: "nowrap" }, c.deadline && c.deadline.date ? isoDateBR(c.deadline.date) : h("span", { class: "muted" }, "—")),
    h("td", null, caseChip(c), h("small", { class: "muted block" }, c.state_text)));
}

// ---- One manual or imported notice ------------------------------------------------------

async function mountNotice(el, id) {
  el.append(h("p", { class: "muted", role: "status" }, "Carregando o auto…"));
  let c;
  try {
    c = await api("/api/v1/cases/" + encodeURIComponent(id));
  } catch (e) {
    el.replaceChildren(h("div", { class: "card" }, h("p", { class: "form-error" }, e.message), h("a", { href: "#/autos" }, "Voltar aos autos")));
    return;
  }
  if (!el.isConnected) return;
  if (c.origin === "draft" && c.draft_id) { location.replace(caseHref(c)); return; }
  const m = c.manual || {};
  const main = h("div", { class: "draft-main" });
  const side = h("aside", { class: "draft-side" });
  el.replaceChildren(
    h("div", { class: "page-head page-head--split" },
      h("div", null, h("a", { class: "back-link", href: "#/autos" }, icon("back"), "Autos"),
        h("h2", { class: "page-title", id: "notice-title" }, `Auto de infração ${c.notice}`),
        h("p", { class: "muted" }, ORIGINS[c.origin] || c.origin, " · ", caseChip(c)))),
    h("div", { class: "draft-grid" },
      h("div", null,
        h("section", { class: "card" }, h("h3", { class: "card-title" }, "Identificação e enquadramento"),
          h("dl", { class: "facts" }, [
            ["Veículo", c.vehicle], ["Permissionário", licenseeText(c)], ["Artigos", (c.articles || []).join("; ")], ["Penalidade", c.penalty],
            ["Notificação preliminar", c.warning ? "sim (Art. 41, I)" : null],
            ["Data e hora dos fatos", c.origin === "import" ? fmtDate(c.offence_at) : fmtDateTime(c.offence_at, false)],
            ["Local", m.place], ["Coordenadas", m.lat != null ? `${fmtNum(m.lat, 6)}; ${fmtNum(m.lon, 6)}` : null],
            ["Descrição dos fatos", m.description], ["Agente autuante", m.agent],
          ].filter(([, v]) => v).flatMap(([k, v]) => [h("dt", null, k), h("dd", null, v)]))),
        main),
      side));
  mountCase(c, main, side);
}

// ---- A manual notice --------------------------------------------------------------------

function localInstant(iso, hhmm) {
  const [y, mo, d] = iso.split("-").map(Number);
  const [hh, mm] = hhmm.split(":").map(Number);
  const guess = Date.UTC(y, mo - 1, d, hh, mm);
  let t = guess - offsetMinutes(guess) * 60000;
  t = guess - offsetMinutes(t) * 60000;
  return new Date(t);
}

async function mountManual(el) {
  const back = h("a", { class: "back-link", href: "#/autos" }, icon("back"), "Autos");
  if (!store.hasRole("fiscal")) {
    el.append(h("div", { class: "card" }, back, h("p", null, "Somente fiscais lavram autos.")));
    return;
  }
  const infractions = store.config.manual_infractions || [];
  let licensees = [], regVehicles = [];
  if (store.config.registry) {
    try { [licensees, regVehicles] = await Promise.all([listAll("/api/v1/registry/licensees"), listAll("/api/v1/registry/vehicles")]); } catch { /* typed by hand */ }
  }
  if (!el.isConnected) return;
  const ids = [...new Set([...regVehicles.map((v) => v.id), ...store.vehicles.keys()])].sort();
  const vehicle = h("input", { type: "text", required: true, maxlength: "32", autocomplete: "off", list: "mn-vehicles", id: "mn-vehicle", autocapitalize: "characters" });
  const vlist = h("datalist", { id: "mn-vehicles" }, ids.map((v) => h("option", { value: v })));
  const licensee = store.config.registry
    ? h("select", { id: "mn-licensee" }, h("option", { value: "" }, "o do veículo no cadastro"), licensees.map((l) => h("option", { value: l.id }, `${l.id} — ${l.razao_social}`)))
    : h("input", { type: "text", id: "mn-licensee", maxlength: "32", autocomplete: "off" });
  const checks = infractions.map((m) => h("label", { class: "check check--top" }, h("input", { type: "checkbox", name: "infraction", value: m.id, dataset: { penalty: m.penalty } }),
    h("span", null, h("strong", null, m.article), ` — ${m.text} `, h("small", { class: "muted block" }, `Penalidade: ${m.penalty} · ${fmtNum(m.fine, 2)} ${store.config.fiscal_unit || "UFMP"}${m.notice ? " · " + m.notice : ""}`))));
  const date = dateInput(localDate(), { required: true, id: "mn-date" });
  const time = h("input", { type: "text", inputmode: "numeric", placeholder: "hh:mm", pattern: "([01]\\d|2[0-3]):[0-5]\\d", required: true, maxlength: "5", id: "mn-time", class: "time-input" });
  const place = h("input", { type: "text", required: true, maxlength: "300", id: "mn-place", placeholder: "ex.: Av. Beira-Mar, em frente ao nº 1000" });
  const lat = h("input", { type: "text", inputmode: "decimal", maxlength: "14", id: "mn-lat", placeholder: "-20,8367" });
  const lon = h("input", { type: "text", inputmode: "decimal", maxlength: "14", id: "mn-lon", placeholder: "-40,7292" });
  const desc = h("textarea", { rows: "4", required: true, minlength: "5", maxlength: "4000", id: "mn-description" });
  const agent = h("input", { type: "text", maxlength: "120", id: "mn-agent", value: store.user.name });
  const msg = h("div", { class: "form-error", role: "alert", id: "mn-error" });
  const submit = h("button", { type: "submit", class: "btn btn-primary", id: "mn-submit" }, "Lavrar auto");
  const form = h("form", { class: "card record-form", id: "manual-form", novalidate: true },
    h("fieldset", { class: "form-section" }, h("legend", null, "Autuado"),
      h("div", { class: "form-grid" }, field("Veículo", vehicle, "ID do veículo (ex.: PIU-001)."), vlist,
        field("Permissionário", licensee, store.config.registry ? "Se vazio, o do veículo no cadastro." : "ID ou CNPJ; se vazio, a reincidência não pode ser conferida."))),
    h("fieldset", { class: "form-section checklist", id: "mn-infractions" }, h("legend", null, "Infrações observadas"),
      infractions.length ? checks : h("p", { class: "muted" }, "O perfil legal não define infrações para autos manuais."),
      h("p", { class: "muted small" }, "Infrações de penalidades diferentes são autos diferentes (Art. 41, § 3º).")),
    h("fieldset", { class: "form-section" }, h("legend", null, "Fatos"),
      h("div", { class: "form-grid" }, field("Data", date), field("Hora (local)", time, "24 h, ex.: 16:40"),
        h("div", { class: "field wide" }, h("label", { htmlFor: "mn-place" }, "Local"), place),
        field("Latitude (opcional)", lat), field("Longitude (opcional)", lon),
        h("div", { class: "field full" }, h("label", { htmlFor: "mn-description" }, "Descrição dos fatos observados"), desc),
        field("Agente autuante", agent, "Nome e matrícula de quem observou os fatos."))),
    msg,
    h("div", { class: "form-actions" }, submit, h("a", { class: "btn", href: "#/autos" }, "Cancelar")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    const chosen = checks.map((l) => l.querySelector("input")).filter((i) => i.checked);
    const iso = date.iso();
    const num = (i) => (i.value.trim() ? Number(i.value.trim().replace(",", ".")) : null);
    lat.setCustomValidity(lat.value.trim() && Number.isNaN(num(lat)) ? "Número inválido" : "");
    lon.setCustomValidity(lon.value.trim() && Number.isNaN(num(lon)) ? "Número inválido" : "");
    if (!form.checkValidity()) {
      const bad = form.querySelector(":invalid");
      msg.textContent = "Confira os campos obrigatórios: " + (bad && bad.labels && bad.labels[0] ? bad.labels[0].textContent : "") + ".";
      if (bad) bad.focus();
      return;
    }
    if (!chosen.length) { msg.textContent = "Marque ao menos uma infração."; chosen[0]?.focus(); return; }
    if (new Set(chosen.map((i) => i.dataset.penalty)).size > 1) {
      msg.textContent = "As infrações marcadas têm penalidades diferentes: lavre um auto para cada penalidade (Art. 41, § 3º).";
      return;
    }
    if ((num(lat) == null) !== (num(lon) == null)) { msg.textContent = "Informe latitude e longitude, ou nenhuma."; return; }
    const at = localInstant(iso, time.value.trim());
    if (at.getTime() > Date.now()) { msg.textContent = "A data e hora dos fatos não pode ser futura."; return; }
    const body = { vehicle: vehicle.value.trim(), infractions: chosen.map((i) => i.value), at: at.toISOString(), place: place.value.trim(),
      description: desc.value.trim(), agent: agent.value.trim() };
    if (licensee.value.trim()) body.licensee = licensee.value.trim();
    if (num(lat) != null) { body.lat = num(lat); body.lon = num(lon); }
    const ok = await confirmDialog("Lavrar o auto de infração?",
      `O auto será numerado e emitido agora, em seu nome, com o cálculo da penalidade deste momento. Veículo ${body.vehicle}, ${chosen.length} infração(ões), fatos em ${isoDateBR(iso)} às ${time.value.trim()}.`, "Lavrar auto");
    if (!ok) return;
    submit.disabled = true;
    try {
      const c = await api("/api/v1/notices", { method: "POST", body });
      location.hash = "#/autos/" + c.id;
    } catch (e) {
      msg.textContent = e.message;
      submit.disabled = false;
    }
  });
  el.append(h("div", { class: "page-head" }, back, h("h2", { class: "page-title" }, "Auto lavrado na rua"),
    h("p", { class: "lead" }, "Para infrações que o agente observa pessoalmente (o monitor não as detecta). O auto é emitido na hora, com o próximo número do ano, e abre o processo com o cálculo da penalidade.")), form);
}

// ---- Importing paper notices ------------------------------------------------------------

// The columns, by their Portuguese names (monitor/api/cases.go importAliases); the English
// names of docs/api.md are accepted too.
const IMPORT_FIELDS = [
  ["numero", "number", "número do auto em papel (obrigatório, único)"], ["data_fato", "offence_date", "dia da infração (AAAA-MM-DD)"],
  ["data_emissao", "issue_date", "dia da emissão"],
  ["permissionario / cnpj", "licensee / licensee_cnpj", "o permissionário pelo ID do cadastro ou pelo CNPJ (obrigatório)"], ["razao_social", "licensee_name", "razão social"],
  ["veiculo", "vehicle", "veículo (opcional)"],
  ["artigos", "articles", "artigos infringidos, separados por ; dentro do campo"], ["penalidade", "penalty", "artigo da penalidade"],
  ["notificacao_preliminar", "warning", "notificação preliminar (sim/não)"],
  ["situacao", "status", "situação, pelo código: issued (emitido), notified (notificado), defence_filed (defesa pendente), defence_rejected (defesa indeferida), defence_accepted (defesa acolhida), confirmed (multa confirmada), paid (pago), dividaativa (dívida ativa), dismissed (arquivado), annulled (anulado)"],
  ["data_notificacao, forma_notificacao, data_edital, recusa_assinatura", "notified_date, notified_mode, published_date, refused_to_sign", "a notificação; forma: in_person (em mãos), mail (correio com AR), edital"],
  ["data_defesa, data_decisao, data_pagamento, data_divida_ativa, data_definitiva", "defence_date, decision_date, paid_date, divida_ativa_date, final_date", "o processo"],
  ["suspensao_inicio, suspensao_dias", "suspension_from, suspension_days", "suspensão aplicada"], ["observacao", "note", "observação"],
];

function mountImport(el) {
  const back = h("a", { class: "back-link", href: "#/autos" }, icon("back"), "Autos");
  if (!store.hasRole("supervisor")) {
    el.append(h("div", { class: "card" }, back, h("p", null, "Somente supervisores e administradores importam autos.")));
    return;
  }
  const file = h("input", { type: "file", accept: ".csv,.json,text/csv,application/json", id: "import-file", class: "file-input" });
  const fileName = h("span", { class: "muted small", id: "import-file-name" }, "nenhum arquivo escolhido");
  // The browser's own file button speaks the browser's language: a label in pt-BR instead.
  const filePick = h("div", { class: "file-pick" }, file,
    h("label", { htmlFor: "import-file", class: "btn" }, icon("upload"), "Escolher arquivo…"), fileName);
  const text = h("textarea", { rows: "8", id: "import-text", class: "mono", spellcheck: "false",
    placeholder: "numero;data_fato;data_emissao;permissionario;artigos;penalidade;situacao\nPM-118/2025;2025-03-14;2025-03-14;L1;Art. 23;Art. 46, X;paid" });
  const msg = h("div", { class: "form-error", role: "alert", id: "import-error" });
  const result = h("div", { id: "import-result" });
  const submit = h("button", { type: "submit", class: "btn btn-primary", id: "import-submit" }, icon("upload"), "Importar");
  file.addEventListener("change", async () => {
    const f = file.files[0];
    fileName.textContent = f ? f.name : "nenhum arquivo escolhido";
    if (!f) return;
    if (f.size > 4 << 20) { msg.textContent = "Arquivo grande demais (máximo 4 MiB)."; return; }
    text.value = await f.text();
  });
  const form = h("form", { class: "card record-form", id: "import-form", novalidate: true },
    h("div", { class: "form-grid" }, h("div", { class: "field wide" }, h("span", { class: "field-label", id: "import-file-label" }, "Arquivo CSV ou JSON"), filePick,
      h("small", { class: "hint" }, "O conteúdo aparece abaixo para conferência.")),
      h("div", { class: "field full" }, h("label", { htmlFor: "import-text" }, "Conteúdo (ou cole aqui)"), text)),
    h("details", { class: "explain" }, h("summary", null, "Colunas aceitas"),
      h("dl", { class: "facts" }, IMPORT_FIELDS.flatMap(([pt, en, v]) => [h("dt", null, h("code", null, pt)), h("dd", null, v, h("small", { class: "muted block" }, "ou, em inglês: ", h("code", null, en)))])),
      h("p", { class: "muted small" }, "CSV com cabeçalho (nomes em português, como acima, ou em inglês), separado por vírgula ou ponto e vírgula; ou JSON (uma lista). Datas não podem ser futuras nem fora de ordem. A importação é tudo ou nada: o primeiro auto com problema é apontado e nada é importado.")),
    msg, h("div", { class: "form-actions" }, submit, h("a", { class: "btn", href: "#/autos" }, "Cancelar")));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    result.replaceChildren();
    const raw = text.value.trim();
    if (!raw) { msg.textContent = "Escolha um arquivo ou cole o conteúdo."; text.focus(); return; }
    const json = /^[[{]/.test(raw);
    const n = json ? "os autos" : plural(raw.split(/\r?\n/).filter((l) => l.trim()).length - 1, "auto", "autos");
    const ok = await confirmDialog("Importar os autos em papel?", `Serão importados ${n}, em seu nome, com a situação que consta no papel. Eles passam a contar para a reincidência.`, "Importar");
    if (!ok) return;
    submit.disabled = true;
    try {
      const res = await api("/api/v1/notices/import", { method: "POST", raw, contentType: json ? "application/json" : "text/csv;charset=utf-8" });
      const items = res.items || [];
      result.replaceChildren(h("div", { class: "banner banner--ok", role: "status" }, icon("shield-ok", "icon icon-lg"),
        h("div", null, h("strong", null, `${plural(items.length, "auto importado", "autos importados")}.`),
          h("ul", null, items.map((c) => h("li", null, h("a", { href: "#/autos/" + c.id }, c.notice), ` — ${licenseeText(c)} · ${CASE_STATES[c.state] || c.state}`))))));
      form.reset();
      fileName.textContent = "nenhum arquivo escolhido";
    } catch (e) {
      msg.textContent = e.message;
    } finally {
      submit.disabled = false;
    }
  });
  el.append(h("div", { class: "page-head" }, back, h("h2", { class: "page-title" }, "Importar autos em papel"),
    h("p", { class: "lead" }, "Autos anteriores ao sistema, para que contem na reincidência (Art. 48). Cada auto mantém o seu número e a situação registrada no papel; depois, segue o mesmo processo dos demais.")),
    form, result);
}

