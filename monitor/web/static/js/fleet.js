// The fleet: every vehicle's connection, last contact, spool depth and device faults, and a
// compliance summary per vehicle per day built from the episodes; both export to CSV (made in
// the browser, nothing is asked of the server).

import { store, isOnline, vehicleState, STATE_LABELS, deviceFaults } from "./store.js";
import { listAll } from "./api.js";
import { h, chip, field, download, emptyRow, dateInput } from "./dom.js";
import { fmtDateTime, fmtAgo, fmtNum, fmtDuration, localDate, dayRange, addDays, isoDateBR, ruleName, RULES_SHORT, DEVICES, DEVICE_STATES, fmtValue } from "./fmt.js";

export const fleetView = {
  title: "Frota",
  mount(el) {
    const cards = h("div", { class: "kpis" });
    const tbody = h("tbody");
    const sumHead = h("thead");
    const sumBody = h("tbody");
    const sumInfo = h("p", { class: "muted", role: "status" });
    const today = localDate();
    const fromIn = dateInput(addDays(today, -6), { required: true });
    const toIn = dateInput(today, { required: true });
    let summary = null;

    const renderFleet = () => {
      const now = Date.now();
      const vs = [...store.vehicles.values()].sort((a, b) => a.id.localeCompare(b.id));
      const online = vs.filter((v) => isOnline(v, now)).length;
      const faults = vs.filter((v) => deviceFaults(v).length).length;
      const alerting = vs.filter((v) => (v.open_episodes || []).length).length;
      cards.replaceChildren(
        kpi("Veículos", vs.length), kpi("Online", online, "ok"), kpi("Offline", vs.length - online, vs.length - online ? "neutral" : "ok"),
        kpi("Em infração agora", alerting, alerting ? "danger" : "ok"), kpi("Com falha de dispositivo", faults, faults ? "warn" : "ok"),
        kpi("Minutas pendentes", store.pendingDrafts(), store.pendingDrafts() ? "warn" : "ok"));
      tbody.replaceChildren(...(vs.length ? vs.map((v) => {
        const st = vehicleState(v, now);
        return h("tr", { dataset: { vehicle: v.id } },
          h("th", { scope: "row" }, h("a", { href: "#/mapa/" + encodeURIComponent(v.id) }, v.id)),
          h("td", null, v.licensee || h("span", { class: "muted" }, "não cadastrado")),
          h("td", null, chip(isOnline(v, now) ? "online" : "offline", isOnline(v, now) ? "ok" : "neutral"), " ", h("small", { class: "muted" }, STATE_LABELS[st])),
          h("td", null, v.last_seen ? h("span", { title: fmtDateTime(v.last_seen) }, fmtAgo(v.last_seen, now)) : "nunca",
            v.last_seen ? h("small", { class: "muted block" }, fmtDateTime(v.last_seen, false)) : null),
          h("td", { class: "num" }, fmtValue(v.speed_kmh, "km/h")),
          h("td", { class: "num" }, fmtValue(v.laeq_db, "dB(A)")),
          h("td", { class: "num" }, v.spool_depth == null ? "—" : fmtNum(v.spool_depth, 0)),
          h("td", null, devicesCell(v)),
          h("td", { class: "num" }, String((v.open_episodes || []).length)));
      }) : [emptyRow(9, "Nenhum veículo enviou dados ainda.")]));
    };

    const loadSummary = async () => {
      const a = fromIn.iso(), z = toIn.iso();
      if (!a || !z || a > z) { sumInfo.textContent = "Escolha um período válido (dd/mm/aaaa)."; return; }
      const days = [];
      for (let d = a; d <= z && days.length < 62; d = addDays(d, 1)) days.push(d);
      const from = dayRange(days[0])[0], to = dayRange(days[days.length - 1])[1];
      sumInfo.textContent = "Carregando episódios…";
      try {
        const eps = await listAll(`/api/v1/episodes?from=${from.toISOString()}&to=${to.toISOString()}`, 20000);
        summary = summarize(eps, days);
        renderSummary();
      } catch (e) { sumInfo.textContent = e.message; }
    };
    const renderSummary = () => {
      const { days, rows } = summary;
      sumHead.replaceChildren(h("tr", null, h("th", { scope: "col" }, "Veículo"), ...days.map((d) => h("th", { scope: "col", class: "num" }, isoDateBR(d).slice(0, 5))), h("th", { scope: "col", class: "num" }, "Total")));
      sumBody.replaceChildren(...(rows.length ? rows.map((r) => h("tr", null, h("th", { scope: "row" }, r.vehicle),
        ...days.map((d) => {
          const c = r.days[d];
          if (!c) return h("td", { class: "num cell-ok", title: "Sem ocorrências" }, "✓");
          const detail = Object.entries(c.rules).map(([k, n]) => `${ruleName(k)}: ${n}`).join("\n");
          return h("td", { class: "num cell-bad", title: detail + `\nDuração total: ${fmtDuration(c.duration)}` }, String(c.count),
            h("small", { class: "block" }, Object.keys(c.rules).map((k) => RULES_SHORT[k] || k).join(", ")));
        }), h("td", { class: "num" }, h("strong", null, String(r.total))))) : [emptyRow(days.length + 2, "Nenhum episódio no período: toda a frota conforme.")]));
      sumInfo.textContent = `${isoDateBR(days[0])} a ${isoDateBR(days[days.length - 1])} · ${rows.reduce((n, r) => n + r.total, 0)} episódio(s) · ✓ = nenhuma ocorrência registrada no dia`;
    };

    const exportFleet = () => {
      const now = Date.now();
      const rows = [["veiculo", "permissionario", "situacao", "estado", "visto_por_ultimo", "velocidade_kmh", "som_dba", "fila_lotes", "gps", "tacografo", "decibelimetro", "episodios_abertos"]];
      for (const v of [...store.vehicles.values()].sort((a, b) => a.id.localeCompare(b.id))) {
        rows.push([v.id, v.licensee || "", isOnline(v, now) ? "online" : "offline", STATE_LABELS[vehicleState(v, now)],
          v.last_seen ? fmtDateTime(v.last_seen) : "", num(v.speed_kmh), num(v.laeq_db), v.spool_depth ?? "",
          ...Object.keys(DEVICES).map((k) => (v.devices || {})[k] || ""), (v.open_episodes || []).length]);
      }
      download(`frota-${localDate()}.csv`, csv(rows));
    };
    const exportSummary = () => {
      if (!summary) return;
      const rows = [["veiculo", "data", "regra", "episodios", "duracao_total_s"]];
      for (const r of summary.rows) for (const d of summary.days) {
        const c = r.days[d];
        if (!c) { rows.push([r.vehicle, isoDateBR(d), "", 0, 0]); continue; }
        for (const [rule, n] of Object.entries(c.rules)) rows.push([r.vehicle, isoDateBR(d), ruleName(rule), n, Math.round(c.byRuleDuration[rule])]);
      }
      download(`conformidade-${summary.days[0]}-a-${summary.days[summary.days.length - 1]}.csv`, csv(rows));
    };

    el.append(
      cards,
      h("section", { class: "card" },
        h("div", { class: "card-head" }, h("h2", { class: "card-title" }, "Situação dos veículos"),
          h("button", { type: "button", class: "btn", id: "export-fleet", onclick: exportFleet }, "Exportar CSV")),
        h("div", { class: "table-wrap" }, h("table", { class: "table", id: "fleet-table" },
          h("thead", null, h("tr", null, ...["Veículo", "Permissionário", "Conexão", "Último contato", "Velocidade", "Som", "Fila", "Dispositivos", "Episódios abertos"].map((t) => h("th", { scope: "col" }, t)))),
          tbody))),
      h("section", { class: "card" },
        h("div", { class: "card-head" }, h("h2", { class: "card-title" }, "Conformidade por veículo e dia"),
          h("button", { type: "button", class: "btn", onclick: exportSummary }, "Exportar CSV")),
        h("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); loadSummary(); } },
          field("De", fromIn), field("Até", toIn), h("button", { type: "submit", class: "btn btn-primary" }, "Atualizar")),
        h("div", { class: "table-wrap" }, h("table", { class: "table table--matrix", id: "compliance-table" }, sumHead, sumBody)),
        sumInfo));
    renderFleet();
    loadSummary();
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
    d[k] ? chip(`${name}: ${DEVICE_STATES[d[k]] || d[k]}`, d[k] === "ok" ? "ok" : "danger") : null));
}

// summarize counts the episodes of each vehicle on each local day they started.
function summarize(eps, days) {
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
  return { days, rows: [...byVehicle.values()].sort((a, b) => a.vehicle.localeCompare(b.vehicle)) };
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
