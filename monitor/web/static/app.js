// Painel mínimo da central: login, veículos e episódios, atualizados ao vivo por SSE.
"use strict";

const $ = (s) => document.querySelector(s);
const fmtTime = (t) => t ? new Date(t).toLocaleString("pt-BR", { timeZone: "America/Sao_Paulo" }) : "—";
const num = (v, d = 1) => v == null ? "—" : Number(v).toLocaleString("pt-BR", { maximumFractionDigits: d });
const ruleNames = {
  speed: "Velocidade", hours: "Horário", sensitive_zone_sound: "Som perto de local sensível",
  boarding_sound: "Som no embarque", noise_limit: "Limite de ruído (NBR 10151)",
  route_deviation: "Fora do itinerário", parked_public_road: "Estacionado em via pública",
  telemetry_fault: "Falha do tacógrafo",
};
const closedNames = { cleared: "encerrado", interrupted: "interrompido (sem dados)" };
const vehicles = new Map();
const episodes = new Map();
let stream = null;

async function api(path, opts = {}) {
  const r = await fetch(path, { credentials: "same-origin", ...opts });
  const body = await r.json().catch(() => ({}));
  if (!r.ok) throw new Error(body.error || ("erro " + r.status));
  return body;
}

function cell(text) { const td = document.createElement("td"); td.textContent = text; return td; }

function renderVehicles() {
  const tb = $("#vehicles tbody");
  tb.replaceChildren(...[...vehicles.values()].sort((a, b) => a.id.localeCompare(b.id)).map((v) => {
    const tr = document.createElement("tr");
    tr.className = v.online ? "online" : "offline";
    tr.append(cell(v.id), cell(v.online ? "online" : "offline"), cell(fmtTime(v.last_seen)),
      cell(v.speed_kmh == null ? "—" : num(v.speed_kmh) + " km/h"), cell(v.laeq_db == null ? "—" : num(v.laeq_db) + " dB(A)"),
      cell(v.in_service == null ? "—" : (v.in_service ? "sim" : "não")),
      cell(v.lat == null ? "—" : num(v.lat, 5) + ", " + num(v.lon, 5)),
      cell((v.open_episodes || []).length ? v.open_episodes.length : "—"));
    return tr;
  }));
}

function renderEpisodes() {
  const tb = $("#episodes tbody");
  const list = [...episodes.values()].sort((a, b) => b.start.localeCompare(a.start)).slice(0, 100);
  tb.replaceChildren(...list.map((e) => {
    const tr = document.createElement("tr");
    if (!e.end) tr.className = "open";
    tr.append(cell(fmtTime(e.start)), cell(e.vehicle), cell(ruleNames[e.rule] || e.rule), cell(e.article + " (multa: " + e.penalty + ")"),
      cell(num(e.duration_s, 0) + " s"), cell(num(e.peak) + " " + e.unit), cell(num(e.limit) + " " + e.unit),
      cell(e.end ? (closedNames[e.closed_reason] || e.closed_reason) : "em andamento"));
    return tr;
  }));
}

function connect() {
  if (stream) stream.close();
  stream = new EventSource("/api/v1/stream");
  stream.onopen = () => { $("#conn").textContent = "ao vivo"; $("#conn").className = "conn live"; };
  stream.onerror = () => { $("#conn").textContent = "reconectando…"; $("#conn").className = "conn"; };
  stream.addEventListener("position", (ev) => { const v = JSON.parse(ev.data); vehicles.set(v.id, v); renderVehicles(); });
  stream.addEventListener("episode", (ev) => { const e = JSON.parse(ev.data); episodes.set(e.id, e); renderEpisodes(); });
}

async function showBoard() {
  $("#login").hidden = true;
  $("#board").hidden = false;
  $("#logout").hidden = false;
  const [vs, es] = await Promise.all([api("/api/v1/vehicles"), api("/api/v1/episodes?limit=100")]);
  vs.items.forEach((v) => vehicles.set(v.id, v));
  es.items.forEach((e) => episodes.set(e.id, e));
  renderVehicles();
  renderEpisodes();
  connect();
}

$("#login").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const f = new FormData(ev.target);
  try {
    await api("/api/v1/login", { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ user: f.get("user"), password: f.get("password") }) });
    $("#login-error").textContent = "";
    await showBoard();
  } catch (e) {
    $("#login-error").textContent = e.message;
  }
});

$("#logout").addEventListener("click", async () => {
  await api("/api/v1/logout", { method: "POST" }).catch(() => {});
  location.reload();
});

(async () => {
  const s = await api("/api/v1/session");
  if (s.authenticated) await showBoard(); else $("#login").hidden = false;
})();
