// The fleet: every vehicle's connection, last contact, spool depth and device faults, and a
// compliance summary per vehicle per day built from the episodes; both export to CSV (made in
// the browser, nothing is asked of the server). With a registry (config.registry), the
// documents expired or expiring within 30 days, and a per-vehicle indicator of them.

import { store, isOnline, vehicleState, STATE_LABELS, deviceFaults } from "./store.js";
import { api, listAll } from "./api.js";
import { h, chip, field, download, emptyRow, dateInput, tableWrap, theadOf } from "./dom.js";
import { licenseeEl, licenseeName } from "./names.js";
import { DOCUMENT_SHORT } from "./registry.js";
import { fmtDateTime, fmtAgo, fmtNum, fmtDuration, localDate, dayRange, addDays, isoDateBR, ruleName, RULES_SHORT, DEVICES, DEVICE_STATES, fmtValue, plural } from "./fmt.js";

const EXPIRING_DAYS = 30;
const SUBJECTS = { licensee: "Permissionário", vehicle: "Veículo", driver: "Condutor" };
// subjectCell names what an expiring item belongs to, in the page's words (a device by its
// label, which names its vehicle).
const subjectCell = (e) => e.subject.kind === "licensee"
  ? [SUBJECTS.licensee + " ", licenseeEl(e.subject.id)]
  : SUBJECTS[e.subject.kind]
  ? [SUBJECTS[e.subject.kind] + " ", h("span", { class: "nowrap" }, e.subject.id)]
  : e.subject_label.charAt(0).toUpperCase() + e.subject_label.slice(1);
const documentName = (e) => DOCUMENT_SHORT[e.document] || e.label;
// subjectText is subjectCell as plain text (tooltips, screen readers): "Permissionário
// Passeios Recreativos Ilha do Gambá Ltda", never the registry's id of a licensee.
const subjectText = (e) => e.subject.kind === "licensee"
  ? `${SUBJECTS.licensee} ${licenseeName(e.subject.id)}`
  : SUBJECTS[e.subject.kind]
  ? `${SUBJECTS[e.subject.kind]} ${e.subject.id}`
  : e.subject_label.charAt(0).toUpperCase() + e.subject_label.slice(1);

export const fleetView = {
  title: "Frota",
  mount(el) {
    const cards = h("div", { class: "kpis" });
    const tbody = h("tbody");
    const sumHead = h("thead");
    const sumBody = h("tbody");
    const sumInfo = h("p", { class: "muted", role: "status" });
    // The warnings of the driver's coach per licensee over the same period (docs/rules.md):
    // heeded, followed by an episode, pending.
    const warnBody = h("tbody");
    const warnInfo = h("p", { class: "muted", role: "status" });
    const today = localDate();
    const fromIn = dateInput(addDays(today, -6), { required: true });
    const toIn = dateInput(today, { required: true });
    let summary = null;
    // The registry's expiring documents: loaded once per visit (for fiscal and above the API
    // audits the read of drivers' items), and the registry's vehicles (licensee, driver).
    const hasRegistry = !!store.config.registry;
    let expiring = null;
    const regVehicles = new Map();
    const expBody = h("tbody");
    const expInfo = h("p", { class: "muted", role: "status" });
    const expCounts = h("span", { class: "chips" });

    const renderFleet = () => {
      const now = Date.now();
      const vs = [...store.vehicles.values()].sort((a, b) => a.id.localeCompare(b.id));
      const online = vs.filter((v) => isOnline(v, now)).length;
      const faults = vs.filter((v) => deviceFaults(v).length).length;
      const alerting = vs.filter((v) => (v.open_episodes || []).length).length;
      cards.replaceChildren(
        kpi("Veículos", vs.length), kpi("Conectados", online, "ok"), kpi("Desconectados", vs.length - online, vs.length - online ? "neutral" : "ok"),
        kpi("Em infração agora", alerting, alerting ? "danger" : "ok"), kpi("Com falha de dispositivo", faults, faults ? "warn" : "ok"),
        kpi("Minutas pendentes", store.pendingDrafts(), store.pendingDrafts() ? "warn" : "ok"));
      tbody.replaceChildren(...(vs.length ? vs.map((v) => {
        const st = vehicleState(v, now);
        return h("tr", { dataset: { vehicle: v.id } },
          h("th", { scope: "row", class: "nowrap" }, h("a", { href: "#/mapa/" + encodeURIComponent(v.id) }, v.id)),
          h("td", { class: "col-low" }, licenseeEl(v.licensee)),
          h("td", null, chip(isOnline(v, now) ? "conectado" : "desconectado", isOnline(v, now) ? "ok" : "neutral"), st === "online" || st === "offline" ? null : [" ", h("small", { class: "muted" }, STATE_LABELS[st])]),
          h("td", null, v.last_seen ? h("span", { title: fmtDateTime(v.last_seen) }, fmtAgo(v.last_seen, now)) : "nunca",
            v.last_seen ? h("small", { class: "muted block" }, fmtDateTime(v.last_seen, false)) : null),
          h("td", { class: "num col-low" }, fmtValue(v.speed_kmh, "km/h")),
          h("td", { class: "num col-low" }, fmtValue(v.laeq_db, "dB(A)")),
          h("td", { class: "num col-low" }, v.spool_depth == null ? "—" : fmtNum(v.spool_depth, 0)),
          h("td", null, devicesCell(v)),
          hasRegistry ? h("td", { class: "docs-cell" }, docsCell(v)) : null,
          h("td", { class: "num" }, String((v.open_episodes || []).length)));
      }) : [emptyRow(hasRegistry ? 10 : 9, "Nenhum veículo enviou dados ainda.")]));
    };

    // itemsOf: the expiring items that concern a vehicle: its own documents and devices, its
    // licensee's and its assigned driver's.
    const itemsOf = (v) => {
      const rv = regVehicles.get(v.id);
      const lic = (rv && rv.licensee) || v.licensee;
      return expiring.items.filter((e) => (e.subject.kind === "vehicle" && e.subject.id === v.id) ||
        (e.subject.kind === "device" && e.subject.vehicle === v.id) || (e.subject.kind === "licensee" && e.subject.id === lic) ||
        (e.subject.kind === "driver" && rv && rv.driver && e.subject.id === rv.driver));
    };
    const docsCell = (v) => {
      if (!expiring) return h("span", { class: "muted" }, "…");
      if (!regVehicles.has(v.id)) return h("span", { class: "muted" }, "não cadastrado");
      const items = itemsOf(v);
      if (!items.length) return chip("em dia", "ok", `Nada vencido nem a vencer em ${EXPIRING_DAYS} dias`);
      const expired = items.filter((e) => e.expired || e.problem === "category").length;
      const soon = items.length - expired;
      const detail = items.map((e) => `${subjectText(e)}: ${documentName(e)} — ${e.status_label}`).join("\n");
      return h("span", { class: "chips", title: detail, dataset: { docs: expired ? "expired" : "expiring" } },
        expired ? chip(plural(expired, "vencido", "vencidos"), "danger") : null, soon ? chip(`${soon} a vencer`, "warn") : null,
        h("span", { class: "sr-only" }, ": " + detail.replace(/\n/g, "; ")));
    };

    const loadExpiring = async () => {
      if (!hasRegistry) return;
      expInfo.textContent = "Carregando…";
      try {
        const [page, vs] = await Promise.all([api(`/api/v1/registry/expiring?days=${EXPIRING_DAYS}&limit=1000`), listAll("/api/v1/registry/vehicles")]);
        regVehicles.clear();
        for (const v of vs) regVehicles.set(v.id, v);
        const items = (page.items || []).slice().sort((a, b) => (b.expired - a.expired) || String(a.valid_until || "").localeCompare(String(b.valid_until || "")));
        expiring = { ...page, items };
        renderExpiring();
        renderFleet();
      } catch (e) {
        expInfo.textContent = "Não foi possível carregar os vencimentos: " + e.message;
      }
    };
    const renderExpiring = () => {
      const { items } = expiring;
      const expired = items.filter((e) => e.expired).length;
      expCounts.replaceChildren(...[expired ? chip(plural(expired, "vencido", "vencidos"), "danger") : null,
        items.length - expired ? chip(`${items.length - expired} a vencer`, "warn") : null, items.length ? null : chip("tudo em dia", "ok")].filter(Boolean));
      expBody.replaceChildren(...(items.length ? items.map((e) => h("tr", { class: e.expired ? "is-expired" : null, dataset: { subject: e.subject.vehicle || e.subject.id, document: e.document } },
        h("td", null, e.problem === "category" ? chip("categoria incompatível", "danger") : e.expired ? chip("vencido", "danger") : e.days_left === 0 ? chip("vence hoje", "warn") : chip("a vencer", "warn")),
        h("th", { scope: "row" }, subjectCell(e)),
        h("td", { title: e.label }, documentName(e)),
        h("td", null, e.number ? h("code", { class: "nowrap" }, e.number) : h("span", { class: "muted" }, "—")),
        h("td", { class: "nowrap" }, isoDateBR(e.valid_until)),
        h("td", { class: "nowrap" + (e.expired ? " text-danger" : ""), title: e.status_label },
          e.expired ? `há ${plural(-e.days_left, "dia", "dias")}` : e.days_left === 0 ? "hoje" : plural(e.days_left, "dia", "dias"))))
        : [emptyRow(6, `Nenhum documento vencido nem a vencer nos próximos ${EXPIRING_DAYS} dias.`)]));
      const drivers = items.some((e) => e.subject.kind === "driver");
      expInfo.textContent = `Situação em ${isoDateBR(expiring.as_of)} · ${plural(items.length, "item", "itens")}` +
        (drivers ? " · inclui CNH e atestados de condutores (identificados pelo ID); esta consulta foi registrada na auditoria." : "");
    };

    const loadSummary = async () => {
      const a = fromIn.iso(), z = toIn.iso();
      if (!a || !z || a > z) { sumInfo.textContent = "Escolha um período válido (dd/mm/aaaa)."; return; }
      const days = [];
      for (let d = a; d <= z && days.length < 62; d = addDays(d, 1)) days.push(d);
      const from = dayRange(days[0])[0], to = dayRange(days[days.length - 1])[1];
      sumInfo.textContent = "Carregando episódios…";
      const range = `from=${from.toISOString()}&to=${to.toISOString()}`;
      try {
        // The days each vehicle sent data: a day without episodes is compliant only if there
        // was data (older monitors lack the route: then the last contact bounds it).
        const [eps, activity] = await Promise.all([listAll(`/api/v1/episodes?${range}`, 20000),
          api(`/api/v1/vehicles/activity?${range}`).catch(() => null)]);
        summary = summarize(eps, days, activity);
        renderSummary();
      } catch (e) { sumInfo.textContent = e.message; }
      loadWarnings(range);
    };
    const loadWarnings = async (range) => {
      warnInfo.textContent = "Carregando alertas…";
      try {
        const w = await api(`/api/v1/warnings/summary?${range}`);
        const ls = w.licensees || [];
        warnBody.replaceChildren(...(ls.length ? ls.map((l) => h("tr", { dataset: { licensee: l.licensee } },
          h("th", { scope: "row" }, l.licensee ? licenseeEl(l.licensee) : h("span", { class: "muted" }, "veículos não cadastrados")),
          h("td", { class: "num" }, String(l.warnings)),
          h("td", { class: "num" }, chip(String(l.heeded), "ok")),
          h("td", { class: "num" }, l.followed ? chip(String(l.followed), "danger") : "0"),
          h("td", { class: "num" }, String(l.pending))))
          : [emptyRow(5, "Nenhum alerta do sistema embarcado no período.")]));
        warnInfo.textContent = `Atendido: nenhum episódio da mesma regra (e do mesmo local) do veículo nos ${fmtNum(w.window_min, 0)} min seguintes ao alerta · ` +
          "os alertas são registros do equipamento do permissionário: nunca fundamentam um auto.";
      } catch (e) { warnInfo.textContent = "Não foi possível carregar os alertas: " + e.message; }
    };
    const renderSummary = () => {
      const { days, rows } = summary;
      sumHead.replaceChildren(h("tr", null, h("th", { scope: "col" }, "Veículo"), ...days.map((d) => h("th", { scope: "col", class: "num" }, isoDateBR(d).slice(0, 5))), h("th", { scope: "col", class: "num" }, "Total")));
      sumBody.replaceChildren(...(rows.length ? rows.map((r) => h("tr", null, h("th", { scope: "row" }, r.vehicle),
        ...days.map((d) => {
          const c = r.days[d];
          if (!c) {
            const data = dataOn(summary, r.vehicle, d);
            if (data === "yes") return h("td", { class: "num cell-ok", title: "Com dados e sem ocorrências" }, "✓");
            if (data === "unknown") return h("td", { class: "num cell-none", title: "Fora do período guardado no registro de lotes: não se sabe se houve dados" }, "?");
            return h("td", { class: "num cell-none", title: "O veículo não enviou dados neste dia" }, "sem dados");
          }
          const detail = Object.entries(c.rules).map(([k, n]) => `${ruleName(k)}: ${n}`).join("\n");
          return h("td", { class: "num cell-bad", title: detail + `\nDuração total: ${fmtDuration(c.duration)}` }, String(c.count),
            h("small", { class: "block" }, Object.keys(c.rules).map((k) => RULES_SHORT[k] || k).join(", ")));
        }), h("td", { class: "num" }, h("strong", null, String(r.total))))) : [emptyRow(days.length + 2, "Nenhum episódio no período: toda a frota conforme.")]));
      sumInfo.textContent = `${isoDateBR(days[0])} a ${isoDateBR(days[days.length - 1])} · ${rows.reduce((n, r) => n + r.total, 0)} episódio(s) · ✓ = dados recebidos e nenhuma ocorrência no dia · sem dados = o veículo não enviou dados` +
        (summary.activity ? (summary.activity.since ? ` · ? = antes de ${isoDateBR(summary.activity.since)}, início do registro de lotes guardado` : "") : " (estimado pelo último contato)");
    };

    const exportFleet = () => {
      const now = Date.now();
      const rows = [["veiculo", "permissionario", "situacao", "estado", "visto_por_ultimo", "velocidade_kmh", "som_dba", "fila_lotes", "gps", "tacografo", "decibelimetro", "episodios_abertos", ...(expiring ? ["documentos"] : [])]];
      for (const v of [...store.vehicles.values()].sort((a, b) => a.id.localeCompare(b.id))) {
        rows.push([v.id, v.licensee ? licenseeName(v.licensee) : "", isOnline(v, now) ? "conectado" : "desconectado", STATE_LABELS[vehicleState(v, now)],
          v.last_seen ? fmtDateTime(v.last_seen) : "", num(v.speed_kmh), num(v.laeq_db), v.spool_depth ?? "",
          ...Object.keys(DEVICES).map((k) => (v.devices || {})[k] || ""), (v.open_episodes || []).length,
          ...(expiring ? [regVehicles.has(v.id) ? itemsOf(v).map((e) => `${e.label}: ${e.status_label}`).join(" | ") || "em dia" : "não cadastrado"] : [])]);
      }
      download(`frota-${localDate()}.csv`, csv(rows));
    };
    const exportSummary = () => {
      if (!summary) return;
      const rows = [["veiculo", "data", "regra", "episodios", "duracao_total_s"]];
      for (const r of summary.rows) for (const d of summary.days) {
        const c = r.days[d];
        if (!c) { rows.push([r.vehicle, isoDateBR(d), { yes: "", no: "sem dados", unknown: "desconhecido" }[dataOn(summary, r.vehicle, d)], 0, 0]); continue; }
        for (const [rule, n] of Object.entries(c.rules)) rows.push([r.vehicle, isoDateBR(d), ruleName(rule), n, Math.round(c.byRuleDuration[rule])]);
      }
      download(`conformidade-${summary.days[0]}-a-${summary.days[summary.days.length - 1]}.csv`, csv(rows));
    };

    el.append(
      cards,
      h("section", { class: "card" },
        h("div", { class: "card-head" }, h("h2", { class: "card-title" }, "Situação dos veículos"),
          h("button", { type: "button", class: "btn", id: "export-fleet", onclick: exportFleet }, "Exportar CSV")),
        tableWrap("Situação dos veículos", h("table", { class: "table", id: "fleet-table" },
          theadOf(["Veículo", ["Permissionário", "col-low"], "Conexão", "Último contato", ["Velocidade", "col-low"], ["Som", "col-low"], ["Fila", "col-low"], "Dispositivos", hasRegistry ? "Documentos" : null, "Episódios em aberto"]),
          tbody))),
      hasRegistry ? h("section", { class: "card", id: "expiring", "aria-labelledby": "expiring-title" },
        h("div", { class: "card-head" }, h("h2", { class: "card-title", id: "expiring-title" }, `Vencimentos (próximos ${EXPIRING_DAYS} dias)`), expCounts,
          h("button", { type: "button", class: "btn push-right", onclick: loadExpiring }, "Atualizar")),
        tableWrap("Vencimentos", h("table", { class: "table", id: "expiring-table" },
          h("thead", null, h("tr", null, ...["Situação", "Titular", "Documento", "Número", "Válido até", "Prazo"].map((t) => h("th", { scope: "col" }, t)))),
          expBody)),
        h("div", { class: "table-foot" }, expInfo, h("a", { href: "#/cadastro/documentos" }, "Ver o cadastro")))
        : h("p", { class: "muted small quiet-note", id: "expiring-none" }, "Vencimento de documentos: cadastro não configurado neste monitor (TRENZINHO_REGISTRY)."),
      h("section", { class: "card" },
        h("div", { class: "card-head" }, h("h2", { class: "card-title" }, "Conformidade por veículo e dia"),
          h("button", { type: "button", class: "btn", onclick: exportSummary }, "Exportar CSV")),
        h("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); loadSummary(); } },
          field("De", fromIn), field("Até", toIn), h("button", { type: "submit", class: "btn btn-primary" }, "Atualizar")),
        tableWrap("Conformidade por veículo e dia", h("table", { class: "table table--matrix", id: "compliance-table" }, sumHead, sumBody)),
        sumInfo),
      h("section", { class: "card", id: "warnings", "aria-labelledby": "warnings-title" },
        h("div", { class: "card-head" }, h("h2", { class: "card-title", id: "warnings-title" }, "Alertas do sistema embarcado por permissionário")),
        tableWrap("Alertas do sistema embarcado", h("table", { class: "table", id: "warnings-table" },
          theadOf(["Permissionário", "Alertas", "Atendidos", "Seguidos de episódio", "Aguardando"]), warnBody)),
        warnInfo));
    renderFleet();
    loadSummary();
    loadExpiring();
    let timer = 0;
    const later = () => { if (!timer) timer = setTimeout(() => { timer = 0; renderFleet(); }, 2000); };
    const offs = [store.on("vehicle", later), store.on("reset", later), store.on("episode", later), store.on("draft", later)];
    const tick = setInterval(renderFleet, 15000);
    this.off = () => { offs.forEach((f) => f()); clearInterval(tick); clearTimeout(timer); };
  },
  unmount() { if (this.off) this.off(); },
};

function kpi(label, value, tone = "neutral") {
  return h("div", { class: "kpi kpi--" + tone }, h("span", { class: "kpi-value" }, String(value)), h("span", { class: "kpi-label" }, label));
}

function devicesCell(v) {
  const d = v.devices || {};
  if (!Object.keys(d).length) return h("span", { class: "muted" }, "sem status");
  return h("span", { class: "chips" }, ...Object.entries(DEVICES).map(([k, name]) =>
    d[k] ? chip(`${name}: ${DEVICE_STATES[d[k]] || d[k]}`, d[k] === "ok" ? "ok" : "danger") : null),
  configStale(v) ? h("span", { class: "config-stale", title: `O veículo usa a configuração ${v.config_version || "nenhuma"}; a atual é ${v.config_current}` },
    chip("configuração desatualizada", "warn")) : null);
}

// configStale: the monitor issued the vehicle a configuration bundle that its bridge does not
// say it runs (docs/protocol.md §9).
function configStale(v) {
  return !!v.config_current && v.config_version !== v.config_current;
}

// dataOn says whether a vehicle sent data on a local day: "yes", "no" or "unknown" (before the
// batch log's retention). Without the activity route, the last contact bounds it.
function dataOn(summary, vehicle, day) {
  const a = summary.activity;
  if (a) {
    if (a.days.get(vehicle)?.has(day)) return "yes";
    if (a.since && day < a.since) return "unknown";
    return "no";
  }
  const v = store.vehicles.get(vehicle);
  if (!v || !v.last_seen) return "no";
  return day > localDate(v.last_seen) ? "no" : "yes";
}

// summarize counts the episodes of each vehicle on each local day they started.
function summarize(eps, days, activity) {
  const byVehicle = new Map();
  for (const v of store.vehicles.keys()) byVehicle.set(v, { vehicle: v, days: {}, total: 0 });
  const inRange = new Set(days);
  for (const e of eps) {
    const d = localDate(e.start);
    if (!inRange.has(d)) continue;
    let r = byVehicle.get(e.vehicle);
    if (!r) { r = { vehicle: e.vehicle, days: {}, total: 0 }; byVehicle.set(e.vehicle, r); }
    const c = r.days[d] || (r.days[d] = { count: 0, rules: {}, duration: 0, byRuleDuration: {} });
    c.count++;
    c.rules[e.rule] = (c.rules[e.rule] || 0) + 1;
    c.duration += e.duration_s || 0;
    c.byRuleDuration[e.rule] = (c.byRuleDuration[e.rule] || 0) + (e.duration_s || 0);
    r.total++;
  }
  const act = activity ? { days: new Map((activity.items || []).map((x) => [x.vehicle, new Set(x.days || [])])),
    since: activity.logged_since ? localDate(activity.logged_since) : null } : null;
  if (act) for (const v of act.days.keys()) if (!byVehicle.has(v)) byVehicle.set(v, { vehicle: v, days: {}, total: 0 });
  return { days, activity: act, rows: [...byVehicle.values()].sort((a, b) => a.vehicle.localeCompare(b.vehicle)) };
}

const num = (v) => (v == null ? "" : String(v).replace(".", ","));

// csv: semicolon-separated with a BOM, as spreadsheets in Brazil expect (the comma is the
// decimal separator).
function csv(rows) {
  const cell = (v) => {
    let s = String(v ?? "");
    if (/^[=+@\t\r]/.test(s)) s = "'" + s; // never a formula
    return /[";\n\r]/.test(s) ? '"' + s.replace(/"/g, '""') + '"' : s;
  };
  return "\ufeff" + rows.map((r) => r.map(cell).join(";")).join("\r\n") + "\r\n";
}
