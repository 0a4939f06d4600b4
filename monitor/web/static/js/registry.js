// The registry (cadastro, docs/api.md "Registry"): licensees, vehicles, drivers, devices and
// documents, one tab each; supervisors and admins create, edit and delete licensees, vehicles
// and drivers. Drivers are personal data: their tab exists for fiscal and above, is loaded only
// when opened, and says that the API records every read in the audit log.
//
// Routes: #/cadastro/{tab}, #/cadastro/{tab}/novo, #/cadastro/{tab}/editar/{id}.

import { store } from "./store.js";
import { api, listAll } from "./api.js";
import { h, icon, chip, field, emptyRow, dateInput, tableWrap, confirmDialog } from "./dom.js";
import { licenseeEl, licenseeName } from "./names.js";
import { isoDateBR, daysUntil, fmtCNPJ, fmtNum, plural } from "./fmt.js";

const TABS = [
  { key: "permissionarios", label: "Permissionários", kind: "licensee" },
  { key: "veiculos", label: "Veículos", kind: "vehicle" },
  { key: "condutores", label: "Condutores", kind: "driver", role: "fiscal" },
  { key: "equipamentos", label: "Equipamentos" },
  { key: "documentos", label: "Documentos" },
];
// What the API calls each editable record, and how the page names it.
const KINDS = {
  licensee: { plural: "licensees", tab: "permissionarios", one: "permissionário", new: "Novo permissionário", the: "o permissionário" },
  vehicle: { plural: "vehicles", tab: "veiculos", one: "veículo", new: "Novo veículo", the: "o veículo" },
  driver: { plural: "drivers", tab: "condutores", one: "condutor", new: "Novo condutor", the: "o condutor" },
};
export const DEVICE_KINDS = { tachograph: "Tacógrafo", slm: "Decibelímetro", gps: "Receptor GPS", bridge: "Computador de bordo" };
const DEVICE_SHORT = { tachograph: "Tacógrafo", slm: "Decibelímetro", gps: "GPS", bridge: "Computador" };
export const DOCUMENT_KINDS = {
  licenca: "Licença de funcionamento", csv: "Certificado de Segurança Veicular (CSV)", inspecao: "Inspeção técnica veicular",
  afericao_tacografo: "Aferição do tacógrafo",
};
// Short names, for table cells and selects.
export const DOCUMENT_SHORT = {
  licenca: "Licença", csv: "CSV", inspecao: "Inspeção técnica", afericao_tacografo: "Aferição do tacógrafo",
  cnh: "CNH", atestado_medico: "Atestado médico", verificacao_dispositivo: "Verificação do equipamento",
};
const CNH_CATEGORIES = ["A", "B", "C", "D", "E", "AB", "AC", "AD", "AE"];
const FLASH = "trenzinho.registry.flash";
const SOON_DAYS = 30;

// validityChip says where a dated item stands today: vencido, vence hoje, vence em N dias, válido.
export function validityChip(iso, soon = SOON_DAYS) {
  if (!iso) return chip("sem vencimento", "neutral");
  const d = daysUntil(iso);
  if (d < 0) return chip(`vencido há ${plural(-d, "dia", "dias")}`, "danger");
  if (d === 0) return chip("vence hoje", "warn");
  if (d <= soon) return chip(`vence em ${plural(d, "dia", "dias")}`, "warn");
  return chip("válido", "ok");
}

function dateCell(iso, withChip = true) {
  if (!iso) return h("span", { class: "muted" }, "—");
  return h("span", { class: "date-cell" }, h("span", { class: "nowrap" }, isoDateBR(iso)), withChip ? validityChip(iso) : null);
}

export const registryView = {
  title: "Cadastro",
  mount(el, arg) {
    const [tabKey = "permissionarios", mode, ...rest] = (arg || "").split("/");
    const tab = TABS.find((t) => t.key === tabKey) || TABS[0];
    if (!store.config.registry) {
      el.append(h("div", { class: "page-head" }, h("p", { class: "lead" }, "Permissionários, veículos, condutores, equipamentos e documentos (Lei 2.277/2018, Art. 19 e 20).")),
        h("section", { class: "card empty-state", id: "registry-missing" }, icon("registry", "icon icon-lg"),
          h("div", null, h("h2", { class: "card-title" }, "Cadastro não configurado"),
            h("p", { class: "muted" }, "Este monitor funciona sem cadastro: os veículos são julgados como não cadastrados e não há controle de vencimento de documentos. Para ativá-lo, configure o arquivo do cadastro em TRENZINHO_REGISTRY (docs/registry.md)."))));
      return;
    }
    if (mode === "novo" || mode === "editar") {
      const kind = tab.kind;
      if (!kind) { location.replace("#/cadastro/" + tab.key); return; }
      return mountEditor.call(this, el, kind, mode === "editar" ? decodeURIComponent(rest.join("/")) : null);
    }
    if (tab.role && !store.hasRole(tab.role)) {
      el.append(tabBar(tab.key), h("section", { class: "card" }, h("p", null, "Os dados dos condutores são restritos a fiscais, supervisores e administradores.")));
      return;
    }
    return mountList.call(this, el, tab);
  },
  unmount() { if (this.abort) this.abort.abort(); this.abort = null; },
};

function tabBar(active) {
  return h("nav", { class: "tabs", "aria-label": "Seções do cadastro" },
    TABS.filter((t) => !t.role || store.hasRole(t.role)).map((t) =>
      h("a", { href: "#/cadastro/" + t.key, class: "tab", "aria-current": t.key === active ? "page" : null, dataset: { tab: t.key } },
        t.label, t.role ? h("span", { class: "tab-note" }, " · auditado") : null)));
}

function flashBanner() {
  const text = sessionStorage.getItem(FLASH);
  if (!text) return null;
  sessionStorage.removeItem(FLASH);
  return h("div", { class: "banner banner--ok", role: "status", id: "registry-flash" }, icon("shield-ok", "icon icon-lg"), h("div", null, h("strong", null, text)));
}

// ---- Lists -----------------------------------------------------------------------------

async function mountList(el, tab) {
  const canEdit = store.hasRole("supervisor");
  const filter = h("input", { type: "search", autocomplete: "off", placeholder: "Filtrar…", id: "registry-filter" });
  const info = h("p", { class: "muted", role: "status" }, "Carregando…");
  const table = h("table", { class: "table", id: "registry-table" });
  const kind = KINDS[tab.kind];
  const head = h("div", { class: "page-head page-head--split" },
    h("p", { class: "lead" }, "Permissionários, veículos, condutores, equipamentos e documentos (Lei 2.277/2018, Art. 19 e 20). Alterações valem a partir do próximo lote de dados de cada veículo e ficam registradas na auditoria."),
    canEdit && kind ? h("a", { class: "btn btn-primary", href: `#/cadastro/${tab.key}/novo`, id: "registry-new" }, icon("plus"), kind.new) : null);
  const card = h("section", { class: "card" },
    h("div", { class: "toolbar" }, field("Filtrar " + tab.label.toLowerCase(), filter)),
    tableWrap(tab.label, table),
    h("div", { class: "table-foot" }, info));
  el.append(...[head, flashBanner(), tabBar(tab.key)].filter(Boolean));
  if (tab.key === "condutores") {
    el.append(h("div", { class: "banner banner--warn", role: "note", id: "drivers-audit-note" }, icon("audit", "icon icon-lg"),
      h("div", null, h("strong", null, "Dados pessoais (LGPD): acesso registrado"),
        h("p", null, `Nomes, CPFs e números de CNH aparecem abreviados. Cada abertura desta aba e de um condutor fica registrada na auditoria em nome de ${store.user.name}, com os condutores consultados.`))));
  }
  el.append(card);
  const spec = LISTS[tab.key];
  let rows = [];
  const render = () => {
    const q = filter.value.trim().toLowerCase();
    const list = q ? rows.filter((r) => r.text.includes(q)) : rows;
    table.replaceChildren(h("thead", null, h("tr", null, spec.cols.map((c) => (Array.isArray(c) ? h("th", { scope: "col", class: c[1] }, c[0]) : h("th", { scope: "col" }, c))),
      canEdit && kind ? h("th", { scope: "col", class: "actions" }, h("span", { class: "sr-only" }, "Ações")) : null)),
      h("tbody", null, list.length ? list.map((r) => r.tr) : emptyRow(spec.cols.length + 1, q ? "Nada encontrado com esse filtro." : spec.empty)));
    info.textContent = q ? `${list.length} de ${rows.length}` : `${rows.length} registro(s)`;
  };
  filter.addEventListener("input", render);
  try {
    const data = await spec.load();
    if (!el.isConnected) return;
    rows = spec.rows(data).map((r) => {
      if (canEdit && kind) r.tr.append(h("td", { class: "actions" }, h("a", { class: "btn btn-small btn-icon", href: `#/cadastro/${tab.key}/editar/${encodeURIComponent(r.id)}`, title: "Editar", dataset: { edit: r.id } }, icon("edit"), h("span", { class: "sr-only" }, `Editar ${kind.one} ${r.id}`))));
      return r;
    });
    render();
  } catch (e) {
    info.textContent = e.message;
    info.classList.add("form-error");
  }
}

const docsSummary = (docs) => {
  if (!docs || !docs.length) return h("span", { class: "muted" }, "—");
  // Of several documents of one kind the one valid the longest counts.
  const current = new Map();
  for (const d of docs) {
    const c = current.get(d.kind);
    if (!c || (c.valid_until && (!d.valid_until || d.valid_until > c.valid_until))) current.set(d.kind, d);
  }
  return h("ul", { class: "cell-list" }, [...current.values()].map((d) => {
    const left = d.valid_until ? daysUntil(d.valid_until) : null;
    return h("li", { title: DOCUMENT_KINDS[d.kind] || d.kind }, h("span", { class: "nowrap" }, DOCUMENT_SHORT[d.kind] || d.kind, " ",
      h("span", { class: "muted" }, d.valid_until ? isoDateBR(d.valid_until) : "sem vencimento")), " ",
      left != null && left <= SOON_DAYS ? validityChip(d.valid_until) : null);
  }));
};
const textOf = (...parts) => parts.filter((p) => p != null).join(" ").toLowerCase();

const LISTS = {
  permissionarios: {
    cols: ["ID", "Razão social", "CNPJ", "Endereço", "Veículos", "Documentos"],
    empty: "Nenhum permissionário cadastrado.",
    load: () => Promise.all([listAll("/api/v1/registry/licensees"), listAll("/api/v1/registry/vehicles")]),
    rows: ([ls, vs]) => ls.map((l) => {
      const vehicles = vs.filter((v) => v.licensee === l.id).map((v) => v.id);
      return { id: l.id, text: textOf(l.id, l.razao_social, l.cnpj, fmtCNPJ(l.cnpj), l.address),
        tr: h("tr", { dataset: { id: l.id } }, h("th", { scope: "row" }, l.id), h("td", null, l.razao_social), h("td", { class: "nowrap" }, fmtCNPJ(l.cnpj)),
          h("td", null, l.address || h("span", { class: "muted" }, "—")), h("td", null, vehicles.length ? vehicles.join(", ") : h("span", { class: "muted" }, "nenhum")),
          h("td", null, docsSummary(l.documents))) };
    }),
  },
  veiculos: {
    cols: ["ID", "Placa", "Permissionário", ["Ano", "col-low"], "r₁ (m)", ["Cat. CNH", "col-low"], ["Condutor", "col-low"], ["Equipamentos", "col-low"], "Documentos"],
    empty: "Nenhum veículo cadastrado.",
    load: () => listAll("/api/v1/registry/vehicles"),
    rows: (vs) => vs.map((v) => ({ id: v.id, text: textOf(v.id, v.plate, v.licensee, licenseeName(v.licensee), v.driver),
      tr: h("tr", { dataset: { id: v.id } }, h("th", { scope: "row", class: "nowrap" }, v.id, v.key_id ? h("small", { class: "muted block", title: "Lotes assinados com a chave " + v.key_id }, "assina lotes") : null),
        h("td", { class: "nowrap" }, v.plate), h("td", null, licenseeEl(v.licensee, "—")), h("td", { class: "num col-low" }, v.manufacture_year || "—"),
        h("td", { class: "num" }, v.meter_distance_m ? fmtNum(v.meter_distance_m, 2) : h("span", { class: "muted", title: "Sem r₁: vale o padrão do perfil" }, "perfil")),
        h("td", { class: "col-low" }, v.required_cnh_category || "—"), h("td", { class: "col-low" }, v.driver || h("span", { class: "muted" }, "—")),
        h("td", { class: "col-low" }, (v.devices || []).length ? h("span", { class: "chips" }, v.devices.map((d) => chip(DEVICE_SHORT[d.kind] || d.kind, "neutral", `${DEVICE_KINDS[d.kind] || d.kind} nº ${d.serial}`))) : h("span", { class: "muted" }, "—")),
        h("td", null, docsSummary(v.documents))) })),
  },
  condutores: {
    cols: ["ID", "Nome (abreviado)", "CPF", "Permissionário", "Cat. CNH", "Validade da CNH", "Atestado médico", "Cartão do tacógrafo"],
    empty: "Nenhum condutor cadastrado.",
    load: () => listAll("/api/v1/registry/drivers"),
    rows: (ds) => ds.map((d) => ({ id: d.id, text: textOf(d.id, d.name, d.licensee, licenseeName(d.licensee), d.tachograph_card),
      tr: h("tr", { dataset: { id: d.id } }, h("th", { scope: "row" }, d.id), h("td", null, d.name), h("td", { class: "nowrap" }, d.cpf), h("td", null, licenseeEl(d.licensee, "—")),
        h("td", null, d.cnh_category || "—"), h("td", null, dateCell(d.cnh_valid_until)),
        h("td", null, dateCell((d.medical_certificate || {}).valid_until)), h("td", null, d.tachograph_card ? h("code", null, d.tachograph_card) : "—")) })),
  },
  equipamentos: {
    cols: ["Veículo", "Permissionário", "Tipo", "Nº de série", "Modelo", "Verificação INMETRO", "Calibração", "Válido até"],
    empty: "Nenhum equipamento cadastrado.",
    load: () => listAll("/api/v1/registry/devices"),
    rows: (ds) => ds.map((d) => ({ id: d.vehicle, text: textOf(d.vehicle, d.licensee, licenseeName(d.licensee), d.label, d.serial, d.model),
      tr: h("tr", { dataset: { vehicle: d.vehicle, serial: d.serial } }, h("th", { scope: "row", class: "nowrap" }, d.vehicle), h("td", null, licenseeEl(d.licensee, "—")),
        h("td", null, DEVICE_KINDS[d.kind] || d.label || d.kind), h("td", null, h("code", null, d.serial)), h("td", null, d.model || "—"),
        h("td", { class: "nowrap" }, isoDateBR(d.inmetro_verification)), h("td", { class: "nowrap" }, isoDateBR(d.calibration)),
        h("td", null, d.valid_until ? dateCell(d.valid_until) : h("span", { class: "muted" }, "—"))) })),
  },
  documentos: {
    cols: ["Titular", "Documento", "Número", "Emissão", "Válido até", "Situação"],
    empty: "Nenhum documento cadastrado.",
    load: () => listAll("/api/v1/registry/documents"),
    rows: (ds) => ds.map((d) => {
      const lic = d.subject.kind === "licensee";
      const who = (lic ? "Permissionário " : "Veículo ") + (lic ? licenseeName(d.subject.id) : d.subject.id);
      const expired = d.valid_until && daysUntil(d.valid_until) < 0;
      return { id: d.subject.id, text: textOf(who, d.subject.id, d.label, d.number),
        tr: h("tr", { dataset: { subject: d.subject.id, kind: d.kind }, class: d.current ? null : "is-history" },
          h("th", { scope: "row" }, lic ? ["Permissionário ", licenseeEl(d.subject.id)] : who),
          h("td", null, DOCUMENT_KINDS[d.kind] || d.label || d.kind), h("td", null, d.number || "—"), h("td", { class: "nowrap" }, isoDateBR(d.issued)),
          h("td", null, d.current ? dateCell(d.valid_until) : h("span", { class: "nowrap" }, isoDateBR(d.valid_until))),
          h("td", null, d.current
            ? chip("atual", expired ? "neutral" : "info", expired ? "O documento deste tipo que conta — e está vencido" : "O documento deste tipo que conta")
            : chip("histórico", "neutral", "Substituído por outro do mesmo tipo válido por mais tempo"))) };
    }),
  },
};

// ---- Editor ----------------------------------------------------------------------------

async function mountEditor(el, kind, id) {
  const k = KINDS[kind];
  const back = h("a", { class: "back-link", href: "#/cadastro/" + k.tab }, icon("back"), "Cadastro");
  if (!store.hasRole("supervisor")) {
    el.append(h("div", { class: "card" }, back, h("p", null, "Somente supervisores e administradores alteram o cadastro.")));
    return;
  }
  el.append(h("p", { class: "muted", role: "status" }, "Carregando…"));
  let record = null, licensees = [];
  try {
    [record, licensees] = await Promise.all([
      id ? api(`/api/v1/registry/${k.plural}/${encodeURIComponent(id)}`) : null,
      listAll("/api/v1/registry/licensees"),
    ]);
  } catch (e) {
    el.replaceChildren(h("div", { class: "card" }, back, h("p", { class: "form-error" }, e.message)));
    return;
  }
  if (!el.isConnected) return;
  const form = new RecordForm(kind, record, licensees);
  const title = id ? `Editar ${k.one} ${id}` : k.new;
  el.replaceChildren(...[
    h("div", { class: "page-head" }, back, h("h2", { class: "page-title", id: "editor-title" }, title),
      h("p", { class: "lead" }, "O cadastro inteiro é validado com a alteração; nada muda se houver algum problema. A alteração fica registrada na auditoria com o registro antes e depois.")),
    kind === "driver" ? h("div", { class: "banner banner--warn", role: "note" }, icon("audit", "icon icon-lg"),
      h("div", null, h("strong", null, "Dados pessoais (LGPD)"), h("p", null, id ? "A abertura deste condutor, com nome, CPF e CNH completos, foi registrada na auditoria." : "Nome, CPF e CNH ficam no cadastro e aparecem abreviados nas listas e na auditoria."))) : null,
    form.el].filter(Boolean));
}

// RecordForm is the form of one licensee, vehicle or driver. Every control knows the path the
// registry's validator gives its field ("cnpj", "devices[0].valid_until"), so that a 422 shows
// each problem next to its field.
class RecordForm {
  constructor(kind, record, licensees) {
    this.kind = kind;
    this.k = KINDS[kind];
    this.record = record;
    this.editing = !!record;
    this.licensees = licensees;
    this.controls = new Map(); // path → {input, err}
    this.lists = [];
    this.summary = h("div", { class: "banner banner--danger", role: "alert", id: "form-errors", hidden: true, tabindex: "-1" });
    this.saveBtn = h("button", { type: "submit", class: "btn btn-primary", id: "registry-save" }, "Salvar");
    const r = record || {};
    this.el = h("form", { class: "card record-form", id: "registry-form", novalidate: true, onsubmit: (e) => { e.preventDefault(); this.save(); } },
      this.summary, ...this.build(r),
      h("div", { class: "form-actions" }, this.saveBtn, h("a", { class: "btn", href: "#/cadastro/" + this.k.tab }, "Cancelar"),
        this.editing ? h("button", { type: "button", class: "btn btn-danger-outline push-right", id: "registry-delete", onclick: () => this.remove() }, icon("trash"), "Excluir") : null));
  }

  // ctl registers a control under its path and returns its labelled field.
  ctl(path, label, input, hint) {
    const f = field(label, input, hint);
    const err = h("p", { class: "field-error", id: input.id + "-err", hidden: true });
    f.append(err);
    input.dataset.path = path;
    this.controls.set(path, { input, err });
    return f;
  }

  text(path, label, value, attrs = {}, hint) {
    return this.ctl(path, label, h("input", { type: "text", value: value ?? "", autocomplete: "off", spellcheck: "false", ...attrs }), hint);
  }

  date(path, label, iso, hint) {
    return this.ctl(path, label, dateInput(iso || ""), hint);
  }

  select(path, label, value, options, attrs = {}, hint) {
    const s = h("select", attrs, options.map(([v, t]) => h("option", { value: v, selected: v === (value ?? "") }, t)));
    return this.ctl(path, label, s, hint);
  }

  licenseeSelect(value) {
    const opts = [["", "— escolha —"], ...this.licensees.map((l) => [l.id, `${l.id} — ${l.razao_social}`])];
    if (value && !this.licensees.some((l) => l.id === value)) opts.push([value, value + " (não cadastrado)"]);
    return this.select("licensee", "Permissionário", value, opts, { required: true });
  }

  build(r) {
    const idAttrs = { required: true, pattern: "[A-Za-z0-9_-]{1,32}", maxlength: "32", readonly: this.editing, "aria-readonly": this.editing ? "true" : null };
    if (this.kind === "licensee") {
      return [
        h("fieldset", { class: "form-section" }, h("legend", null, "Permissionário"),
          h("div", { class: "form-grid" },
            this.text("id", "ID no sistema", r.id, idAttrs, this.editing ? "O ID não muda; para trocá-lo, cadastre outro." : "Letras, números, - e _ (ex.: L3)."),
            this.text("razao_social", "Razão social", r.razao_social, { required: true, maxlength: "200", class: "wide" }),
            this.text("cnpj", "CNPJ", r.cnpj ? fmtCNPJ(r.cnpj) : "", { required: true, maxlength: "18", autocapitalize: "characters" }, "Numérico ou alfanumérico, com dígitos verificadores."),
            this.text("address", "Endereço", r.address, { maxlength: "300", class: "wide" }))),
        this.documentsList(r.documents, ["licenca"]),
      ];
    }
    if (this.kind === "vehicle") {
      return [
        h("fieldset", { class: "form-section" }, h("legend", null, "Veículo"),
          h("div", { class: "form-grid" },
            this.text("id", "ID no sistema", r.id, idAttrs, this.editing ? "O nome com que o veículo envia dados; não muda." : "O nome com que o veículo envia dados (ex.: PIU-004)."),
            this.text("plate", "Placa", r.plate, { required: true, maxlength: "8", autocapitalize: "characters" }, "ABC1234 ou Mercosul ABC1D23."),
            this.licenseeSelect(r.licensee),
            this.text("manufacture_year", "Ano de fabricação", r.manufacture_year ? String(r.manufacture_year) : "", { inputmode: "numeric", maxlength: "4", pattern: "\\d{4}" }),
            this.text("meter_distance_m", "Distância do decibelímetro aos alto-falantes (r₁, m)", r.meter_distance_m != null ? String(r.meter_distance_m).replace(".", ",") : "",
              { inputmode: "decimal", maxlength: "8" }, "Usada na estimativa do nível no receptor; vazio: o padrão do perfil."),
            this.select("required_cnh_category", "Categoria de CNH exigida", r.required_cnh_category, [["", "— não conferir —"], ...CNH_CATEGORIES.map((c) => [c, c])]),
            this.text("driver", "Condutor designado (ID)", r.driver, { maxlength: "32", pattern: "[A-Za-z0-9_-]{1,32}" }, "Um condutor do mesmo permissionário (ex.: D1); vazio: nenhum."))),
        this.devicesList(r.devices),
        this.documentsList(r.documents, ["csv", "inspecao", "afericao_tacografo", "licenca"]),
        h("fieldset", { class: "form-section" }, h("legend", null, "Assinatura dos lotes (opcional)"),
          h("div", { class: "form-grid" },
            this.text("key_id", "ID da chave (kid)", r.key_id, { maxlength: "32" }),
            this.text("public_key", "Chave pública ed25519 (base64)", r.public_key, { maxlength: "64", class: "wide mono" }, "Ambos ou nenhum."))),
      ];
    }
    const mc = r.medical_certificate || {};
    return [
      h("fieldset", { class: "form-section" }, h("legend", null, "Condutor"),
        h("div", { class: "form-grid" },
          this.text("id", "ID no sistema", r.id, idAttrs, this.editing ? "O ID não muda." : "Letras, números, - e _ (ex.: D4)."),
          this.text("name", "Nome completo", r.name, { required: true, maxlength: "200", class: "wide", autocomplete: "off" }),
          this.text("cpf", "CPF", r.cpf, { required: true, maxlength: "14", inputmode: "numeric" }),
          this.licenseeSelect(r.licensee),
          this.text("tachograph_card", "Cartão do tacógrafo", r.tachograph_card, { maxlength: "32", autocapitalize: "characters" }, "Como impresso no cartão."))),
      h("fieldset", { class: "form-section" }, h("legend", null, "Habilitação e atestado médico"),
        h("div", { class: "form-grid" },
          this.text("cnh_number", "Nº de registro da CNH", r.cnh_number, { maxlength: "11", inputmode: "numeric" }, "11 dígitos."),
          this.select("cnh_category", "Categoria da CNH", r.cnh_category, [["", "—"], ...CNH_CATEGORIES.map((c) => [c, c])]),
          this.date("cnh_valid_until", "Validade da CNH", r.cnh_valid_until),
          this.date("medical_certificate.issued", "Atestado médico: emissão", mc.issued),
          this.date("medical_certificate.valid_until", "Atestado médico: validade", mc.valid_until))),
    ];
  }

  // repeatable builds a fieldset of rows (devices, documents) with add and remove buttons.
  repeatable(name, legend, items, addLabel, rowFields) {
    const box = h("div", { class: "subrows" });
    const list = { name, rows: [] };
    const empty = h("p", { class: "muted small" }, "Nenhum.");
    const add = (item = {}) => {
      const row = { item, controls: [] };
      const n = list.rows.length + 1;
      const fields = rowFields(item, row);
      const rm = h("button", { type: "button", class: "btn btn-small btn-danger-outline subrow-remove", "aria-label": `Remover ${legend.toLowerCase()} ${n}` }, icon("trash"), "Remover");
      row.el = h("fieldset", { class: "subrow" }, h("legend", null, `${legend} ${n}`), rm, h("div", { class: "form-grid form-grid--tight" }, ...fields));
      rm.addEventListener("click", () => {
        list.rows.splice(list.rows.indexOf(row), 1);
        row.el.remove();
        renumber();
      });
      list.rows.push(row);
      box.append(row.el);
      renumber();
      return row;
    };
    const renumber = () => {
      empty.hidden = list.rows.length > 0;
      list.rows.forEach((row, i) => {
        row.el.querySelector("legend").textContent = `${legend} ${i + 1}`;
        row.el.querySelector(".subrow-remove").setAttribute("aria-label", `Remover ${legend.toLowerCase()} ${i + 1}`);
      });
    };
    for (const it of items || []) add(it);
    renumber();
    this.lists.push(list);
    return h("fieldset", { class: "form-section", dataset: { list: name } }, h("legend", null, legend === "Equipamento" ? "Equipamentos" : "Documentos"), box, empty,
      h("button", { type: "button", class: "btn btn-small", onclick: () => { const row = add(); row.el.querySelector("select, input").focus(); } }, icon("plus"), addLabel));
  }

  // rowCtl is a control of a row: its path gets the row's index when the form is sent.
  rowCtl(row, key, label, input) {
    const f = field(label, input);
    const err = h("p", { class: "field-error", id: input.id + "-err", hidden: true });
    f.append(err);
    row.controls.push({ key, input, err });
    return f;
  }

  devicesList(devices) {
    return this.repeatable("devices", "Equipamento", devices, "Adicionar equipamento", (d, row) => [
      this.rowCtl(row, "kind", "Tipo", h("select", { required: true }, Object.entries(DEVICE_KINDS).map(([v, t]) => h("option", { value: v, selected: v === d.kind }, t)))),
      this.rowCtl(row, "serial", "Nº de série", h("input", { type: "text", value: d.serial || "", required: true, maxlength: "64", autocomplete: "off" })),
      this.rowCtl(row, "model", "Modelo", h("input", { type: "text", value: d.model || "", maxlength: "100", autocomplete: "off" })),
      this.rowCtl(row, "inmetro_verification", "Verificação INMETRO", dateInput(d.inmetro_verification || "")),
      this.rowCtl(row, "calibration", "Calibração", dateInput(d.calibration || "")),
      this.rowCtl(row, "valid_until", "Válido até", dateInput(d.valid_until || "")),
    ]);
  }

  documentsList(docs, kinds) {
    return this.repeatable("documents", "Documento", docs, "Adicionar documento", (d, row) => {
      const opts = kinds.slice();
      if (d.kind && !opts.includes(d.kind)) opts.push(d.kind);
      return [
        this.rowCtl(row, "kind", "Tipo", h("select", { required: true }, opts.map((v) => h("option", { value: v, selected: v === d.kind }, DOCUMENT_SHORT[v] || v)))),
        this.rowCtl(row, "number", "Número", h("input", { type: "text", value: d.number || "", maxlength: "64", autocomplete: "off" })),
        this.rowCtl(row, "issued", "Emissão", dateInput(d.issued || "")),
        this.rowCtl(row, "valid_until", "Válido até", dateInput(d.valid_until || "")),
      ];
    });
  }

  // collect reads the form into the record's JSON (unknown values left out) and registers the
  // rows' controls under their current paths.
  collect() {
    const val = (path) => {
      const c = this.controls.get(path);
      if (!c) return undefined;
      const v = c.input.iso ? c.input.iso() : c.input.value.trim();
      return v === "" ? undefined : v;
    };
    for (const [path] of this.controls) if (/\[\d+\]\./.test(path)) this.controls.delete(path);
    const rows = (list, convert) => list.rows.map((row, i) => {
      const out = {};
      for (const c of row.controls) {
        this.controls.set(`${list.name}[${i}].${c.key}`, c);
        c.input.dataset.path = `${list.name}[${i}].${c.key}`;
        const v = c.input.iso ? c.input.iso() : c.input.value.trim();
        if (v !== "") out[c.key] = v;
      }
      return convert ? convert(out) : out;
    });
    const listOf = (name) => this.lists.find((l) => l.name === name);
    const r = {};
    const set = (k, v) => { if (v !== undefined && v !== "") r[k] = v; };
    set("id", val("id"));
    if (this.kind === "licensee") {
      set("razao_social", val("razao_social"));
      set("cnpj", val("cnpj"));
      set("address", val("address"));
      const docs = rows(listOf("documents"));
      if (docs.length) r.documents = docs;
    } else if (this.kind === "vehicle") {
      set("plate", (val("plate") || "").toUpperCase() || undefined);
      set("licensee", val("licensee"));
      const year = val("manufacture_year");
      const yc = this.controls.get("manufacture_year").input;
      yc.setCustomValidity(year && !/^\d{4}$/.test(year) ? "Ano com 4 dígitos" : "");
      if (year && /^\d{4}$/.test(year)) r.manufacture_year = Number(year);
      const dist = val("meter_distance_m");
      const dc = this.controls.get("meter_distance_m").input;
      const n = dist ? Number(dist.replace(",", ".")) : NaN;
      dc.setCustomValidity(dist && !(n > 0) ? "Informe um número em metros, ex.: 2,5" : "");
      if (dist && n > 0) r.meter_distance_m = n;
      set("required_cnh_category", val("required_cnh_category"));
      set("driver", val("driver"));
      const devs = rows(listOf("devices"));
      if (devs.length) r.devices = devs;
      const docs = rows(listOf("documents"));
      if (docs.length) r.documents = docs;
      set("key_id", val("key_id"));
      set("public_key", val("public_key"));
      // What the form does not edit stays as on file: inspections and accidents, and the
      // inspections the organ required (Art. 45, IV).
      if (this.editing) for (const k of ["events", "inspection_requests"]) if (this.record[k]) r[k] = this.record[k];
    } else {
      for (const k of ["name", "cpf", "cnh_number", "cnh_category", "cnh_valid_until", "tachograph_card", "licensee"]) set(k, val(k));
      const mc = {};
      if (val("medical_certificate.issued")) mc.issued = val("medical_certificate.issued");
      if (val("medical_certificate.valid_until")) mc.valid_until = val("medical_certificate.valid_until");
      if (Object.keys(mc).length) r.medical_certificate = mc;
    }
    return r;
  }

  clearErrors() {
    this.summary.hidden = true;
    this.summary.replaceChildren();
    for (const c of this.el.querySelectorAll(".field-error")) { c.hidden = true; c.textContent = ""; }
    for (const i of this.el.querySelectorAll("[aria-invalid]")) { i.removeAttribute("aria-invalid"); i.removeAttribute("aria-describedby"); }
  }

  // showErrors puts each problem of a 422 next to its field; problems of other records (or of
  // fields the form does not have) go to the summary at the top.
  showErrors(message, fields) {
    const other = [];
    let first = null;
    const mine = new RegExp(`^${this.k.plural}\\[([^\\]]*)\\]\\.(.+)$`);
    const id = this.editing ? this.record.id : (this.controls.get("id").input.value.trim());
    for (const f of fields || []) {
      const m = mine.exec(f.path);
      const c = m && m[1] === id ? this.controls.get(m[2]) : null;
      if (!c) { other.push(f); continue; }
      c.err.textContent = c.err.textContent ? c.err.textContent + "; " + f.message : f.message;
      c.err.hidden = false;
      c.input.setAttribute("aria-invalid", "true");
      c.input.setAttribute("aria-describedby", c.err.id);
      first = first || c.input;
    }
    this.summary.replaceChildren(icon("warn", "icon icon-lg"), h("div", null, h("strong", null, cap(message)),
      h("p", null, first ? "Corrija os campos marcados abaixo." : ""),
      other.length ? h("ul", null, other.map((f) => h("li", null, h("span", null, pathLabel(f.path) + ": "), f.message))) : null));
    this.summary.hidden = false;
    (first || this.summary).focus();
  }

  async save() {
    this.clearErrors();
    const body = this.collect();
    if (!this.el.checkValidity()) {
      // The browser's own checks: each field marked as a 422 would mark it.
      const bad = [...this.el.querySelectorAll("input:invalid, select:invalid, textarea:invalid")];
      const fields = bad.map((i) => ({ path: i.dataset.path || "", message: i.validationMessage || "valor inválido" }));
      const own = new RegExp(`^${this.k.plural}\\[`);
      const id = this.controls.get("id").input.value.trim() || "?";
      this.showErrors(`${plural(bad.length, "campo", "campos")} a corrigir antes de salvar.`,
        fields.map((f) => ({ ...f, path: own.test(f.path) ? f.path : `${this.k.plural}[${id}].${f.path}` })));
      return;
    }
    const id = body.id;
    this.saveBtn.disabled = true;
    try {
      const res = await api(`/api/v1/registry/${this.k.plural}/${encodeURIComponent(id)}`, { method: "PUT", body });
      sessionStorage.setItem(FLASH, `${cap(this.k.one)} ${res.id || id} ${this.editing ? "salvo" : "cadastrado"}. A alteração vale a partir do próximo lote de dados.`);
      location.hash = "#/cadastro/" + this.k.tab;
    } catch (e) {
      this.saveBtn.disabled = false;
      this.showErrors(e.message, e.fields);
    }
  }

  async remove() {
    const id = this.record.id;
    const ok = await confirmDialog(`Excluir ${this.k.the} ${id}?`,
      "O registro sai do cadastro e a exclusão fica registrada na auditoria. Autos já emitidos não mudam.", "Excluir");
    if (!ok) return;
    this.clearErrors();
    try {
      await api(`/api/v1/registry/${this.k.plural}/${encodeURIComponent(id)}`, { method: "DELETE" });
      sessionStorage.setItem(FLASH, `${cap(this.k.one)} ${id} excluído do cadastro.`);
      location.hash = "#/cadastro/" + this.k.tab;
    } catch (e) {
      this.showErrors(e.status === 409 ? "Não foi possível excluir: " + e.message : e.message, e.fields);
    }
  }
}

const cap = (s) => s.charAt(0).toUpperCase() + s.slice(1);

const RECORDS = { licensees: "Permissionário", vehicles: "Veículo", drivers: "Condutor" };
const FIELDS = {
  id: "ID", cnpj: "CNPJ", razao_social: "razão social", address: "endereço", plate: "placa", licensee: "permissionário",
  manufacture_year: "ano de fabricação", meter_distance_m: "r₁", required_cnh_category: "categoria de CNH exigida", driver: "condutor designado",
  key_id: "ID da chave", public_key: "chave pública", name: "nome", cpf: "CPF", cnh_number: "nº da CNH", cnh_category: "categoria da CNH",
  cnh_valid_until: "validade da CNH", tachograph_card: "cartão do tacógrafo", "medical_certificate.issued": "emissão do atestado médico",
  "medical_certificate.valid_until": "validade do atestado médico", kind: "tipo", serial: "nº de série", model: "modelo",
  inmetro_verification: "verificação INMETRO", calibration: "calibração", valid_until: "válido até", issued: "emissão", number: "número",
};

// pathLabel names a validator path in Portuguese: "vehicles[PIU-001].devices[0].serial" →
// "Veículo PIU-001, equipamento 1, nº de série".
export function pathLabel(path) {
  const m = /^(\w+)\[([^\]]*)\]\.?(.*)$/.exec(path);
  if (!m) return path;
  const parts = [`${RECORDS[m[1]] || m[1]} ${m[2]}`];
  let rest = m[3];
  const sub = /^(devices|documents)\[(\d+)\]\.(.+)$/.exec(rest);
  if (sub) {
    parts.push(`${sub[1] === "devices" ? "equipamento" : "documento"} ${+sub[2] + 1}`);
    rest = sub[3];
  }
  if (rest) parts.push(FIELDS[rest] || rest);
  return parts.join(", ");
}
