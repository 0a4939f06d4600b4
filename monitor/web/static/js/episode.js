// An episode: its facts, the track of its evidence on a map with a replay, and speed/sound
// charts (uPlot) with the limit line.

import { store } from "./store.js";
import { api } from "./api.js";
import { h, icon, chip } from "./dom.js";
import { fmtDateTime, fmtTime, fmtDuration, fmtValue, fmtNum, ruleName, CATEGORIES, SOURCES, KINDS, AREAS, DETAILS, CLOSED, CLOSED_HELP, CLOCK_HELP, timeZone, documentText, fmtOpeningHours, limitApplies } from "./fmt.js";
import { episodeStatus, peakText, statusHelp } from "./alerts.js";
import { loadGeofences, buildLayers, withBaseMap, unfocusPaths, ZOOM_PT } from "./geo.js";
import { triagePanel } from "./triage.js";
import { verificationCard } from "./field.js";
import { episodeComplaints } from "./complaints.js";

const KIND_COLORS = { tacho: "#2f7ed8", gps: "#11806a", sound: "#c2571a" };

export const episodeView = {
  title: "Episódio",
  async mount(el, id) {
    this.cleanup = [];
    el.append(h("p", { class: "muted", role: "status" }, "Carregando o episódio…"));
    let e;
    try {
      e = await api("/api/v1/episodes/" + encodeURIComponent(decodeURIComponent(id || "")));
    } catch (err) {
      el.replaceChildren(h("div", { class: "card" }, h("p", { class: "form-error" }, err.message), h("a", { href: "#/alertas" }, "Voltar aos alertas")));
      return;
    }
    if (!el.isConnected) return;
    render.call(this, el, e);
  },
  unmount() {
    for (const fn of this.cleanup || []) fn();
    this.cleanup = [];
  },
};

function render(el, e) {
  const [st, tone] = episodeStatus(e);
  const draft = store.draftForEpisode(e.id);
  const readings = [...(e.readings || [])].sort((a, b) => a.t.localeCompare(b.t));
  const facts = h("dl", { class: "facts" });
  const add = (k, v) => { if (v != null && v !== "") facts.append(h("dt", null, k), h("dd", null, v)); };
  add("Veículo", h("a", { href: "#/mapa/" + encodeURIComponent(e.vehicle) }, e.vehicle));
  if (e.unregistered) add("Cadastro", chip("veículo não cadastrado", "warn"));
  add("Início", fmtDateTime(e.start));
  add("Fim", e.end ? `${fmtDateTime(e.end)} (${(CLOSED[e.closed_reason] || "encerrado").toLowerCase()})` : "em andamento");
  // An interrupted episode's end was not observed: say so where its end is shown.
  if (e.end && e.closed_reason === "interrupted") add("Interrupção", h("span", { class: "small", id: "interrupted-help" }, CLOSED_HELP.interrupted));
  add("Duração", fmtDuration(e.duration_s));
  add("Pico", peakText(e) + (e.peak_at ? " às " + fmtTime(e.peak_at) : ""));
  if (e.estimate) add("Natureza do valor", "estimativa no receptor (não é medição NBR)");
  add("Fonte", SOURCES[e.source] || e.source);
  if (e.rule === "document_expired" && (e.document || e.detail)) add("Documento", documentText(e.document, e.detail, true));
  else if (e.detail) add("Condição", DETAILS[e.detail] || e.detail);
  if (e.site) {
    add("Local sensível", h("span", null, `${e.site.name} (${CATEGORIES[e.site.category] || e.site.category || e.site.kind}) a ${fmtValue(e.site.distance_m, "m", 0)}`,
      e.site.verified ? chip("verificado", "ok") : chip("não verificado", "warn")));
    if (e.site.opening_hours) add("Horário do local", fmtOpeningHours(e.site.opening_hours));
  }
  if (e.area) add("Zona NBR 10151", AREAS[e.area] || e.area);
  add("Posição do pico", `${fmtNum(e.lat, 5)}; ${fmtNum(e.lon, 5)}`);
  add("Evidências", `${e.evidence_count} leitura(s)`);
  // The bridge's sequence space (wire format "epoch"): only administrators need it.
  if (e.epoch && store.hasRole("admin")) {
    add("Sequência do equipamento", h("code", { title: "Identificador da sequência de lotes do computador de bordo: muda só quando o equipamento é instalado, reinstalado ou trocado" }, e.epoch));
  }
  add("Identificador", h("code", null, e.id));

  const mapEl = h("div", { class: "episode-map", role: "application", "aria-label": "Trajeto do episódio" });
  const chartsEl = h("div", { class: "charts" });
  const replay = h("div", { class: "replay" });
  const triage = triagePanel(e.id);
  this.cleanup.push(triage.off);
  el.replaceChildren(
    h("div", { class: "page-head page-head--split" },
      h("div", null,
        h("a", { class: "back-link", href: "#/alertas" }, icon("back"), "Alertas"),
        h("h2", { class: "page-title" }, ruleName(e.rule), " — ", e.vehicle),
        h("p", { class: "muted" }, `${e.article} · penalidade: ${e.penalty}`)),
      h("div", { class: "head-actions" }, chip(st, tone, statusHelp(e)),
        draft && store.hasRole("fiscal") ? h("a", { class: "btn", href: "#/revisao/" + encodeURIComponent(draft.id) }, icon("file"), "Abrir minuta") : null)),
    h("div", { class: "episode-grid" },
      h("section", { class: "card card--flush" }, mapEl, replay),
      h("section", { class: "card" }, h("h3", { class: "card-title" }, "Fatos"), facts)),
    triage.el,
    verificationCard(e),
    warningsCard(e),
    h("section", { class: "card" }, h("h3", { class: "card-title" }, "Leituras"), chartsEl),
    evidenceTable(readings));
  if (store.config.complaints && store.hasRole("fiscal")) el.append(episodeComplaints(e.id));

  const L = window.L;
  const map = L.map(mapEl, { zoomControl: false, attributionControl: true });
  L.control.zoom(ZOOM_PT).addTo(map);
  map.attributionControl.setPrefix('<a href="https://leafletjs.com">Leaflet</a>');
  this.cleanup.push(() => map.remove());
  unfocusPaths(map);
  withBaseMap(map, store.config, mapEl);
  loadGeofences().then((fc) => {
    if (!mapEl.isConnected) return;
    const { groups } = buildLayers(map, fc);
    for (const g of Object.values(groups)) g.addTo(map);
  }).catch(() => {});

  const track = readings.filter((r) => r.lat != null && r.lon != null);
  const pts = [];
  for (const r of track) {
    const last = pts[pts.length - 1];
    const t = Date.parse(r.t);
    if (last && last.t === t) continue;
    pts.push({ t, ll: [r.lat, r.lon] });
  }
  const over = (r) => r.unit === e.unit && limitApplies(e) && r.value > e.limit + (e.tolerance || 0);
  if (pts.length) {
    L.polyline(pts.map((p) => p.ll), { color: "#1f4e79", weight: 4, opacity: 0.8 }).addTo(map);
    for (const r of track) {
      L.circleMarker([r.lat, r.lon], { radius: 3, weight: 1, color: over(r) ? "#b52b2b" : "#1f4e79", fillColor: over(r) ? "#d64545" : "#fff", fillOpacity: 1 })
        .bindTooltip(`${fmtTime(r.t)} · ${KINDS[r.kind] || r.kind}: ${fmtValue(r.value, r.unit)}`).addTo(map);
    }
    map.fitBounds(L.latLngBounds(pts.map((p) => p.ll)).pad(0.3), { maxZoom: 18 });
  } else {
    map.setView([e.lat, e.lon], 17);
  }
  L.circleMarker([e.lat, e.lon], { radius: 9, color: "#b52b2b", weight: 3, fill: false }).bindTooltip("Pico: " + peakText(e)).addTo(map);

  const charts = buildCharts(chartsEl, e, readings);
  this.cleanup.push(() => charts.dispose());
  buildReplay.call(this, replay, map, pts, readings, charts);
}

// The warnings of the vehicle's own driver's coach from 10 min before the start (docs/rules.md):
// what the licensee's device reported telling the driver; those marked stated are in the draft.
const WARNING_KINDS = {
  site_sound: "som perto de local sensível", speed_near: "velocidade próxima do limite", speed_over: "velocidade acima do limite",
  hours_end: "fim do horário de serviço", itinerary: "saída do itinerário", document: "documento a vencer",
};
function warningsCard(e) {
  const ws = e.warnings || [];
  if (!ws.length) return null;
  const rows = ws.map((w) => h("tr", { dataset: { warning: w.kind } },
    h("td", { class: "nowrap" }, fmtDateTime(w.t)),
    h("td", null, WARNING_KINDS[w.kind] || w.kind),
    h("td", null, w.site && e.site && w.site === e.site.id ? e.site.name : w.site || "—"),
    h("td", { class: "num" }, w.distance_m == null ? "—" : fmtValue(w.distance_m, "m", 0)),
    h("td", { class: "num" }, w.value == null ? "—" : fmtNum(w.value, 1) + (w.limit == null ? "" : " / " + fmtNum(w.limit, 1))),
    h("td", null, w.stated ? chip("citado na minuta", "ok", "O alerta é citado entre os fatos da minuta, como registro do equipamento do permissionário.")
      : w.clock === "system" ? chip("relógio não confiável", "warn", CLOCK_HELP)
        : h("span", { class: "muted", title: "Registrado com hora confiável, mas de outra regra ou fora do período do fato: mostrado como contexto, não citado." }, "contexto"))));
  return h("section", { class: "card", id: "episode-warnings" },
    h("h3", { class: "card-title" }, `Alertas do sistema embarcado (${ws.length})`),
    h("p", { class: "muted small" }, "Registros do próprio equipamento do permissionário: o condutor foi alertado. Provam ciência, nunca fundamentam o auto."),
    h("table", { class: "table" }, h("thead", null, h("tr", null, ...["Hora", "Alerta", "Local", "Distância", "Valor / limite", "Na minuta"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, ...rows)),
    ws.some((w) => !w.stated && w.clock === "system") ? h("p", { class: "muted small", id: "clock-legend" }, CLOCK_HELP) : null);
}

function evidenceTable(readings) {
  const rows = readings.map((r) => h("tr", null, h("td", null, fmtDateTime(r.t)), h("td", null, KINDS[r.kind] || r.kind),
    h("td", { class: "num" }, fmtValue(r.value, r.unit, 3)),
    h("td", { class: "num" }, r.lat != null ? `${fmtNum(r.lat, 6)}; ${fmtNum(r.lon, 6)}` : "—"),
    h("td", null, h("code", null, `${r.epoch}#${r.seq}`))));
  return h("details", { class: "card" }, h("summary", null, `Evidências (${readings.length} leituras)`),
    h("div", { class: "table-wrap" }, h("table", { class: "table table--compact" },
      h("thead", null, h("tr", null, ...["Hora", "Instrumento", "Valor", "Posição", "Lote"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", null, rows))));
}

// buildCharts draws one chart per unit of the readings, the episode's unit first with its
// limit (and limit + tolerance) lines.
function buildCharts(el, e, readings) {
  const uPlot = window.uPlot;
  const units = [...new Set(readings.map((r) => r.unit))].sort((a, b) => (a === e.unit ? -1 : b === e.unit ? 1 : 0));
  if (!units.length) {
    el.append(h("p", { class: "muted" }, "Sem leituras registradas."));
    const none = [];
    none.dispose = () => {};
    return none;
  }
  const charts = [];
  for (const unit of units) {
    const rs = readings.filter((r) => r.unit === unit);
    const kinds = [...new Set(rs.map((r) => r.kind))];
    const xs = [...new Set(rs.map((r) => Date.parse(r.t) / 1000))].sort((a, b) => a - b);
    const idx = new Map(xs.map((x, i) => [x, i]));
    const data = [xs];
    for (const k of kinds) {
      const ys = new Array(xs.length).fill(null);
      for (const r of rs) if (r.kind === k) ys[idx.get(Date.parse(r.t) / 1000)] = r.value;
      data.push(ys);
    }
    const series = [{ label: "Hora", value: (u, v) => (v == null ? "—" : fmtDateTime(v * 1000)) }];
    // The noise rule judges the level estimated at the receptor, not the meter's: the meter's
    // 1 s readings are drawn thin, and the estimate the rule computed (as the PDF draws it) is
    // the line against the limit.
    const receptor = unit === "dB(A)" && unit === e.unit && e.estimate ? receptorSeries(e, rs, xs, idx) : null;
    const atMeter = unit === "dB(A)";
    for (const k of kinds) {
      const label = (KINDS[k] || k) + (atMeter && k === "sound" ? (receptor ? ": LAeq 1 s no medidor (não no receptor)" : ": LAeq 1 s no medidor") : "");
      series.push({ label, stroke: KIND_COLORS[k] || "#333", width: receptor ? 1 : 2, spanGaps: true,
        points: { show: !receptor && xs.length < 200, size: 4 }, value: (u, v) => (v == null ? "—" : fmtValue(v, unit, 2)) });
    }
    if (receptor) {
      data.push(receptor.values);
      series.push({ label: receptor.label, stroke: "#8e1f5c", width: 2.5, spanGaps: false, points: { show: false },
        value: (u, v) => (v == null ? "—" : "≈ " + fmtValue(v, unit, 1)) });
      data.push(receptor.peak);
      series.push({ label: "Pico estimado no receptor", stroke: "#8e1f5c", width: 0, points: { show: true, size: 9, fill: "#8e1f5c" },
        value: (u, v) => (v == null ? "—" : "≈ " + fmtValue(v, unit, 1)) });
    }
    const limits = [];
    if (unit === e.unit && limitApplies(e)) {
      const at = receptor ? " no receptor" : "";
      limits.push(["Limite" + at, e.limit, "#d64545", [6, 4]]);
      if (e.tolerance) limits.push(["Limite + tolerância" + at, e.limit + e.tolerance, "#e07a10", [2, 4]]);
    }
    for (const [label, value, stroke, dash] of limits) {
      data.push(xs.map(() => value));
      series.push({ label, stroke, dash, width: 1.5, points: { show: false }, value: () => fmtValue(value, unit) });
    }
    const box = h("div", { class: "chart", role: "img", "aria-label": `Gráfico de ${unit === "km/h" ? "velocidade" : unit === "dB(A)" ? "nível sonoro" : unit} ao longo do episódio` });
    el.append(h("h4", { class: "chart-title" }, unit === "km/h" ? "Velocidade (km/h)" : unit === "dB(A)" ? "Nível sonoro (dB(A))" : unit), box);
    if (receptor) el.append(h("p", { class: "muted small chart-note", id: "receptor-note" }, receptor.note));
    const width = Math.max(300, el.clientWidth - 8);
    const startS = Date.parse(e.start) / 1000, endS = (e.end ? Date.parse(e.end) : Date.now()) / 1000;
    const u = new uPlot({
      width, height: 240,
      padding: [12, 28, 0, 0],
      // The episode's interval, shaded.
      hooks: { drawAxes: [(u) => {
        const x0 = u.valToPos(startS, "x", true), x1 = u.valToPos(endS, "x", true);
        const left = Math.max(u.bbox.left, x0), right = Math.min(u.bbox.left + u.bbox.width, x1);
        if (right <= left) return;
        u.ctx.save();
        u.ctx.fillStyle = "rgba(214, 52, 52, 0.07)";
        u.ctx.fillRect(left, u.bbox.top, right - left, u.bbox.height);
        u.ctx.restore();
      }] },
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), timeZone()),
      scales: { x: { time: true }, y: { range: (u, min, max) => {
        const lo = Math.min(min, ...limits.map((l) => l[1])), hi = Math.max(max, ...limits.map((l) => l[1]));
        const pad = Math.max(1, (hi - lo) * 0.1);
        return [Math.max(0, Math.floor(lo - pad)), Math.ceil(hi + pad)];
      } } },
      axes: [
        { stroke: "#5b6675", grid: { stroke: "#e9edf2" }, ticks: { stroke: "#d5dbe2" }, values: (u, splits) => splits.map((s) => fmtTime(s * 1000)) },
        { stroke: "#5b6675", grid: { stroke: "#e9edf2" }, ticks: { stroke: "#d5dbe2" }, size: 56, values: (u, splits) => splits.map((s) => fmtNum(s, 1)) },
      ],
      legend: { live: true },
      cursor: { drag: { x: false, y: false } },
      series,
    }, data, box);
    u.unit = unit;
    charts.push(u);
  }
  const ro = new ResizeObserver(() => {
    const w = Math.max(300, el.clientWidth - 8);
    for (const u of charts) if (Math.abs(u.width - w) > 2) u.setSize({ width: w, height: 240 });
  });
  ro.observe(el);
  charts.dispose = () => { ro.disconnect(); for (const u of charts) u.destroy(); };
  return charts;
}

// receptorSeries estimates the level at the receptor from the meter's readings as the noise
// rule does (rules/noise.go; the PDF's chart, monitor/notice/chart.go): the energy
// average over the profile's window (where the readings cover at least 90 % of it) minus
// 20·log10(r₂/r₁). The readings are the episode's evidence, so the first window of the episode
// may lack the seconds before it; the episode's own peak is drawn as a point.
function receptorSeries(e, rs, xs, idx) {
  const n = store.config.noise;
  const values = new Array(xs.length).fill(null);
  const peak = new Array(xs.length).fill(null);
  const pt = e.peak_at ? Date.parse(e.peak_at) / 1000 : null;
  if (pt != null && idx.has(pt)) peak[idx.get(pt)] = e.peak;
  if (!n || !(n.window_s > 0) || !(n.r2_m > 0)) {
    return { values, peak, label: "Estimado no receptor", note: "O limite vale no receptor (a fachada em frente); a linha fina é a medição no decibelímetro do veículo. O pico do episódio é uma estimativa no receptor." };
  }
  const r1 = e.r1_m || n.r1_m;
  const off = -20 * Math.log10(n.r2_m / r1);
  const sound = rs.filter((r) => r.kind === "sound").map((r) => ({ t: Date.parse(r.t) / 1000, v: r.value }))
    .sort((a, b) => a.t - b.t).filter((r, i, a) => i === 0 || a[i - 1].t !== r.t);
  let lo = 0;
  for (let hi = 0; hi < sound.length; hi++) {
    const t = sound[hi].t;
    while (lo < hi && sound[lo].t <= t - n.window_s) lo++;
    let energy = 0, covered = 0;
    for (let i = lo; i <= hi; i++) { energy += Math.pow(10, sound[i].v / 10); covered += 1; }
    if (covered >= 0.9 * n.window_s) values[idx.get(t)] = 10 * Math.log10(energy / covered) + off;
  }
  const w = fmtNum(n.window_s, 0);
  return {
    values, peak, label: `LAeq ${w} s estimado no receptor`,
    note: `O limite vale no receptor (a fachada em frente), não no veículo: a linha escura é a estimativa L₂ = L₁ − 20·log₁₀(r₂/r₁), ` +
      `com L₁ a média energética de ${w} s no decibelímetro, r₁ = ${fmtNum(r1, 2)} m e r₂ = ${fmtNum(n.r2_m, 2)} m (estimativa, não medição NBR). ` +
      `A linha fina é a leitura de 1 s no decibelímetro.`,
  };
}

function buildReplay(el, map, pts, readings, charts) {
  const L = window.L;
  const times = readings.map((r) => Date.parse(r.t));
  if (!times.length) { el.append(h("p", { class: "muted" }, "Sem trajeto para reproduzir.")); return; }
  const t0 = Math.min(...times), t1 = Math.max(...times);
  let t = t0, playing = false, last = 0, raf = 0, rate = 5;
  const marker = pts.length ? L.circleMarker(pts[0].ll, { radius: 8, color: "#fff", weight: 3, fillColor: "#0b3d5c", fillOpacity: 1 }).addTo(map) : null;
  const playBtn = h("button", { type: "button", class: "btn btn-primary btn-small", "aria-label": "Reproduzir" }, icon("play"));
  const slider = h("input", { type: "range", min: "0", max: "1000", value: "0", "aria-label": "Posição da reprodução" });
  const clock = h("output", { class: "replay-clock" }, fmtTime(t0));
  const values = h("span", { class: "replay-values" });
  const rateSel = h("select", { "aria-label": "Velocidade da reprodução" }, ...[1, 5, 10, 30].map((r) => h("option", { value: String(r), selected: r === rate }, r + "×")));
  rateSel.addEventListener("change", () => { rate = +rateSel.value; });
  const posAt = (tt) => {
    if (!pts.length) return null;
    if (tt <= pts[0].t) return pts[0].ll;
    for (let i = 1; i < pts.length; i++) {
      if (pts[i].t >= tt) {
        const a = pts[i - 1], b = pts[i], f = (tt - a.t) / (b.t - a.t || 1);
        return [a.ll[0] + (b.ll[0] - a.ll[0]) * f, a.ll[1] + (b.ll[1] - a.ll[1]) * f];
      }
    }
    return pts[pts.length - 1].ll;
  };
  const nearest = (kind, unit) => {
    let best = null;
    for (const r of readings) if (r.kind === kind && r.unit === unit && Date.parse(r.t) <= t) best = r;
    return best;
  };
  const kinds = [...new Set(readings.map((r) => r.kind + "|" + r.unit))];
  const show = () => {
    const ll = posAt(t);
    if (marker && ll) marker.setLatLng(ll);
    slider.value = String(Math.round(((t - t0) / (t1 - t0 || 1)) * 1000));
    clock.textContent = fmtTime(t);
    values.textContent = kinds.map((k) => { const [kind, unit] = k.split("|"); const r = nearest(kind, unit); return r ? `${KINDS[kind] || kind}: ${fmtValue(r.value, unit)}` : null; }).filter(Boolean).join(" · ");
    for (const u of charts) {
      const left = u.valToPos(t / 1000, "x");
      if (Number.isFinite(left)) u.setCursor({ left, top: 20 });
    }
  };
  const step = (now) => {
    if (!playing) return;
    if (last) t = Math.min(t1, t + (now - last) * rate);
    last = now;
    show();
    if (t >= t1) { stop(); return; }
    raf = requestAnimationFrame(step);
  };
  const stop = () => {
    playing = false; last = 0; cancelAnimationFrame(raf);
    playBtn.replaceChildren(icon("play")); playBtn.setAttribute("aria-label", "Reproduzir");
  };
  playBtn.addEventListener("click", () => {
    if (playing) { stop(); return; }
    if (t >= t1) t = t0;
    playing = true;
    playBtn.replaceChildren(icon("pause")); playBtn.setAttribute("aria-label", "Pausar");
    raf = requestAnimationFrame(step);
  });
  slider.addEventListener("input", () => { t = t0 + ((t1 - t0) * +slider.value) / 1000; show(); });
  for (const u of charts) {
    u.over.addEventListener("click", (ev) => {
      const v = u.posToVal(ev.offsetX, "x") * 1000;
      if (Number.isFinite(v)) { t = Math.max(t0, Math.min(t1, v)); show(); }
    });
  }
  this.cleanup.push(() => stop());
  el.append(h("div", { class: "replay-bar" }, playBtn, slider, clock, rateSel), h("div", { class: "replay-info" }, values));
  show();
}
