// "E se…?": the what-if replay (docs/whatif.md). A period of the archive is judged again, in the
// background and in stores of its own (never the live database), under the profile in force
// and under a proposal; the page starts the run, follows its progress, cancels it, and shows
// the side-by-side report — per rule, licensee, site and hour, fines in UFMP, the episodes that
// appear and vanish — with its CSV files and PDF. The control room (supervisor, autoridade,
// admin) proposes a profile and geofences; on the portal a licensee proposes their itinerary,
// replayed on their own vehicles (the server scopes every portal route to the licensee).

import { api } from "./api.js";
import { h, chip, tableWrap, theadOf, dateInput, field, emptyRow } from "./dom.js";
import { fmtNum, fmtDateTime, fmtTime, fmtValue, isoDateBR, ruleName, localDate, addDays, KINDS } from "./fmt.js";
import { toastError, toastOk } from "./toast.js";
import { store } from "./store.js";
import { withBaseMap, ZOOM_PT } from "./geo.js";

const STATES = { running: ["Em andamento", "info"], done: ["Concluída", "ok"], failed: ["Falhou", "danger"], canceled: ["Cancelada", "neutral"] };
const FILES = {
  "relatorio.pdf": "Relatório (PDF)", "resumo.csv": "Resumo (CSV)", "episodios.csv": "Episódios (CSV)",
  "evidencias.csv": "Evidências (CSV)", "cobertura.csv": "Cobertura (CSV)", "lacunas.csv": "Lacunas (CSV)",
};

const ufmp = (v) => fmtNum(v, 2);
const signed = (n, fmt = String) => (n > 0 ? "+" + fmt(n) : n < 0 ? "−" + fmt(-n) : "0");

// whatifPanel mounts the page in el. base is the API's prefix (/api/v1/whatif or
// /api/v1/portal/whatif); portal: the licensee's page (the proposal is an itinerary; vehicles
// lists theirs). It returns the function that stops its polling.
export function whatifPanel(el, { base, portal = false, vehicles = [] }) {
  let timer = 0;
  let stopped = false;
  let diffMap = null; // the Leaflet map of the report shown, removed with it
  const today = localDate();
  const from = dateInput(addDays(today, -7), { id: "whatif-from", required: true });
  const to = dateInput(addDays(today, -1), { id: "whatif-to", required: true });
  const fileInput = (id, accept) => h("input", { type: "file", id, accept });
  const profile = portal ? null : fileInput("whatif-profile", ".yaml,.yml");
  const geo = portal ? null : fileInput("whatif-geofences", ".geojson,.json");
  const itinerary = portal ? fileInput("whatif-itinerary", ".geojson,.json") : null;
  const error = h("p", { class: "form-error", id: "whatif-error", role: "alert" });
  const startBtn = h("button", { type: "submit", class: "btn btn-primary", id: "whatif-start" }, "Simular");
  const status = h("section", { class: "card", id: "whatif-status", hidden: true });
  const report = h("div", { id: "whatif-report" });
  const runs = h("section", { class: "card", id: "whatif-runs" });

  const form = h("form", { class: "card", id: "whatif-form", onsubmit: start },
    h("h2", null, portal ? "E se eu mudar o itinerário?" : "Simular uma mudança do perfil legal"),
    h("p", { class: "muted" }, portal
      ? "Envie o itinerário que você pretende pedir (GeoJSON, feições \"itinerary\" do seu permissionário): os dados gravados dos seus veículos no período são julgados de novo com ele no lugar do itinerário em vigor, e o resultado mostra os episódios e autos que surgiriam ou desapareceriam. É só uma simulação: nada do sistema em operação muda."
      : "Os dados gravados do período são julgados de novo pelo monitor com o perfil vigente e com o proposto, em bases separadas: nenhum episódio, minuta, notificação ou registro de auditoria do sistema em operação é lido ou alterado. Envie o perfil proposto (YAML) e/ou geocercas propostas (GeoJSON, somadas às vigentes; uma feição com o mesmo id substitui a vigente)."),
    portal && vehicles.length ? h("p", { id: "whatif-vehicles" }, "Seus veículos simulados: ", vehicles.map((v, i) => [i ? ", " : "", h("strong", null, v)])) : null,
    portal ? h("p", null, h("a", { href: `${base}/itinerary`, download: "", id: "whatif-itinerary-in-force" }, "Baixar o itinerário em vigor (GeoJSON)"),
      " para editar e enviar como proposta.") : null,
    h("div", { class: "form-grid" },
      field("Primeiro dia", from, "dd/mm/aaaa"), field("Último dia", to, "incluído; até 92 dias"),
      portal ? field("Itinerário proposto (GeoJSON)", itinerary, "até 256 KiB") : [
        field("Perfil proposto (YAML)", profile, "até 256 KiB; vazio: o perfil vigente"),
        field("Geocercas propostas (GeoJSON)", geo, "opcional, até 256 KiB")]),
    error,
    h("div", { class: "btn-row" }, startBtn));
  el.append(form, status, report, runs);
  refreshRuns();
  // A run in progress (started here or elsewhere) is followed at once.
  api(base).then((l) => { const r = (l.items || []).find((x) => x.state === "running"); if (r) follow(r.id); }).catch(() => {});

  async function start(ev) {
    ev.preventDefault();
    error.textContent = "";
    const f = from.iso(), t = to.iso();
    if (!f || !t) { error.textContent = "Informe o período com datas dd/mm/aaaa."; return; }
    const body = new FormData();
    body.append("from", f);
    body.append("to", t);
    for (const [name, input] of [["profile", profile], ["geofences", geo], ["itinerary", itinerary]]) {
      if (input && input.files.length) body.append(name, input.files[0], input.files[0].name);
    }
    startBtn.disabled = true;
    try {
      const st = await api(base, { method: "POST", body });
      report.replaceChildren();
      follow(st.id);
    } catch (e) {
      error.textContent = e.message;
      startBtn.disabled = false;
    }
  }

  async function follow(id) {
    clearTimeout(timer);
    if (stopped) return;
    let st;
    try { st = await api(`${base}/${id}`); } catch (e) { toastError(e.message); return; }
    showStatus(st);
    if (st.state === "running") { startBtn.disabled = true; timer = setTimeout(() => follow(id), 1000); return; }
    startBtn.disabled = false;
    refreshRuns();
    if (st.state === "done") await showReport(st);
  }

  function showStatus(st) {
    status.hidden = false;
    const [label, tone] = STATES[st.state] || [st.state, "neutral"];
    const running = st.state === "running";
    status.replaceChildren(...[
      h("div", { class: "card-head" }, h("h2", null, `Simulação de ${isoDateBR(st.from)} a ${isoDateBR(st.to)}`), chip(label, tone)),
      h("p", { class: "muted" }, `Vigente: ${st.in_force} · Proposto: ${st.proposed} · iniciada por ${st.user} em ${fmtDateTime(st.started, false)}`),
      running || st.total ? h("progress", { id: "whatif-progress", class: "whatif-progress", max: String(Math.max(1, st.total)), value: String(st.done) }) : null,
      h("p", { id: "whatif-progress-text", role: "status" },
        `${st.done} de ${st.total} veículo-dias (${fmtNum(st.percent, 0)}%), ${fmtNum(st.readings, 0)} leituras`,
        running && st.eta ? ` · término previsto às ${fmtTime(st.eta, false)}` : ""),
      st.error ? h("p", { class: "form-error" }, st.error) : null,
      running ? h("div", { class: "btn-row" }, h("button", { type: "button", class: "btn btn-danger-outline", id: "whatif-cancel",
        onclick: async (e) => {
          e.currentTarget.disabled = true;
          try { await api(`${base}/${st.id}/cancel`, { method: "POST" }); toastOk("Simulação cancelada."); follow(st.id); }
          catch (err) { toastError(err.message); }
        } }, "Cancelar")) : null].filter(Boolean));
  }

  async function showReport(st) {
    let rep;
    try { rep = await api(`${base}/${st.id}/report`); } catch (e) { toastError(e.message); return; }
    const t = rep.total;
    const tot = (label, get, fmt = String) => h("tr", null, h("th", { scope: "row" }, label),
      h("td", { class: "num" }, fmt(get(t.in_force))), h("td", { class: "num" }, fmt(get(t.proposed))),
      h("td", { class: "num" }, signed(get(t.proposed) - get(t.in_force), fmt)));
    const dims = (rep.tables || []).map((tb) => h("section", { class: "card", id: "whatif-table-" + tb.dimension },
      h("h3", null, tb.title),
      tableWrap(tb.title, h("table", { class: "table" },
        theadOf([tb.key_title, "Episódios (vigente)", "Episódios (proposto)", "Diferença", "Autos (vigente)", "Autos (proposto)", "Multas UFMP (vigente)", "Multas UFMP (proposto)", "Diferença UFMP"]),
        h("tbody", null, tb.rows.length ? tb.rows.map((r) => h("tr", null, h("th", { scope: "row" }, tb.dimension === "regra" ? ruleLabel(r) : r.label),
          h("td", { class: "num" }, r.in_force.episodes), h("td", { class: "num" }, r.proposed.episodes),
          h("td", { class: "num" }, signed(r.proposed.episodes - r.in_force.episodes)),
          h("td", { class: "num" }, r.in_force.autos), h("td", { class: "num" }, r.proposed.autos),
          h("td", { class: "num" }, ufmp(r.in_force.ufmp)), h("td", { class: "num" }, ufmp(r.proposed.ufmp)),
          h("td", { class: "num" }, signed(r.proposed.ufmp - r.in_force.ufmp, ufmp)))) : emptyRow(9, "Nenhum episódio.")))),
      tb.note ? h("p", { class: "muted small" }, tb.note) : null));
    // Each episode that appears or vanishes opens, in a row below it, the readings of its
    // evidence (the first ones; evidencias.csv has all).
    const evidenceRow = (d) => h("tr", { class: "whatif-evidence", hidden: true },
      h("td", { colspan: "9" }, d.readings && d.readings.length ? tableWrap("Evidências", h("table", { class: "table table--compact" },
        theadOf(["Hora", "Leitura", "Valor", "Posição"]),
        h("tbody", null, d.readings.map((r) => h("tr", null, h("td", null, fmtTime(r.t)), h("td", null, KINDS[r.kind] || r.kind),
          h("td", { class: "num" }, fmtValue(r.value, r.unit)),
          h("td", null, r.lat != null && r.lon != null ? `${fmtNum(r.lat, 5)}, ${fmtNum(r.lon, 5)}` : "—")))))) :
        h("p", { class: "muted" }, "Sem leituras registradas na evidência."),
      d.evidence > (d.readings || []).length ? h("p", { class: "muted small" }, `As primeiras ${d.readings.length} de ${d.evidence} leituras; o arquivo evidencias.csv tem todas.`) : null));
    const diffs = (id, title, list, count) => h("section", { class: "card", id },
      h("h3", null, `${title} (${count})`),
      count > list.length ? h("p", { class: "muted small" }, `Os primeiros ${list.length}; o arquivo episodios.csv tem todos.`) : null,
      tableWrap(title, h("table", { class: "table" },
        theadOf(["Veículo", "Permissionário", "Regra", "Início", "Pico / limite", "Local", "Auto", "Multa (UFMP)", ""]),
        h("tbody", null, list.length ? list.flatMap((d) => {
          const more = evidenceRow(d);
          return [h("tr", { dataset: { episode: d.id } }, h("th", { scope: "row" }, d.vehicle), h("td", null, d.licensee || "—"),
            h("td", null, ruleName(d.rule)), h("td", null, fmtDateTime(d.start)),
            h("td", null, `${fmtNum(d.peak)} / ${fmtNum(d.limit)} ${d.unit || ""}`), h("td", null, d.site || "—"),
            h("td", null, d.drafted ? "sim" : "não"), h("td", { class: "num" }, d.drafted ? ufmp(d.fine_ufmp) : "—"),
            h("td", null, h("button", { type: "button", class: "btn btn-small whatif-open", "aria-expanded": "false", onclick: (e) => {
              more.hidden = !more.hidden;
              e.currentTarget.setAttribute("aria-expanded", String(!more.hidden));
            } }, "Evidências"))), more];
        }) : emptyRow(9, "Nenhum.")))));
    // The map of where the differences happen: each episode that appears (red) or vanishes
    // (blue) at its peak.
    const placed = [...(rep.appear || []).map((d) => ["surge", d]), ...(rep.vanish || []).map((d) => ["desaparece", d])]
      .filter(([, d]) => d.lat || d.lon);
    const mapEl = h("div", { class: "whatif-map", id: "whatif-map-canvas" });
    const mapCard = h("section", { class: "card card--flush", id: "whatif-map" },
      h("h3", { class: "card-title" }, "Onde as diferenças acontecem"),
      h("p", { class: "muted small" }, placed.length
        ? `${placed.length} episódio(s) no pico: em vermelho os que surgem, em azul os que desaparecem.`
        : "Nenhuma diferença com posição conhecida."),
      mapEl);
    report.replaceChildren(
      h("section", { class: "card", id: "whatif-summary" },
        h("h2", null, "Resultado lado a lado"),
        h("p", { class: "muted" }, `Período ${isoDateBR(rep.from)} a ${isoDateBR(rep.to)} (${rep.time_zone}). Vigente: ${rep.in_force.profile} ${rep.in_force.version}. Proposto: ${rep.proposed.profile} ${rep.proposed.version}.`),
        tableWrap("Totais", h("table", { class: "table", id: "whatif-total" },
          theadOf(["Total", "Vigente", "Proposto", "Diferença"]),
          h("tbody", null, tot("Episódios", (x) => x.episodes), tot("Autos (minutas)", (x) => x.autos), tot("Multas (UFMP)", (x) => x.ufmp, ufmp)))),
        h("p", null, `Surgem ${rep.appear_count} episódio(s), desaparecem ${rep.vanish_count}, alterados ${rep.changed}, iguais ${rep.same}.`),
        h("p", { class: "muted", id: "whatif-coverage" }, `Cobertura: ${rep.coverage.length} veículo(s) com telemetria (${rep.coverage.map((c) => c.vehicle).join(", ") || "nenhum"}); ${rep.gaps} lacuna(s) no horário de serviço, ${fmtNum(rep.gap_hours)} h. Onde não há dados não há julgamento.`),
        h("ul", { class: "btn-row", id: "whatif-downloads" }, (rep.files || []).map((name) => h("li", null,
          h("a", { class: "btn btn-small", href: `${base}/${st.id}/files/${name}`, download: "" }, FILES[name] || name))))),
      mapCard,
      diffs("whatif-appear", "Episódios que surgem", rep.appear || [], rep.appear_count),
      diffs("whatif-vanish", "Episódios que desaparecem", rep.vanish || [], rep.vanish_count),
      ...dims);
    drawDiffMap(mapEl, placed);
  }

  function drawDiffMap(mapEl, placed) {
    if (diffMap) { diffMap.remove(); diffMap = null; }
    const L = window.L;
    if (!L || !placed.length) { mapEl.hidden = !placed.length; return; }
    diffMap = L.map(mapEl, { zoomControl: false, attributionControl: true });
    L.control.zoom(ZOOM_PT).addTo(diffMap);
    diffMap.attributionControl.setPrefix('<a href="https://leafletjs.com">Leaflet</a>');
    withBaseMap(diffMap, store.config || {}, mapEl);
    const pts = [];
    for (const [side, d] of placed) {
      const appear = side === "surge";
      L.circleMarker([d.lat, d.lon], { className: "whatif-marker whatif-marker--" + (appear ? "appear" : "vanish"), radius: 7, weight: 2,
        color: appear ? "#b52b2b" : "#1f4e79", fillColor: appear ? "#d64545" : "#4a7fb0", fillOpacity: 0.8 })
        .bindTooltip(`${side === "surge" ? "Surge" : "Desaparece"}: ${ruleName(d.rule)} · ${d.vehicle} · ${fmtDateTime(d.start)}`).addTo(diffMap);
      pts.push([d.lat, d.lon]);
    }
    diffMap.fitBounds(L.latLngBounds(pts).pad(0.3), { maxZoom: 17 });
  }

  async function refreshRuns() {
    let list;
    try { list = await api(base); } catch { return; }
    const items = list.items || [];
    runs.replaceChildren(h("h2", null, "Simulações guardadas"),
      tableWrap("Simulações", h("table", { class: "table" },
        theadOf(["Período", "Proposto", portal ? null : "Por", "Situação", ""]),
        h("tbody", null, items.length ? items.map((r) => h("tr", null,
          h("th", { scope: "row" }, `${isoDateBR(r.from)} a ${isoDateBR(r.to)}`), h("td", null, r.proposed),
          portal ? null : h("td", null, r.user + (r.licensee ? ` (${r.licensee})` : "")),
          h("td", null, chip(...(STATES[r.state] || [r.state, "neutral"]))),
          h("td", null, h("button", { type: "button", class: "btn btn-small", onclick: () => follow(r.id) }, r.state === "done" ? "Ver resultado" : "Ver")))) : emptyRow(portal ? 4 : 5, "Nenhuma simulação ainda.")))));
  }

  return () => { stopped = true; clearTimeout(timer); if (diffMap) { diffMap.remove(); diffMap = null; } };
}

function ruleLabel(r) {
  return r.key ? ruleName(r.key) : r.label;
}

// whatifView is the control room's page #/e-se (supervisor, autoridade, admin).
export const whatifView = {
  title: "E se…? Simulação",
  role: "supervisor",
  stop: null,
  mount(el) { this.stop = whatifPanel(el, { base: "/api/v1/whatif" }); },
  unmount() { if (this.stop) this.stop(); this.stop = null; },
};
