// The control room's dashboard: login, the shell (sidebar, top bar, connection state) and the
// hash router. Every view module exports {title, mount(el, arg), unmount()}.

import { api, onUnauthorized, signOut, backToLogin, Stream } from "./api.js";
import { store } from "./store.js";
import { $, $$, h } from "./dom.js";
import { fmtDateTime, setTimeZone, setRuleLabels, setAuthorityTitle, ROLES, ROLE_RANK } from "./fmt.js";
import { mapView } from "./map.js";
import { alertsView, initNotifier } from "./alerts.js";
import { reviewView } from "./review.js";
import { fleetView } from "./fleet.js";
import { auditView } from "./audit.js";
import { usersView } from "./users.js";
import { episodeView } from "./episode.js";
import { registryView } from "./registry.js";
import { noticesView } from "./notices.js";
import { profileView, initBrowserNotifications } from "./notifyprefs.js";
import { scheduleView } from "./schedule.js";
import { deadLettersView } from "./deadletters.js";
import { complaintsView } from "./complaints.js";
import { loadLicensees } from "./names.js";
import { toastError } from "./toast.js";
import { nearbyView } from "./nearby.js";
import { fieldView, setFieldKey, startQueue } from "./field.js";
import { registerServiceWorker } from "./pwa.js";
import { startPortal } from "./portal.js";
import { legalProfileView } from "./legalprofile.js";
import { whatifView } from "./whatif.js";

const routes = {
  mapa: mapView, alertas: alertsView, revisao: reviewView, frota: fleetView,
  auditoria: auditView, usuarios: usersView, episodio: episodeView, cadastro: registryView, autos: noticesView,
  perto: nearbyView, constatar: fieldView,
  perfil: profileView, plantao: scheduleView, "avisos-falhos": deadLettersView,
  reclamacoes: complaintsView, "perfil-legal": legalProfileView, "e-se": whatifView,
};
const NAV_OF = { episodio: "alertas", constatar: "perto" };

let stream = null;
let current = null;
let started = false;

async function boot() {
  $("#login-form").addEventListener("submit", login);
  // The skip link moves the focus without touching the hash (the router's).
  $("#skip-link").addEventListener("click", (e) => {
    const target = document.querySelector(e.currentTarget.getAttribute("href"));
    if (!target) return;
    e.preventDefault();
    const first = target.id === "login-form" ? $("#login-user") : target;
    first.focus();
  });
  onUnauthorized(() => showLogin("Sua sessão terminou. Entre novamente."));
  try {
    const s = await api("/api/v1/session");
    if (s.authenticated) await start(s.user, s.field_key);
    else showLogin();
  } catch (e) {
    showLogin(e.message);
  }
}

function showLogin(message = "") {
  if (stream) { stream.stop(); stream = null; }
  if (started) { backToLogin(); return; }
  $("#boot").hidden = true;
  $("#app").hidden = true;
  $("#login-view").hidden = false;
  $("#skip-link").setAttribute("href", "#login-form");
  $("#login-error").textContent = message;
  $("#login-user").focus();
}

async function login(ev) {
  ev.preventDefault();
  const f = new FormData(ev.target);
  const btn = $("#login-submit");
  btn.disabled = true;
  $("#login-error").textContent = "";
  try {
    const r = await api("/api/v1/login", { method: "POST", body: { user: String(f.get("user")).trim(), password: f.get("password") } });
    ev.target.reset();
    await start(r.user, r.field_key);
  } catch (e) {
    $("#login-error").textContent = e.status === 401 ? "Usuário ou senha incorretos." : e.message;
    $("#login-password").select();
  } finally {
    btn.disabled = false;
  }
}

async function start(user, fieldKey) {
  started = true;
  store.user = user;
  await setFieldKey(fieldKey).catch(() => {});
  // A licensee's user sees the portal and nothing else (the server refuses them the rest).
  if (user.role === "licensee") { await startPortal(user); return; }
  try { store.config = await api("/api/v1/config"); } catch { store.config = {}; }
  setTimeZone(store.config.time_zone);
  setAuthorityTitle(store.config.authority_title);
  setRuleLabels(store.config.rule_labels);
  $("#login-view").hidden = true;
  $("#boot").hidden = true;
  $("#app").hidden = false;
  // Admins see what the legal profile leaves unset (municipal holidays, UFMP, defence office)
  // until it is set.
  // One line that links to the Perfil legal page, dismissable for the session (until the
  // warnings change): it must not take a phone's screen.
  const pw = store.config.profile_warnings || [];
  const dismissKey = "profile-warnings-dismissed";
  if (pw.length && sessionStorage.getItem(dismissKey) !== pw.join("\n")) {
    const banner = h("div", { class: "banner banner--warn profile-warnings", id: "profile-warnings", role: "note" },
      h("span", { class: "profile-warnings-text" }, h("strong", null, "Perfil legal incompleto: "),
        `${pw.length} aviso(s). `, h("a", { href: "#/perfil-legal" }, "Ver o perfil legal")),
      h("button", { type: "button", class: "btn-icon", id: "profile-warnings-dismiss", "aria-label": "Dispensar nesta sessão", title: "Dispensar nesta sessão",
        onclick: () => { sessionStorage.setItem(dismissKey, pw.join("\n")); banner.remove(); } }, "×"));
    $("#main").prepend(banner);
  }
  if (store.config.demonstration) {
    $("#brand-place").after(h("span", { class: "demo-chip", id: "demo-chip", title: "Perfil legal de demonstração: atos e valores fictícios" }, store.config.demonstration));
  }
  $("#skip-link").setAttribute("href", "#main");
  $("#user-name").textContent = user.name;
  $("#user-role").textContent = ROLES[user.role] || user.role;
  const place = [store.config.municipality, store.config.state].filter(Boolean).join("-");
  if (place) $("#brand-place").textContent = place;
  for (const li of $$("[data-min-role]")) li.hidden = ROLE_RANK[user.role] < ROLE_RANK[li.dataset.minRole];
  for (const li of $$("[data-needs]")) if (!store.config[li.dataset.needs]) li.hidden = true;
  $("#logout").addEventListener("click", logout);
  $("#menu-btn").addEventListener("click", () => toggleMenu());
  $("#scrim").addEventListener("click", () => toggleMenu(false));
  document.addEventListener("keydown", (e) => { if (e.key === "Escape") toggleMenu(false); });
  initNotifier();
  initBrowserNotifications();
  clock();
  setInterval(clock, 1000);
  store.on("episode", badges);
  store.on("draft", badges);
  store.on("reset", badges);
  store.on("badges", badges);

  try { await Promise.all([store.loadAll(), loadLicensees()]); } catch (e) { toastError("Não foi possível carregar os dados: " + e.message); }
  stream = new Stream("/api/v1/stream", ["position", "episode", "status", "draft", "triage"]);
  stream.addEventListener("state", (e) => connState(e.detail));
  stream.addEventListener("resync", () => store.loadAll().catch(() => {}));
  stream.addEventListener("message", (e) => {
    const { type, data } = e.detail;
    if (type === "position") store.applyPosition(data);
    else if (type === "episode") store.applyEpisode(data);
    else if (type === "draft") store.applyDraft(data);
    else if (type === "triage") store.emit("triage", data);
  });
  connState("connecting");
  stream.start();
  startQueue();
  window.addEventListener("hashchange", route);
  route();
}

function logout() {
  const s = stream;
  stream = null;
  return signOut(s);
}

function connState(s) {
  const el = $("#conn");
  el.className = "conn conn--" + s;
  $("#conn-text").textContent = { connecting: "Conectando…", live: "Ao vivo", reconnecting: "Reconectando…" }[s] || s;
  el.title = s === "live" ? "Recebendo dados em tempo real" : "Sem dados em tempo real no momento; tentando reconectar";
}

function clock() {
  $("#clock").textContent = fmtDateTime(new Date());
}

function badges() {
  const open = store.openEpisodes().length;
  const a = $("#badge-alerts");
  a.textContent = String(open);
  a.hidden = open === 0;
  a.title = `${open} episódio(s) em andamento`;
  const pending = store.pendingDrafts();
  const r = $("#badge-review");
  r.textContent = String(pending);
  r.hidden = pending === 0;
  r.title = `${pending} minuta(s) aguardando revisão`;
}

function toggleMenu(open) {
  const app = $("#app");
  const on = open ?? !app.classList.contains("menu-open");
  app.classList.toggle("menu-open", on);
  $("#menu-btn").setAttribute("aria-expanded", String(on));
}


async function route() {
  const [, name = "mapa", ...rest] = (location.hash || "#/mapa").split("/");
  const arg = rest.join("/") || null;
  let view = routes[name];
  if (!view) { location.replace("#/mapa"); return; }
  if (current && current.unmount) current.unmount();
  toggleMenu(false);
  const page = $("#view-page");
  page.replaceChildren();
  const mapEl = $("#view-mapa");
  const navKey = NAV_OF[name] || name;
  for (const a of $$(".nav a")) {
    if (a.dataset.route === navKey) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  if (view.role && !store.hasRole(view.role)) {
    $("#page-title").textContent = "Acesso restrito";
    mapEl.hidden = true;
    page.hidden = false;
    page.append(h("div", { class: "card" }, h("p", null, view.role === "admin" ? "Esta área é restrita a administradores." : `Esta área é restrita ao papel ${ROLES[view.role]} ou superior.`)));
    current = null;
    return;
  }
  $("#page-title").textContent = view.title;
  document.title = `${view.title} — Central de Fiscalização`;
  mapEl.hidden = !view.persistent;
  page.hidden = !!view.persistent;
  current = view;
  await view.mount(view.persistent ? mapEl : page, arg);
  if (!view.persistent) $("#main").scrollTop = 0;
}

registerServiceWorker();
boot();
