// The live map: vehicles with heading, speed, sound level and state colour over the geofences,
// a layer panel with the legend, the live alerts and the vehicle list beside it; a vehicle's
// panel replaces the list when one is selected (#/mapa/{id}).

import { store, vehicleState, STATE_LABELS, isOnline } from "./store.js";
import { h, $, svgEl } from "./dom.js";
import { fmtNum, fmtAgo, fmtValue } from "./fmt.js";
import { loadGeofences, buildLayers, tileLayer, LAYERS, ZONE_COLORS, generatedNote } from "./geo.js";
import { alertItem } from "./alerts.js";
import { VehiclePanel } from "./vehicle.js";

const PIUMA = [-20.8375, -40.7305];

let map = null;
let vehicleLayer = null;
let labelsOn = true;
const markers = new Map(); // id → {marker, root, arrow, label, state}
const rows = new Map(); // id → {li, ...}
const pendingMarkers = new Set();
let frame = 0;
let listTimer = 0;
let listDirty = false;
let geoBounds = null;
let geoGroups = null;
let panel = null;
let selected = null;
let visible = false;
const follow = { on: false };

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
  map = L.map("map", { zoomControl: true, attributionControl: true, preferCanvas: false, zoomSnap: 0.5 }).setView(PIUMA, 15);
  map.attributionControl.setPrefix('<a href="https://leafletjs.com">Leaflet</a>');
  L.control.scale({ imperial: false, position: "bottomleft" }).addTo(map);
  const tiles = tileLayer(store.config);
  if (tiles) tiles.addTo(map);
  else $("#map").classList.add("map--plain");
  vehicleLayer = L.layerGroup().addTo(map);

  buildLayerPanel();
  $("#fit-btn").addEventListener("click", fitAll);
  $("#veh-filter").addEventListener("input", () => { listDirty = true; renderList(); });

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
    schedule();
  });
  store.on("episode", ({ episode }) => {
    pendingMarkers.add(episode.vehicle);
    schedule();
    renderAlerts();
    if (panel && episode.vehicle === selected) panel.episodeChanged(episode);
  });
  // Vehicles go offline by silence: age the states.
  setInterval(() => {
    for (const v of store.vehicles.values()) {
      const m = markers.get(v.id);
      if (m && m.state !== vehicleState(v)) pendingMarkers.add(v.id);
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
      box("vehicles", "Veículos", true, (e) => { if (e.target.checked) vehicleLayer.addTo(map); else vehicleLayer.remove(); }),
      box("labels", "Identificação dos veículos", true, (e) => { labelsOn = e.target.checked; $("#map").classList.toggle("hide-labels", !labelsOn); }),
      LAYERS.map((l) => box(l.key, l.label, true, toggle(l.key)))),
    h("div", { class: "legend" },
      h("h3", null, "Veículos"),
      ...[["service", "Em serviço"], ["idle", "Online, fora de serviço"], ["alert", "Em infração (episódio aberto)"], ["offline", "Offline (sem dados há 2 min)"]]
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
  for (const m of markers.values()) b.extend(m.marker.getLatLng());
  if (geoBounds) b.extend(geoBounds);
  if (b.isValid()) map.fitBounds(b, { padding: [30, 30], maxZoom: 17 });
}

function schedule() {
  if (!visible || frame) return;
  frame = requestAnimationFrame(() => { frame = 0; flushMarkers(); });
  if (!listTimer) listTimer = setTimeout(() => { listTimer = 0; renderList(); }, 1000);
}

function flushAll() {
  flushMarkers();
  listDirty = true;
  renderList();
}

function flushMarkers() {
  if (!map) return;
  const now = Date.now();
  for (const id of pendingMarkers) {
    const v = store.vehicles.get(id);
    if (v) updateMarker(v, now); else removeMarker(id);
    listDirty = true;
  }
  pendingMarkers.clear();
  if (selected && follow.on) {
    const m = markers.get(selected);
    if (m) map.panTo(m.marker.getLatLng(), { animate: true });
  }
}

function updateMarker(v, now) {
  const L = window.L;
  if (v.lat == null || v.lon == null) { removeMarker(v.id); return; }
  let m = markers.get(v.id);
  const state = vehicleState(v, now);
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
  const moving = v.course_deg != null && (v.speed_kmh == null || v.speed_kmh >= 1);
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
}

// The vehicle list: one row per vehicle, updated in place.
function renderList() {
  if (!visible || !listDirty) return;
  listDirty = false;
  const ul = $("#veh-list");
  const q = $("#veh-filter").value.trim().toLowerCase();
  const now = Date.now();
  const ids = [...store.vehicles.keys()].sort();
  let shown = 0, online = 0;
  for (const id of ids) {
    const v = store.vehicles.get(id);
    let r = rows.get(id);
    if (!r) {
      const dot = h("span", { class: "state-dot" });
      const name = h("span", { class: "veh-name" }, id);
      const sub = h("span", { class: "veh-sub" });
      const speed = h("span", { class: "veh-num" });
      const snd = h("span", { class: "veh-num" });
      const btn = h("button", { type: "button", class: "veh-row", onclick: () => { location.hash = "#/mapa/" + encodeURIComponent(id); } },
        dot, h("span", { class: "veh-main" }, name, sub), speed, snd);
      r = { li: h("li", null, btn), btn, dot, sub, speed, snd };
      rows.set(id, r);
    }
    const st = vehicleState(v, now);
    if (isOnline(v, now)) online++;
    r.dot.className = "state-dot st-" + st;
    r.btn.setAttribute("aria-label", `${id}: ${STATE_LABELS[st]}`);
    r.sub.textContent = (v.licensee ? v.licensee + " · " : "") + (st === "offline" ? "visto " + fmtAgo(v.last_seen, now) : STATE_LABELS[st]);
    r.speed.textContent = v.speed_kmh == null ? "—" : fmtNum(v.speed_kmh, 0) + " km/h";
    r.snd.textContent = v.laeq_db == null ? "—" : fmtNum(v.laeq_db, 0) + " dB";
    const match = !q || id.toLowerCase().includes(q) || (v.licensee || "").toLowerCase().includes(q);
    r.li.hidden = !match;
    if (match) shown++;
  }
  for (const [id, r] of rows) if (!store.vehicles.has(id)) { r.li.remove(); rows.delete(id); }
  // Append in order only when the set changed.
  if (ul.childElementCount !== ids.length || [...ul.children].some((li, i) => li !== rows.get(ids[i]).li)) {
    ul.replaceChildren(...ids.map((id) => rows.get(id).li));
  }
  $("#veh-count").textContent = `${online} online de ${ids.length}`;
  $("#veh-empty").hidden = shown > 0;
  $("#veh-empty").textContent = ids.length ? "Nenhum veículo corresponde ao filtro." : "Nenhum veículo enviou dados ainda.";
}

function renderAlerts() {
  if (!visible) return;
  const list = [...store.episodes.values()]
    .sort((a, b) => (!a.end - !b.end) * -1 || b.start.localeCompare(a.start)).slice(0, 30);
  const ol = $("#live-alerts");
  ol.replaceChildren(...list.map((e) => alertItem(e)));
  const open = store.openEpisodes().length;
  $("#live-count").textContent = open ? `${open} em andamento` : "nenhum em andamento";
  $("#live-empty").hidden = list.length > 0;
}

function select(id, navigate = true) {
  if (selected && markers.get(selected)) markers.get(selected).root.classList.remove("is-selected");
  selected = id;
  follow.on = false;
  if (panel) { panel.destroy(); panel = null; }
  $("#side-vehicle").hidden = !id;
  $("#side-fleet").hidden = !!id;
  if (!id) return;
  const m = markers.get(id);
  if (m) {
    m.root.classList.add("is-selected");
    if (navigate) map.setView(m.marker.getLatLng(), Math.max(map.getZoom(), 16), { animate: false });
  }
  panel = new VehiclePanel($("#side-vehicle"), id, {
    onClose: () => { location.hash = "#/mapa"; },
    onCenter: () => { const mm = markers.get(id); if (mm) map.setView(mm.marker.getLatLng(), Math.max(map.getZoom(), 17)); },
    onFollow: (on) => { follow.on = on; if (on) flushMarkers(); },
  });
}

