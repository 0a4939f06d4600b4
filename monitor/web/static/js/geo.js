// The geofences on a Leaflet map: sensitive sites with their radius (dimmed when closed, marked
// when unverified), NBR 10151 zones, itineraries, boarding points and garages.

import { api } from "./api.js";
import { h } from "./dom.js";
import { CATEGORIES, AREAS, fmtNum, fmtDateTime, fmtOpeningHours, isoDateBR } from "./fmt.js";
import { licenseeName } from "./names.js";

let cached = null, cachedAt = 0;

// loadGeofences fetches GET /api/v1/geofences, at most once a minute (its "open now" flags
// change with the clock).
export async function loadGeofences(force = false) {
  if (!force && cached && Date.now() - cachedAt < 60000) return cached;
  cached = await api("/api/v1/geofences");
  cachedAt = Date.now();
  return cached;
}

// ZOOM_PT are the zoom buttons' names in Portuguese (Leaflet's are English).
export const ZOOM_PT = { zoomInTitle: "Aproximar", zoomOutTitle: "Afastar" };

export const ZONE_COLORS = {
  rural: "#6fbf73", strict_residential: "#4f8fce", mixed_residential: "#7fb0de",
  mixed_commercial: "#e3a75f", mixed_leisure: "#b48ad1", industrial: "#9aa3ad",
};
const CATEGORY_LETTERS = { hospital: "H", health: "+", school: "E", library: "B", public_office: "P", church: "I" };

export const LAYERS = [
  { key: "sensitive", label: "Locais sensíveis e raio" },
  { key: "zones", label: "Zonas NBR 10151" },
  { key: "itineraries", label: "Itinerários autorizados" },
  { key: "boarding", label: "Pontos de embarque" },
  { key: "garages", label: "Garagens" },
];

// unfocusPaths keeps the map's vector shapes (zones, routes, radii, tracks) out of the Tab
// order: Chromium makes an SVG path focusable once it has focus listeners, which Leaflet adds
// for tooltips, so Tab would walk through dozens of unnamed shapes. The sites' badges (markers
// with keyboard: true) stay the keyboard handles.
export function unfocusPaths(map) {
  if (map._unfocusPaths) return;
  map._unfocusPaths = true;
  const L = window.L;
  const fix = (layer) => {
    if (!(layer instanceof L.Path)) return;
    const el = layer.getElement && layer.getElement();
    if (el) { el.setAttribute("tabindex", "-1"); el.setAttribute("focusable", "false"); }
  };
  map.on("layeradd", (e) => fix(e.layer));
  map.eachLayer(fix);
}

// ensurePanes makes the panes that keep zones under routes under sites under vehicles.
export function ensurePanes(map) {
  const z = { zones: 320, garages: 330, buffers: 340, routes: 350, sites: 360 };
  for (const [name, zi] of Object.entries(z)) {
    if (!map.getPane(name)) map.createPane(name).style.zIndex = String(zi);
  }
}

function tip(title, ...lines) {
  return h("div", { class: "geo-tip" }, h("strong", null, title), ...lines.filter(Boolean).map((l) => (l instanceof Node ? l : h("div", null, l))));
}

const SOURCES = { osm: "OpenStreetMap", survey: "levantamento de campo", sample: "exemplo (fictício)" };
function sourceLine(p) {
  if (p.source === "sample") return h("div", { class: "warn-text" }, "Dado de exemplo: não usar em autos");
  return p.source ? "Fonte: " + (SOURCES[p.source] || p.source) : null;
}

// buildLayers returns one L.LayerGroup per kind (LAYERS' keys) and the bounds of everything.
export function buildLayers(map, fc) {
  ensurePanes(map);
  unfocusPaths(map);
  const L = window.L;
  const groups = Object.fromEntries(LAYERS.map((l) => [l.key, L.layerGroup()]));
  const radius = fc.sensitive_radius_m || 200;
  const areas = fc.areas || {};
  const bounds = L.latLngBounds([]);
  for (const f of fc.features || []) {
    const p = f.properties || {};
    const g = f.geometry;
    if (!g) continue;
    switch (p.kind) {
      case "sensitive": addSensitive(groups.sensitive, f, radius, bounds); break;
      case "nbr_zone": {
        const a = areas[p.area] || {};
        const color = ZONE_COLORS[p.area] || "#9aa3ad";
        const layer = L.geoJSON(f, { pane: "zones", style: { color, weight: 1, opacity: 0.7, fillColor: color, fillOpacity: 0.16 } });
        layer.bindTooltip(tip("Zona NBR 10151: " + (a.name || AREAS[p.area] || p.area),
          a.day_db != null ? `Limite: dia ${fmtNum(a.day_db)} dB(A) · noite ${fmtNum(a.night_db)} dB(A)` : null,
          p.name), { sticky: true });
        layer.addTo(groups.zones);
        break;
      }
      case "itinerary": {
        const active = p.active_now !== false;
        const layer = L.geoJSON(f, { pane: "routes", style: { color: "#6c3fb5", weight: 4, opacity: active ? 0.85 : 0.45, dashArray: active ? null : "6 6", lineCap: "round" } });
        // Tooltips are made when shown, so that they name the licensee once the registry has loaded.
        layer.bindTooltip(() => tip("Itinerário " + (p.name || p.id), p.licensee ? "Permissionário: " + licenseeName(p.licensee) : null,
          [p.days && "Dias: " + p.days, p.hours && "Horário: " + p.hours].filter(Boolean).join(" · ") || null,
          "Corredor: " + fmtNum(p.corridor_m || 50, 0) + " m",
          active ? "Autorizado agora" : "Fora do horário autorizado agora"), { sticky: true });
        layer.addTo(groups.itineraries);
        extend(bounds, layer);
        break;
      }
      case "boarding_point": {
        if (g.type !== "Point") break;
        const ll = [g.coordinates[1], g.coordinates[0]];
        const c = L.circle(ll, { pane: "sites", radius: p.radius_m || 30, color: "#11806a", weight: 1.5, fillColor: "#1abc9c", fillOpacity: 0.3 });
        c.bindTooltip(tip("Ponto de embarque: " + (p.name || p.id), "Raio: " + fmtNum(p.radius_m || 30, 0) + " m"), { sticky: true });
        c.addTo(groups.boarding);
        bounds.extend(L.latLng(ll).toBounds(2 * (p.radius_m || 30)));
        break;
      }
      case "garage": {
        const layer = L.geoJSON(f, { pane: "garages", style: { color: "#6d4c41", weight: 1.5, dashArray: "4 3", fillColor: "#8d6e63", fillOpacity: 0.25 } });
        layer.bindTooltip(() => tip("Garagem" + (p.name ? ": " + p.name : ""), p.licensee ? "Permissionário: " + licenseeName(p.licensee) : null), { sticky: true });
        layer.addTo(groups.garages);
        extend(bounds, layer);
        break;
      }
    }
  }
  return { groups, bounds };
}

function extend(bounds, layer) {
  const b = layer.getBounds && layer.getBounds();
  if (b && b.isValid()) bounds.extend(b);
}

function addSensitive(group, f, radius, bounds) {
  const L = window.L;
  const p = f.properties;
  const open = p.open_now !== false;
  const verified = p.verified === true;
  const color = open ? "#c0392b" : "#8a949e";
  const state = open ? "Aberto agora: som restrito no raio" : "Fechado agora";
  const lines = [
    CATEGORIES[p.category] || p.category,
    h("div", { class: open ? "ok-text" : "" }, state + ` (raio de ${fmtNum(radius, 0)} m)`),
    p.opening_hours ? "Horário: " + fmtOpeningHours(p.opening_hours) : "Horário não informado: considerado sempre aberto",
    verified ? `Verificado por ${p.verified_by} em ${/^\d{4}-\d{2}-\d{2}$/.test(p.verified_at || "") ? isoDateBR(p.verified_at) : p.verified_at}` : h("div", { class: "warn-text" }, "Não verificado"),
    sourceLine(p),
    p.in_profile === false ? "Categoria fora do perfil legal" : null,
  ];
  const t = () => tip(p.name || p.id, ...lines);
  // The radius: a circle around a point, the hull of circles around a polygon's vertices.
  let buffer, center;
  const style = { pane: "buffers", color, weight: open ? 1.5 : 1, opacity: open ? 0.9 : 0.6, dashArray: open ? null : "5 5",
    fillColor: color, fillOpacity: open ? 0.08 : 0.03, className: "site-buffer" + (open ? "" : " is-closed") };
  if (f.geometry.type === "Point") {
    center = [f.geometry.coordinates[1], f.geometry.coordinates[0]];
    buffer = L.circle(center, { ...style, radius });
  } else {
    const polys = f.geometry.type === "Polygon" ? [f.geometry.coordinates] : f.geometry.coordinates;
    buffer = L.polygon(polys.map((poly) => hullBuffer(poly[0], radius)), style);
    const site = L.geoJSON(f, { pane: "sites", style: { color, weight: 1.5, fillColor: color, fillOpacity: open ? 0.35 : 0.15, dashArray: verified ? null : "3 3" } });
    site.bindTooltip(t(), { sticky: true });
    site.addTo(group);
    center = site.getBounds().getCenter();
  }
  buffer.bindTooltip(t(), { sticky: true });
  buffer.addTo(group);
  // A circle knows its bounds only on a map: compute them.
  bounds.extend(f.geometry.type === "Point" ? L.latLng(center).toBounds(2 * radius) : buffer.getBounds());
  const badge = h("div", { class: "site-badge" + (open ? "" : " is-closed") + (verified ? "" : " is-unverified") },
    CATEGORY_LETTERS[p.category] || "•");
  // The badge is the site's keyboard handle: Tab reaches it, focus shows the details, Enter
  // (Leaflet turns it into a click) or Space keeps them open in a popup; screen readers read
  // its label.
  const m = L.marker(center, {
    pane: "sites", keyboard: true,
    icon: L.divIcon({ className: "site-badge-icon", html: badge, iconSize: [22, 22], iconAnchor: [11, 11] }),
  });
  m.bindTooltip(t());
  m.bindPopup(t, { minWidth: 220, maxWidth: 320 });
  m.on("popupopen", () => m.closeTooltip());
  const label = `${CATEGORIES[p.category] || p.category}: ${p.name || p.id}. ${state}${verified ? "" : ". Não verificado"}`;
  m.on("add", () => {
    const el = m.getElement();
    if (!el || el.dataset.a11y) return;
    el.dataset.a11y = "1";
    el.setAttribute("role", "button");
    el.setAttribute("aria-label", label);
    el.dataset.site = p.id || "";
    el.addEventListener("focus", () => m.openTooltip());
    el.addEventListener("blur", () => m.closeTooltip());
    el.addEventListener("keydown", (e) => {
      if (e.key === " ") { e.preventDefault(); m.openPopup(); }
    });
  });
  m.addTo(group);
}

// hullBuffer approximates the set within r metres of a polygon ring ([lon, lat] pairs): the
// convex hull of circles around its vertices (exact for convex sites, slightly generous for
// concave ones). Returns Leaflet [lat, lon] pairs.
export function hullBuffer(ring, r) {
  const lat0 = ring[0][1], lon0 = ring[0][0];
  const kx = Math.cos((lat0 * Math.PI) / 180) * 111320, ky = 110574;
  const pts = [];
  for (const [lon, lat] of ring) {
    const x = (lon - lon0) * kx, y = (lat - lat0) * ky;
    for (let i = 0; i < 32; i++) {
      const a = (i / 32) * 2 * Math.PI;
      pts.push([x + r * Math.cos(a), y + r * Math.sin(a)]);
    }
  }
  return convexHull(pts).map(([x, y]) => [lat0 + y / ky, lon0 + x / kx]);
}

function convexHull(pts) {
  pts.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const cross = (o, a, b) => (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
  const lower = [], upper = [];
  for (const p of pts) {
    while (lower.length >= 2 && cross(lower[lower.length - 2], lower[lower.length - 1], p) <= 0) lower.pop();
    lower.push(p);
  }
  for (let i = pts.length - 1; i >= 0; i--) {
    const p = pts[i];
    while (upper.length >= 2 && cross(upper[upper.length - 2], upper[upper.length - 1], p) <= 0) upper.pop();
    upper.push(p);
  }
  return lower.slice(0, -1).concat(upper.slice(0, -1));
}

// withBaseMap puts a base under map (whose element is el): the configured tiles, and the
// street extract the monitor imports (GET /api/v1/basemap, config.basemap) drawn as vectors
// when there are no tiles or they fail to load — no tile server reachable, offline. The streets
// lie in a pane under the tiles, so that tiles that do load cover them. With neither, the map
// has a plain background.
export function withBaseMap(map, config, el) {
  const tiles = tileLayer(config);
  let drawn = false;
  const streets = () => {
    if (drawn) return;
    drawn = true;
    el.classList.add("map--plain");
    if (!config.basemap) return;
    loadBasemap().then((fc) => streetLayer(map, fc).addTo(map)).catch(() => {});
  };
  if (tiles) tiles.on("tileerror", streets).addTo(map);
  else streets();
}

let basemap = null;

// loadBasemap fetches the street base map once a session (the browser revalidates it by its ETag).
function loadBasemap() {
  if (!basemap) basemap = api("/api/v1/basemap").catch((e) => { basemap = null; throw e; });
  return basemap;
}

const MAJOR = /^highway=(motorway|trunk|primary|secondary)/;

// streetLayer draws the streets of fc, credited as its licence requires (ODbL) and, when the
// extract is a sample, labelled as one.
function streetLayer(map, fc) {
  const L = window.L;
  if (!map.getPane("basemap")) {
    const pane = map.createPane("basemap");
    pane.style.zIndex = "150"; // under the tiles (200) and the geofences (400)
    pane.style.pointerEvents = "none";
  }
  const attribution = '<a href="https://www.openstreetmap.org/copyright">' + (fc.attribution || "© OpenStreetMap contributors (ODbL)") + "</a>" +
    (fc.sample ? " · ruas de amostra, sintéticas: não é levantamento" : "");
  return L.geoJSON(fc, {
    pane: "basemap", interactive: false, attribution,
    style: (f) => ({ className: "basemap-street", color: "#c9c2b4", opacity: 1, lineCap: "round",
      weight: MAJOR.test((f.properties && f.properties.osm_tag) || "") ? 7 : 4 }),
  });
}

// tileLayer returns the configured tile layer, or null when the monitor has none.
export function tileLayer(config) {
  if (!config.tile_url) return null;
  let attribution = "Mapa base: " + new URL(config.tile_url.replace("{s}", "a"), location.href).hostname;
  if (/openstreetmap/i.test(config.tile_url)) attribution = '&copy; <a href="https://www.openstreetmap.org/copyright">colaboradores do OpenStreetMap</a>';
  return window.L.tileLayer(config.tile_url, { maxZoom: 19, attribution });
}

export function generatedNote(fc) {
  return fc.generated_at ? "Situação dos locais em " + fmtDateTime(fc.generated_at, false) : "";
}
