// The public complaint form (GET /reclamacao): no login. The place is picked on a Leaflet map or
// typed (suggestions from GET /api/v1/public/geocode); on submit the browser solves the server's
// proof-of-work challenge and posts the complaint; the answer page (/r/<code>) follows.
import { sha256, leadingZeroBits } from "./sha256.js";

const $ = (id) => document.getElementById(id);
let place = null; // {lat, lon} picked on the map
let marker = null;
let map = null;

function status(text, error = false) {
  const el = $("status");
  el.textContent = text;
  el.classList.toggle("error", error);
}

async function getJSON(url) {
  const resp = await fetch(url, { credentials: "omit" });
  const body = await resp.json().catch(() => ({}));
  if (!resp.ok) throw new Error(body.error || `Erro ${resp.status}`);
  return body;
}

function setPlace(lat, lon, label) {
  place = { lat, lon };
  if (map) {
    if (marker) marker.setLatLng([lat, lon]);
    else marker = window.L.marker([lat, lon], { keyboard: false }).addTo(map);
  }
  $("local-marcado").textContent = label || `Local marcado: ${lat.toFixed(5)}, ${lon.toFixed(5)}`;
}

function initMap(cfg) {
  const L = window.L;
  if (!L) return;
  const center = cfg.center && (cfg.center[0] || cfg.center[1]) ? cfg.center : [-20.8367, -40.7292];
  map = L.map("mapa", { zoomControl: true, attributionControl: Boolean(cfg.tile_url) }).setView(center, 15);
  if (cfg.tile_url) {
    L.tileLayer(cfg.tile_url, { maxZoom: 19, attribution: "© OpenStreetMap" }).addTo(map);
  }
  map.on("click", (ev) => setPlace(ev.latlng.lat, ev.latlng.lng));
}

// Local "now" for the datetime-local input.
function localNow() {
  const d = new Date();
  d.setSeconds(0, 0);
  const off = d.getTimezoneOffset() * 60000;
  return new Date(d.getTime() - off).toISOString().slice(0, 16);
}

let suggestTimer = 0;
let suggestions = [];
function suggest() {
  clearTimeout(suggestTimer);
  const q = $("endereco").value.trim();
  if (q.length < 3) return;
  suggestTimer = setTimeout(async () => {
    try {
      const body = await getJSON(`api/v1/public/geocode?q=${encodeURIComponent(q)}`);
      suggestions = body.items || [];
      $("sugestoes").replaceChildren(...suggestions.map((s) => {
        const o = document.createElement("option");
        o.value = s.name;
        return o;
      }));
      const exact = suggestions.find((s) => s.name === $("endereco").value);
      if (exact) setPlace(exact.lat, exact.lon, `Local: ${exact.name}`);
    } catch { /* suggestions are a convenience */ }
  }, 300);
}

// solve finds a nonce such that SHA-256(challenge ":" nonce) has `difficulty` leading zero
// bits, yielding to the page every few thousand hashes.
async function solve(ch) {
  let n = 0;
  for (;;) {
    for (let i = 0; i < 4000; i++, n++) {
      if (leadingZeroBits(sha256(`${ch.challenge}:${n}`)) >= ch.difficulty) return String(n);
    }
    await new Promise((r) => setTimeout(r, 0));
  }
}

async function submit(ev) {
  ev.preventDefault();
  const address = $("endereco").value.trim();
  if (!place && !address) { status("Marque o local no mapa ou digite o endereço.", true); return; }
  if (!$("horario").value) { status("Informe a data e a hora.", true); return; }
  const contact = $("contato").value.trim();
  if (contact && !$("contato").checkValidity()) { status("E-mail inválido.", true); return; }
  const button = $("enviar");
  button.disabled = true;
  try {
    status("Preparando o envio (verificação anti-abuso)…");
    const ch = await getJSON("api/v1/public/complaints/challenge");
    const nonce = await solve(ch);
    status("Enviando e consultando os dados dos trenzinhos…");
    const body = { at: $("horario").value, kind: $("tipo").value, text: $("texto").value, address, contact, challenge: ch.challenge, nonce };
    if (place) { body.lat = place.lat; body.lon = place.lon; }
    const resp = await fetch("api/v1/public/complaints", {
      method: "POST", credentials: "omit", headers: { "Content-Type": "application/json" }, body: JSON.stringify(body),
    });
    const out = await resp.json().catch(() => ({}));
    if (!resp.ok) { status(out.error || `Erro ${resp.status}`, true); button.disabled = false; return; }
    status("Reclamação registrada. Abrindo a resposta…");
    location.assign(out.answer_url);
  } catch (err) {
    status(err.message || "Não foi possível enviar. Tente de novo.", true);
    button.disabled = false;
  }
}

async function init() {
  $("horario").value = localNow();
  $("horario").max = localNow();
  $("endereco").addEventListener("input", suggest);
  $("form-reclamacao").addEventListener("submit", submit);
  $("minha-localizacao").addEventListener("click", () => {
    if (!navigator.geolocation) { status("Localização indisponível neste aparelho.", true); return; }
    navigator.geolocation.getCurrentPosition(
      (p) => { setPlace(p.coords.latitude, p.coords.longitude); if (map) map.setView([p.coords.latitude, p.coords.longitude], 17); },
      () => status("Não foi possível obter a sua localização.", true),
      { enableHighAccuracy: true, timeout: 10000 });
  });
  let cfg = {};
  try { cfg = await getJSON("api/v1/public/complaints/config"); } catch { /* the map still works without tiles */ }
  initMap(cfg);
}

if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", init);
else init();
