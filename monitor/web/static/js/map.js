// The live map: vehicles with heading, speed, sound level and state colour over the geofences,
// a layer panel with the legend, the live alerts and the vehicle list beside it; a vehicle's
// panel replaces the list when one is selected (#/mapa/{id}).

import { store, vehicleState, STATE_LABELS, isOnline } from "./store.js";
import { h, $, svgEl } from "./dom.js";
import { fmtNum, fmtAgo, fmtValue } from "./fmt.js";
import { loadGeofences, buildLayers, withBaseMap, LAYERS, ZONE_COLORS, generatedNote, unfocusPaths, ZOOM_PT } from "./geo.js";
import { alertItem } from "./alerts.js";
import { VehiclePanel } from "./vehicle.js";
import { VehicleCanvas } from "./vehicles-canvas.js";
import { licenseeName } from "./names.js";

const PIUMA = [-20.8375, -40.7305];
// Above this many vehicles the map draws them on one canvas instead of one DOM marker each.
const CANVAS_OVER = 100;

let map = null;
let vehicleLayer = null;
let canvasLayer = null; // a VehicleCanvas when the fleet is large
let vehiclesShown = true;
let labelsOn = true;
const states = new Map(); // id → the state last drawn
const markers = new Map(); // id → {marker, root, arrow, label, state}
const rows = new Map(); // id → {li, ...}
const pendingMarkers = new Set();
let frame = 0;
let listTimer = 0;
let listDirty = false;
// The list keeps its order while a person points at it, touches it or has the focus in it, so
// that a row never moves away under a tap (a re-sort resumes a moment after).
let listHeldUntil = 0;
let mouseOver = false;
let holdTimer = 0;
let geoBounds = null;
let geoGroups = null;
let panel = null;
let selected = null;
let visible = false;
const follow = { on: false };
const freshAlerts = new Map(); // episode id → when it arrived live
const feedCache = new Map(); // episode id → {sig, at, li}
let alertsTimer = 0;

export const mapView = {
  title: "Mapa",
  persistent: true,
  el: () => $("#view-mapa"),
  async mount(el, arg) {
    visible = true;
    if (!map) await init();
    map.invalidateSize();
    select(arg ? decodeURIComponent(arg) : null);
    flushAll();
    renderAlerts();
  },
  unmount() {
    visible = false;
    select(null, false);
  },
};

async function init() {
  const L = window.L;
  map = L.map("map", { zoomControl: false, attributionControl: true, preferCanvas: false, zoomSnap: 0.5 }).setView(PIUMA, 15);
  L.control.zoom(ZOOM_PT).addTo(map);
  map.attributionControl.setPrefix('<a href="https://leafletjs.com">Leaflet</a>');
  L.control.scale({ imperial: false, position: "bottomleft" }).addTo(map);
  withBaseMap(map, store.config, $("#map"));
  vehicleLayer = L.layerGroup().addTo(map);
  unfocusPaths(map);

  buildLayerPanel();
  $("#fit-btn").addEventListener("click", fitAll);
  $("#veh-filter").addEventListener("input", () => { $("#veh-list").scrollTop = 0; listDirty = true; renderList(); });
  const ul = $("#veh-list");
  ul.addEventListener("scroll", scheduleRows, { passive: true });
  window.addEventListener("resize", scheduleRows);
  const hold = (ms) => { listHeldUntil = Math.max(listHeldUntil, Date.now() + ms); };
  ul.addEventListener("pointerdown", () => hold(60000));
  ul.addEventListener("pointerup", () => { listHeldUntil = Date.now() + 1500; });
  ul.addEventListener("pointercancel", () => { listHeldUntil = Date.now() + 1500; });
  ul.addEventListener("pointerover", (e) => { if (e.pointerType === "mouse") mouseOver = true; });
  ul.addEventListener("pointerleave", () => { mouseOver = false; hold(500); });
  store.on("licensees", () => { listDirty = true; renderList(); });

  try {
    const fc = await loadGeofences();
    const { groups, bounds } = buildLayers(map, fc);
    geoGroups = groups;
    for (const g of Object.values(groups)) g.addTo(map);
    if (bounds.isValid()) { geoBounds = bounds; map.fitBounds(bounds, { padding: [20, 20] }); }
    $("#geo-note").textContent = generatedNote(fc);
  } catch (e) {
    $("#geo-note").textContent = "Geocercas indisponíveis: " + e.message;
  }
  for (const v of store.vehicles.values()) pendingMarkers.add(v.id);
  flushAll();

  store.on("reset", () => {
    for (const id of markers.keys()) if (!store.vehicles.has(id)) removeMarker(id);
    for (const v of store.vehicles.values()) pendingMarkers.add(v.id);
    listDirty = true;
    schedule();
    renderAlerts();
  });
  store.on("vehicle", ({ vehicle }) => {
    pendingMarkers.add(vehicle.id);
    if (vehicle.id === selected && panel) panel.update(vehicle);
    if (rows.has(vehicle.id)) scheduleRows();
    schedule();
  });
  store.on("episode", ({ episode, isNewAlert }) => {
    if (isNewAlert) freshAlerts.set(episode.id, Date.now());
    pendingMarkers.add(episode.vehicle);
    schedule();
    if (!alertsTimer) alertsTimer = setTimeout(() => { alertsTimer = 0; renderAlerts(); }, 300);
    if (panel && episode.vehicle === selected) panel.episodeChanged(episode);
  });
  // Vehicles go offline by silence: age the states.
  setInterval(() => {
    for (const v of store.vehicles.values()) {
      if (states.get(v.id) !== vehicleState(v)) pendingMarkers.add(v.id);
    }
    listDirty = true;
    schedule();
  }, 5000);
}

function buildLayerPanel() {
  const form = $("#layers-panel");
  const btn = $("#layers-btn");
  btn.addEventListener("click", () => {
    const open = form.hidden;
    form.hidden = !open;
    btn.setAttribute("aria-expanded", String(open));
  });
  const box = (key, label, checked, onchange) =>
    h("label", { class: "check" }, h("input", { type: "checkbox", name: key, checked, onchange }), h("span", null, label));
  const toggle = (key) => (e) => {
    const g = geoGroups && geoGroups[key];
    if (g) { if (e.target.checked) g.addTo(map); else g.remove(); }
  };
  form.append(
    h("fieldset", null, h("legend", null, "Camadas"),
      box("vehicles", "Veículos", true, (e) => {
        vehiclesShown = e.target.checked;
        if (vehiclesShown) vehicleLayer.addTo(map); else vehicleLayer.remove();
        if (canvasLayer) canvasLayer.canvas.hidden = !vehiclesShown;
      }),
      box("labels", "Identificação dos veículos", true, (e) => {
        labelsOn = e.target.checked;
        $("#map").classList.toggle("hide-labels", !labelsOn);
        if (canvasLayer) canvasLayer.setLabels(labelsOn);
      }),
      LAYERS.map((l) => box(l.key, l.label, true, toggle(l.key)))),
    h("div", { class: "legend" },
      h("h3", null, "Veículos"),
      ...[["service", "Em serviço"], ["idle", "Conectado, fora de serviço"], ["alert", "Em infração (episódio aberto)"], ["offline", "Desconectado (sem dados há 2 min)"]]
        .map(([s, label]) => h("div", { class: "legend-row" }, h("span", { class: "legend-dot st-" + s }), label)),
      h("div", { class: "legend-row" }, h("span", { class: "legend-arrow" }, "➤"), "Seta: sentido do movimento"),
      h("h3", null, "Locais sensíveis"),
      h("div", { class: "legend-row" }, h("span", { class: "legend-ring" }), "Aberto agora (raio ativo)"),
      h("div", { class: "legend-row" }, h("span", { class: "legend-ring is-closed" }), "Fechado agora"),
      h("div", { class: "legend-row" }, h("span", { class: "site-badge is-unverified legend-badge" }, "!"), "Dado não verificado"),
      h("h3", null, "Zonas NBR 10151"),
      ...Object.entries(ZONE_COLORS).map(([k, c]) => h("div", { class: "legend-row" }, swatch(c), zoneLabel(k))),
      h("p", { id: "geo-note", class: "legend-note" })),
  );
}

function zoneLabel(k) {
  return { rural: "Rural", strict_residential: "Estritamente residencial", mixed_residential: "Mista residencial",
    mixed_commercial: "Mista comercial", mixed_leisure: "Mista lazer/turismo", industrial: "Industrial" }[k];
}
function swatch(color) {
  const s = h("span", { class: "legend-swatch" });
  s.style.backgroundColor = color;
  return s;
}

function fitAll() {
  const L = window.L;
  const b = L.latLngBounds([]);
  for (const v of store.vehicles.values()) if (v.lat != null && v.lon != null) b.extend([v.lat, v.lon]);
  if (geoBounds) b.extend(geoBounds);
  if (b.isValid()) map.fitBounds(b, { padding: [30, 30], maxZoom: 17 });
}

function schedule() {
  if (!visible || frame) return;
  frame = requestAnimationFrame(() => { frame = 0; flushMarkers(); });
  if (!listTimer) listTimer = setTimeout(() => { listTimer = 0; renderList(); }, store.vehicles.size > CANVAS_OVER ? 2000 : 1000);
}

function flushAll() {
  flushMarkers();
  listDirty = true;
  renderList();
}

// ensureMode switches between DOM markers and the canvas as the fleet grows or shrinks.
function ensureMode() {
  const want = store.vehicles.size > CANVAS_OVER;
  if (want === !!canvasLayer) return;
  if (want) {
    for (const id of [...markers.keys()]) removeMarker(id);
    canvasLayer = new VehicleCanvas(map, {
      onClick: (id) => { location.hash = "#/mapa/" + encodeURIComponent(id); },
      tooltip: (id) => tooltip(store.vehicles.get(id)),
    });
    canvasLayer.setLabels(labelsOn);
    canvasLayer.select(selected);
    canvasLayer.canvas.hidden = !vehiclesShown;
  } else {
    canvasLayer.destroy();
    canvasLayer = null;
  }
  for (const id of store.vehicles.keys()) pendingMarkers.add(id);
}

function vehicleLatLng(id) {
  const v = store.vehicles.get(id);
  return v && v.lat != null && v.lon != null ? window.L.latLng(v.lat, v.lon) : null;
}

function flushMarkers() {
  if (!map) return;
  ensureMode();
  const now = Date.now();
  for (const id of pendingMarkers) {
    const v = store.vehicles.get(id);
    if (v) updateMarker(v, now); else removeMarker(id);
    listDirty = true;
  }
  pendingMarkers.clear();
  if (selected && follow.on) {
    const ll = vehicleLatLng(selected);
    if (ll) map.panTo(ll, { animate: true });
  }
}

function updateMarker(v, now) {
  const L = window.L;
  const state = vehicleState(v, now);
  states.set(v.id, state);
  // An offline vehicle's last heading is stale: a plain disc.
  const moving = state !== "offline" && v.course_deg != null && (v.speed_kmh == null || v.speed_kmh >= 1);
  if (canvasLayer) {
    if (v.lat == null || v.lon == null) canvasLayer.remove(v.id);
    else canvasLayer.set(v.id, { lat: v.lat, lon: v.lon, course: v.course_deg, moving, state });
    return;
  }
  if (v.lat == null || v.lon == null) { removeMarker(v.id); return; }
  let m = markers.get(v.id);
  if (!m) {
    const arrow = svgEl("svg", { viewBox: "0 0 24 24", class: "veh-arrow", "aria-hidden": "true" });
    const path = svgEl("path", { d: "M12 2.5 19 20 12 16 5 20Z" });
    arrow.append(path);
    const dot = h("span", { class: "veh-dot" });
    const label = h("span", { class: "veh-label" }, v.id);
    const root = h("div", { class: "veh" }, dot, arrow, label);
    const marker = L.marker([v.lat, v.lon], {
      icon: L.divIcon({ className: "veh-icon", html: root, iconSize: [26, 26], iconAnchor: [13, 13] }),
      keyboard: false, riseOnHover: true,
    });
    marker.on("click", () => { location.hash = "#/mapa/" + encodeURIComponent(v.id); });
    marker.bindTooltip(() => tooltip(store.vehicles.get(v.id) || v), { direction: "top", offset: [0, -12] });
    marker.addTo(vehicleLayer);
    m = { marker, root, arrow, path, label, state: "", course: null };
    markers.set(v.id, m);
    marker.getElement().dataset.vehicle = v.id;
  } else {
    const ll = m.marker.getLatLng();
    if (ll.lat !== v.lat || ll.lng !== v.lon) m.marker.setLatLng([v.lat, v.lon]);
  }
  const el = m.marker.getElement();
  if (el) { el.dataset.lat = String(v.lat); el.dataset.lon = String(v.lon); el.dataset.state = state; }
  if (moving && m.course !== v.course_deg) {
    m.path.setAttribute("transform", `rotate(${v.course_deg} 12 12)`);
    m.course = v.course_deg;
  }
  const cls = "veh st-" + state + (moving ? " is-moving" : "") + (v.id === selected ? " is-selected" : "");
  if (m.root.className !== cls) m.root.className = cls;
  m.state = state;
  if (m.marker.isTooltipOpen()) m.marker.setTooltipContent(tooltip(v));
}

function tooltip(v) {
  const st = vehicleState(v);
  return h("div", { class: "veh-tip" },
    h("strong", null, v.id), " · ", STATE_LABELS[st],
    h("div", null, "Velocidade: " + fmtValue(v.speed_kmh, "km/h"), " · Som: " + fmtValue(v.laeq_db, "dB(A)")),
    h("div", null, "Visto " + fmtAgo(v.last_seen)));
}

function removeMarker(id) {
  const m = markers.get(id);
  if (m) { m.marker.remove(); markers.delete(id); }
  if (canvasLayer) canvasLayer.remove(id);
  states.delete(id);
}

// The vehicle list is virtual: the model (list.ids, the sorted and filtered vehicle ids) holds
// every vehicle, the DOM only the rows in view plus a few above and below (OVERSCAN); spacers in
// the list stand in for the rest, so the scroll bar is that of the whole list. With 2,000
// vehicles reporting every second, a row per vehicle kept and rewritten in the DOM cost more than
// the whole map. The model is re-sorted at most once a second (or at once on a filter change);
// the rows in view are re-rendered from it at most once per animation frame, on scroll or when a
// vehicle changed. The list carries its counts in data attributes (data-vehicles, data-shown).
const OVERSCAN = 6;
const list = { ids: [], index: new Map(), rowH: 0, frame: 0, rowsDirty: false, query: "" };

function scheduleRows() {
  list.rowsDirty = true;
  if (!visible || list.frame) return;
  list.frame = requestAnimationFrame(() => { list.frame = 0; renderRows(); });
}

function renderList() {
  if (!visible || !listDirty) return;
  listDirty = false;
  const ul = $("#veh-list");
  const q = $("#veh-filter").value.trim().toLowerCase();
  const now = Date.now();
  const all = [...store.vehicles.keys()];
  const held = mouseOver || Date.now() < listHeldUntil || ul.contains(document.activeElement);
  // Keep the order while a person is about to tap or click a row (or has the focus in the list),
  // unless the filter or the set of vehicles changed.
  if (held && q === list.query && all.length === list.total && list.ids.every((id) => store.vehicles.has(id))) {
    listDirty = true;
    clearTimeout(holdTimer);
    holdTimer = setTimeout(() => { holdTimer = 0; renderList(); }, 1000);
  } else {
    // Online vehicles first (those in infraction on top), then the offline ones; by id within.
    const rank = { alert: 0, service: 1, idle: 1, online: 1, offline: 2 };
    const st0 = new Map(all.map((id) => [id, rank[vehicleState(store.vehicles.get(id), now)]]));
    const ids = q ? all.filter((id) => {
      const v = store.vehicles.get(id);
      return id.toLowerCase().includes(q) || (v.licensee || "").toLowerCase().includes(q) ||
        licenseeName(v.licensee).toLowerCase().includes(q);
    }) : all;
    ids.sort((a, b) => st0.get(a) - st0.get(b) || (a < b ? -1 : a > b ? 1 : 0));
    list.ids = ids;
    list.index = new Map(ids.map((id, i) => [id, i]));
    list.query = q;
    list.total = all.length;
  }
  let online = 0;
  for (const v of store.vehicles.values()) if (isOnline(v, now)) online++;
  if (ul.dataset.vehicles !== String(all.length)) ul.dataset.vehicles = String(all.length);
  if (ul.dataset.shown !== String(list.ids.length)) ul.dataset.shown = String(list.ids.length);
  const count = `${online} ${online === 1 ? "conectado" : "conectados"} de ${all.length}`;
  if ($("#veh-count").textContent !== count) $("#veh-count").textContent = count;
  const empty = $("#veh-empty");
  const shown = list.ids.length;
  if (empty.hidden !== shown > 0) empty.hidden = shown > 0;
  const note = all.length ? "Nenhum veículo corresponde ao filtro." : "Nenhum veículo enviou dados ainda.";
  if (empty.textContent !== note) empty.textContent = note;
  renderRows();
}

// renderRows puts in the DOM the rows of the model in view (plus OVERSCAN), reusing each
// vehicle's row while it stays in view (so that a row under the pointer or with the focus is the
// same element), and writes into them only what changed.
function renderRows() {
  list.rowsDirty = false;
  if (!visible) return;
  const ul = $("#veh-list");
  const n = list.ids.length;
  const rowH = list.rowH || 53;
  const top = ul.scrollTop, height = ul.clientHeight || 600;
  const first = Math.max(0, Math.min(n, Math.floor(top / rowH) - OVERSCAN));
  const last = Math.min(n, Math.ceil((top + height) / rowH) + OVERSCAN);
  const now = Date.now();
  const keep = new Set();
  let cur = ul.firstElementChild;
  for (let i = first; i < last; i++) {
    const id = list.ids[i];
    const v = store.vehicles.get(id);
    if (!v) continue;
    keep.add(id);
    let r = rows.get(id);
    if (!r) { r = newRow(id); rows.set(id, r); }
    updateRow(r, id, v, now);
    if (r.pos !== i + 1) { r.pos = i + 1; r.li.setAttribute("aria-posinset", String(i + 1)); }
    if (r.size !== n) { r.size = n; r.li.setAttribute("aria-setsize", String(n)); }
    if (cur === r.li) cur = cur.nextElementSibling;
    else ul.insertBefore(r.li, cur);
  }
  for (const [id, r] of rows) if (!keep.has(id)) { r.li.remove(); rows.delete(id); }
  // Spacers (the list's ::before and ::after) stand in for the rows out of view. Not padding: a
  // box is never smaller than its padding, so the list would grow instead of scrolling.
  const padTop = first * rowH + "px", padBottom = (n - last) * rowH + "px";
  if (list.padTop !== padTop) ul.style.setProperty("--veh-before", list.padTop = padTop);
  if (list.padBottom !== padBottom) ul.style.setProperty("--veh-after", list.padBottom = padBottom);
  // The row height is measured once, from a rendered row.
  if (!list.rowH && ul.firstElementChild) {
    const hgt = ul.firstElementChild.getBoundingClientRect().height;
    if (hgt > 0) { list.rowH = hgt; if (Math.abs(hgt - rowH) > 0.5) scheduleRows(); }
  }
}

function newRow(id) {
  const dot = h("span", { class: "state-dot" });
  const name = h("span", { class: "veh-name" }, id);
  const sub = h("span", { class: "veh-sub" });
  const speed = h("span", { class: "veh-num" });
  const snd = h("span", { class: "veh-num" });
  const btn = h("button", { type: "button", class: "veh-row", onclick: () => { location.hash = "#/mapa/" + encodeURIComponent(id); } },
    dot, h("span", { class: "veh-main" }, name, sub), speed, snd);
  const li = h("li", null, btn);
  li.dataset.vehicle = id;
  return { li, btn, dot, sub, speed, snd };
}

// updateRow writes only what changed.
function updateRow(r, id, v, now) {
  const st = vehicleState(v, now);
  const sub = (v.licensee ? licenseeName(v.licensee) + " · " : "") + (st === "offline" ? "visto " + fmtAgo(v.last_seen, now) : STATE_LABELS[st]);
  const speed = v.speed_kmh == null ? "—" : fmtNum(v.speed_kmh, 0) + " km/h";
  const snd = v.laeq_db == null ? "—" : fmtNum(v.laeq_db, 0) + " dB";
  if (r.st !== st) {
    r.st = st;
    r.dot.className = "state-dot st-" + st;
    r.btn.setAttribute("aria-label", `${id}: ${STATE_LABELS[st]}`);
  }
  if (r.subText !== sub) r.sub.textContent = r.subText = sub;
  if (r.speedText !== speed) r.speed.textContent = r.speedText = speed;
  if (r.sndText !== snd) r.snd.textContent = r.sndText = snd;
}

function renderAlerts() {
  if (!visible) return;
  const list = [...store.episodes.values()]
    .sort((a, b) => (!a.end - !b.end) * -1 || b.start.localeCompare(a.start)).slice(0, 30);
  const ol = $("#live-alerts");
  const now = Date.now();
  for (const [id, t] of freshAlerts) if (now - t > 3000) freshAlerts.delete(id);
  // Reuse the items that did not change, so that a fresh one's highlight plays once.
  const items = list.map((e) => {
    const sig = `${e.end}|${e.closed_reason}|${e.duration_s}`;
    let c = feedCache.get(e.id);
    if (!c || c.sig !== sig || now - c.at > 30000) {
      c = { sig, at: now, li: alertItem(e, freshAlerts.has(e.id)) };
      feedCache.set(e.id, c);
    }
    return c.li;
  });
  const keep = new Set(list.map((e) => e.id));
  for (const id of feedCache.keys()) if (!keep.has(id)) feedCache.delete(id);
  if (items.length !== ol.childElementCount || items.some((li, i) => ol.children[i] !== li)) ol.replaceChildren(...items);
  const open = store.openEpisodes().length;
  $("#live-count").textContent = open ? `${open} em andamento` : "nenhum em andamento";
  $("#live-empty").hidden = list.length > 0;
}

function select(id, navigate = true) {
  if (selected && markers.get(selected)) markers.get(selected).root.classList.remove("is-selected");
  selected = id;
  if (canvasLayer) canvasLayer.select(id);
  follow.on = false;
  if (panel) { panel.destroy(); panel = null; }
  $("#side-vehicle").hidden = !id;
  $("#side-fleet").hidden = !!id;
  if (!id) return;
  const m = markers.get(id);
  if (m) m.root.classList.add("is-selected");
  const ll = vehicleLatLng(id);
  if (ll && navigate) map.setView(ll, Math.max(map.getZoom(), 16), { animate: false });
  panel = new VehiclePanel($("#side-vehicle"), id, {
    onClose: () => { location.hash = "#/mapa"; },
    onCenter: () => { const ll = vehicleLatLng(id); if (ll) map.setView(ll, Math.max(map.getZoom(), 17)); },
    onFollow: (on) => { follow.on = on; if (on) flushMarkers(); },
  });
}

