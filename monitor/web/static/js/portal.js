// The licensee's portal (docs/api.md, "Portal"): what a user of the role licensee sees, and all
// they see — their vehicles live, their episodes as they happen, their drafts' outcome, their
// autos and cases with deadlines, the evidence bundle with the offline verifier's instructions,
// and the online defence and appeal. Everything comes from /api/v1/portal/…, which the server
// scopes to the user's licensee.

import { api, signOut, Stream } from "./api.js";
import { $, $$, h, chip, icon, tableWrap, theadOf } from "./dom.js";
import { fmtDateTime, fmtNum, isoDateBR, ruleName, setTimeZone, CASE_STATES, NOTIFY_MODES, limitApplies } from "./fmt.js";
import { toastError, toastOk } from "./toast.js";
import { passwordCard } from "./password.js";
import { whatifPanel } from "./whatif.js";
import { decisionsList } from "./cases.js";

const state = { me: null, vehicles: new Map(), episodes: [], stream: null, stopPage: null };

// startPortal replaces the control room's shell with the portal's.
export async function startPortal(user) {
  state.me = await api("/api/v1/portal/me");
  setTimeZone(state.me.time_zone);
  $("#login-view").hidden = true;
  $("#boot").hidden = true;
  $("#app").hidden = false;
  $("#app").classList.add("portal");
  $("#skip-link").setAttribute("href", "#main");
  $("#user-name").textContent = user.name;
  $("#user-role").textContent = "Permissionário";
  $("#brand-place").textContent = state.me.razao_social || state.me.licensee;
  // Only the portal's pages: the control room's are not this user's.
  const nav = $("#sidebar .nav");
  nav.replaceChildren(...[
    navItem("painel", "Meus veículos", "fleet"),
    navItem("autos", "Autos e processos", "notice"),
    navItem("minutas", "Resultado das fiscalizações", "review"),
    state.me.whatif ? navItem("e-se", "E se eu mudar o itinerário?", "play") : null,
    navItem("conta", "Minha conta", "users")].filter(Boolean));
  $("#sound-toggle").hidden = true;
  $("#view-mapa").hidden = true;
  $("#logout").addEventListener("click", () => signOut(state.stream));
  $("#menu-btn").addEventListener("click", () => $("#app").classList.toggle("menu-open"));
  setInterval(() => { $("#clock").textContent = fmtDateTime(new Date()); }, 1000);
  await loadLive();
  state.stream = new Stream("/api/v1/portal/stream", ["position", "episode", "status"]);
  state.stream.addEventListener("state", (e) => {
    const s = e.detail;
    $("#conn").className = "conn conn--" + s;
    $("#conn-text").textContent = { connecting: "Conectando…", live: "Ao vivo", reconnecting: "Reconectando…" }[s] || s;
  });
  state.stream.addEventListener("resync", () => loadLive().then(render).catch(() => {}));
  state.stream.addEventListener("message", (e) => {
    const { type, data } = e.detail;
    if (type === "position") {
      const v = state.vehicles.get(data.id);
      if (v) Object.assign(v, { online: data.online, last_seen: data.last_seen, lat: data.lat, lon: data.lon, speed_kmh: data.speed_kmh,
        laeq_db: data.laeq_db, in_service: data.in_service, spool_depth: data.spool_depth, open_episodes: data.open_episodes || [] });
    } else if (type === "episode" && data.id) {
      const i = state.episodes.findIndex((x) => x.id === data.id);
      const { event, ...ep } = data;
      if (i >= 0) state.episodes[i] = { ...state.episodes[i], ...ep };
      else state.episodes.unshift(ep);
    }
    if (route().name === "painel") render();
  });
  state.stream.start();
  window.addEventListener("hashchange", render);
  if (!location.hash.startsWith("#/")) location.hash = "#/painel";
  render();
}

function navItem(route, text, iconName) {
  return h("li", null, h("a", { href: "#/" + route, "data-route": route, title: text },
    icon(iconName), h("span", null, text)));
}

async function loadLive() {
  const [vs, eps] = await Promise.all([api("/api/v1/portal/vehicles"), api("/api/v1/portal/episodes")]);
  state.vehicles = new Map(vs.items.map((v) => [v.id, v]));
  state.episodes = eps.items;
}

function route() {
  const [, name = "painel", arg = null] = (location.hash || "#/painel").split("/");
  return { name, arg };
}

async function render() {
  const { name, arg } = route();
  for (const a of $$(".nav a")) {
    if (a.dataset.route === name) a.setAttribute("aria-current", "page"); else a.removeAttribute("aria-current");
  }
  $("#app").classList.remove("menu-open");
  const page = $("#view-page");
  page.hidden = false;
  if (state.stopPage) { state.stopPage(); state.stopPage = null; }
  try {
    if (name === "e-se" && state.me.whatif) whatifPage(page);
    else if (name === "autos" && arg) await caseView(page, arg);
    else if (name === "autos") await casesView(page);
    else if (name === "minutas") await draftsView(page);
    else if (name === "conta") accountView(page);
    else painel(page);
  } catch (e) {
    toastError(e.message);
  }
}

// fill replaces the page's content by children, leaving out the absent ones (null, false).
function fill(page, ...children) {
  page.replaceChildren(...children.filter((c) => c != null && c !== false));
}

// whatifPage is "E se eu mudar o itinerário?": the licensee's replay of their own vehicles
// with a proposed itinerary (whatif.js; /api/v1/portal/whatif, scoped by the server).
function whatifPage(page) {
  title("E se eu mudar o itinerário?");
  page.replaceChildren();
  state.stopPage = whatifPanel(page, { base: "/api/v1/portal/whatif", portal: true, vehicles: state.me.whatif_vehicles || [] });
}

function title(text) {
  $("#page-title").textContent = text;
  document.title = `${text} — Portal do permissionário`;
}

function painel(page) {
  title("Meus veículos");
  const rows = [...state.vehicles.values()].map((v) => h("tr", null,
    h("th", { scope: "row" }, v.id, h("small", { class: "muted block" }, v.plate)),
    h("td", null, v.online == null ? chip("sem dados", "neutral") : v.online ? chip("online", "ok") : chip("offline", "warn")),
    h("td", null, v.lat != null ? `${fmtNum(v.lat, 5)}; ${fmtNum(v.lon, 5)}` : "—"),
    h("td", null, v.speed_kmh != null ? fmtNum(v.speed_kmh, 0) + " km/h" : "—"),
    h("td", null, v.laeq_db != null ? fmtNum(v.laeq_db, 1) + " dB(A)" : "—"),
    h("td", null, v.spool_depth != null ? String(v.spool_depth) : "—"),
    h("td", null, v.last_seen ? fmtDateTime(v.last_seen) : "—"),
    h("td", null, (v.open_episodes || []).length ? chip(`${v.open_episodes.length} em andamento`, "danger") : "—")));
  const eps = state.episodes.slice(0, 50).map((e) => h("li", { class: "portal-episode" },
    h("strong", null, ruleName(e.rule)), " — ", e.vehicle, " — ", fmtDateTime(e.start),
    " — pico ", fmtNum(e.peak, 1), " ", e.unit || "", limitApplies(e) ? [" (limite ", fmtNum(e.limit, 1), ")"] : e.rule === "telemetry_fault" ? " pelo GPS" : "",
    e.end ? "" : [" ", chip("em andamento", "danger")]));
  fill(page, 
    h("p", { class: "lead" }, `${state.me.razao_social || state.me.licensee}${state.me.cnpj ? " — CNPJ " + state.me.cnpj : ""}`),
    h("section", { class: "card" }, h("h2", { class: "card-title" }, "Veículos ao vivo"),
      tableWrap("Veículos", h("table", { class: "table", id: "portal-vehicles" },
        theadOf(["Veículo", "Situação", "Posição", "Velocidade", "Som", "Fila no veículo", "Último dado", "Episódios"]),
        h("tbody", null, rows.length ? rows : h("tr", null, h("td", { colspan: "8" }, "Nenhum veículo no cadastro.")))))),
    h("section", { class: "card" }, h("h2", { class: "card-title" }, "Episódios e alertas"),
      h("p", { class: "muted small" }, "Os episódios aparecem aqui enquanto acontecem, para que a empresa oriente os condutores. Um episódio não é um auto: o auto só existe depois da revisão de um agente."),
      eps.length ? h("ol", { class: "alert-feed", id: "portal-episodes" }, eps) : h("p", { class: "muted" }, "Nenhum episódio registrado.")));
}

async function casesView(page) {
  title("Autos e processos");
  const list = await api("/api/v1/portal/cases?limit=200");
  const rows = list.items.map((c) => h("tr", null,
    h("th", { scope: "row" }, h("a", { href: "#/autos/" + c.id }, c.notice)),
    h("td", null, c.vehicle || "—"),
    h("td", null, fmtDateTime(c.issued_at, false)),
    h("td", null, c.awaiting_ciencia ? chip("aguardando sua ciência", "warn") : chip(CASE_STATES[c.state] || c.state_text, "neutral")),
    h("td", null, c.deadline && c.deadline.date ? isoDateBR(c.deadline.date) : "—")));
  fill(page, 
    state.me.electronic ? h("p", { class: "banner banner--warn", role: "note" },
      `Notificação eletrônica (${state.me.electronic_act}): o auto fica disponível aqui desde a emissão. A ciência é declarada aqui pelo representante indicado no termo de adesão à notificação eletrônica, depois de baixar o PDF do auto ("Declaro ciência"), e o prazo de defesa corre a partir dela. Abrir o auto não é ciência; sem ciência em ${state.me.electronic_days} dias, a notificação é feita por outro meio.`) : null,
    h("section", { class: "card" }, tableWrap("Autos", h("table", { class: "table", id: "portal-cases" },
      theadOf(["Auto", "Veículo", "Emitido em", "Situação", "Prazo de defesa"]),
      h("tbody", null, rows.length ? rows : h("tr", null, h("td", { colspan: "5" }, "Nenhum auto.")))))));
}

async function caseView(page, id) {
  const c = await api("/api/v1/portal/cases/" + encodeURIComponent(id));
  title("Auto " + c.notice);
  const facts = [
    ["Situação", c.state_text], ["Veículo", c.vehicle], ["Artigos", (c.articles || []).join("; ")], ["Penalidade", c.penalty],
    ["Multa (UFMP)", c.fine_ufmp != null ? fmtNum(c.fine_ufmp, 2) : null],
    ["Data dos fatos", c.offence_at ? fmtDateTime(c.offence_at, false) : null], ["Emitido em", fmtDateTime(c.issued_at, false)],
    ["Notificado em", c.notified ? `${isoDateBR(c.notified)} (${NOTIFY_MODES[c.mode] || c.mode})` : null],
    ["Prazo de defesa", c.deadline ? (c.deadline.date ? isoDateBR(c.deadline.date) + " — " : "") + c.deadline.explanation : null],
    ["Defesa apresentada em", c.defence_filed ? isoDateBR(c.defence_filed) : null],
    ["Decisão", c.decided ? `${isoDateBR(c.decided)}: ${c.outcome === "accepted" ? "defesa acolhida" : "defesa indeferida"}${c.decision_text ? " — " + c.decision_text : ""}` : null],
    ["Prazo de recurso", c.appeal_deadline ? isoDateBR(c.appeal_deadline) : null],
    ["Recurso apresentado em", c.appealed ? isoDateBR(c.appealed) : null],
    ["Prazo de pagamento", c.payment_deadline ? isoDateBR(c.payment_deadline) : null],
    ["Exigibilidade", c.fine_suspended ? c.fine_suspended.explanation : null],
  ].filter(([, v]) => v);
  const downloads = h("div", { class: "btn-row" },
    c.has_pdf ? h("a", { class: "btn", href: `/api/v1/portal/cases/${c.id}/pdf`, download: "" }, "Baixar o auto (PDF)") : null,
    c.has_bundle ? h("a", { class: "btn", href: `/api/v1/portal/cases/${c.id}/bundle`, download: "" }, "Baixar o pacote de evidências") : null);
  fill(page, 
    h("a", { class: "back-link", href: "#/autos" }, "← Autos e processos"),
    c.electronic ? h("p", { class: "banner banner--warn", role: "note", id: "portal-electronic" }, c.electronic.text) : null,
    h("section", { class: "card" }, h("h2", { class: "card-title" }, "Auto " + c.notice),
      h("dl", { class: "facts", id: "portal-case-facts" }, facts.flatMap(([k, v]) => [h("dt", null, k), h("dd", null, v)])), downloads),
    c.awaiting_ciencia ? cienciaCard(c) : null,
    (c.decisions || []).length ? h("section", { class: "card" }, decisionsList(c.decisions)) : null,
    c.verify ? h("section", { class: "card" }, h("h2", { class: "card-title" }, "Conferir a integridade das evidências"),
      h("ol", null, c.verify.steps.map((s) => h("li", null, s))), h("pre", { class: "code" }, c.verify.command)) : null,
    (c.filings || []).length ? h("section", { class: "card" }, h("h2", { class: "card-title" }, "Peças apresentadas pelo portal"),
      h("ul", null, c.filings.map((f) => h("li", null, `${f.kind === "appeal" ? "Recurso" : "Defesa"} — protocolo ${f.protocolo} — ${fmtDateTime(f.filed_at)} `,
        h("a", { href: `/api/v1/portal/filings/${f.id}/receipt`, download: "" }, "comprovante (PDF)"))))) : null,
    c.can_file ? filingForm(c) : null);
}

// cienciaCard: the electronic notice's ciência, an explicit declaration of the representative
// the term of adhesion names, after the auto's PDF was downloaded (the server checks both).
function cienciaCard(c) {
  if (!c.adhesion_term) {
    return h("section", { class: "card", id: "portal-ciencia" }, h("h2", { class: "card-title" }, "Ciência"),
      h("p", null, "A empresa não tem termo de adesão à notificação eletrônica registrado: este auto será entregue em mãos, por via postal com aviso de recebimento ou por edital."));
  }
  if (!c.representative) {
    return h("section", { class: "card", id: "portal-ciencia" }, h("h2", { class: "card-title" }, "Ciência"),
      h("p", null, `Somente o representante indicado no ${c.adhesion_term} declara ciência deste auto.`));
  }
  const check = h("input", { type: "checkbox", id: "ciencia-declaro", required: true });
  const msg = h("p", { class: "form-error", role: "alert" });
  const submit = h("button", { class: "btn btn-primary", type: "submit", id: "ciencia-submit" }, "Declaro ciência");
  const form = h("form", { class: "card record-form", id: "portal-ciencia" },
    h("h2", { class: "card-title" }, "Ciência da notificação eletrônica"),
    h("p", null, `Baixe o auto (PDF) e leia-o. Declarada a ciência, o auto está notificado hoje e o prazo de defesa (Art. 55) corre desta data (${c.adhesion_term}).`),
    h("label", { class: "check" }, check, h("span", null, `Declaro, como representante da empresa, que recebi o auto de infração ${c.notice} e dele tomo ciência.`)),
    msg, h("div", { class: "form-actions" }, submit));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    submit.disabled = true;
    try {
      await api(`/api/v1/portal/cases/${c.id}/ciencia`, { method: "POST", body: { declaro: check.checked } });
      toastOk(`Ciência do auto ${c.notice} registrada.`);
      render();
    } catch (e) {
      msg.textContent = e.message;
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

function filingForm(c) {
  const what = c.can_file === "appeal" ? "recurso" : "defesa";
  const text = h("textarea", { id: "filing-text", name: "text", rows: "8", required: true, maxlength: "50000" });
  const files = h("input", { id: "filing-files", name: "files", type: "file", multiple: true, accept: "application/pdf,image/jpeg,image/png" });
  const msg = h("p", { class: "form-error", role: "alert" });
  const submit = h("button", { class: "btn btn-primary", type: "submit" }, c.can_file === "appeal" ? "Apresentar recurso" : "Apresentar defesa");
  const form = h("form", { class: "card record-form", id: "filing-form" },
    h("h2", { class: "card-title" }, c.can_file === "appeal" ? "Recurso" : "Defesa (Art. 55)"),
    h("div", { class: "field full" }, h("label", { htmlFor: "filing-text" }, `Texto da ${what}`), text),
    h("div", { class: "field full" }, h("label", { htmlFor: "filing-files" }, "Anexos (PDF, JPEG ou PNG; até 5 arquivos de 10 MiB)"), files),
    msg, h("div", { class: "form-actions" }, submit));
  form.addEventListener("submit", async (ev) => {
    ev.preventDefault();
    msg.textContent = "";
    const fd = new FormData();
    fd.append("kind", c.can_file);
    fd.append("text", text.value);
    for (const f of files.files) fd.append("files", f, f.name);
    submit.disabled = true;
    try {
      const r = await fetch(`/api/v1/portal/cases/${c.id}/filings`, { method: "POST", body: fd, credentials: "same-origin", headers: { Accept: "application/json" } });
      const data = await r.json().catch(() => ({}));
      if (!r.ok) throw new Error(data.error || `Erro ${r.status} do servidor`);
      toastOk(`${what[0].toUpperCase() + what.slice(1)} recebida: protocolo ${data.protocolo}.`);
      render();
    } catch (e) {
      msg.textContent = e.message;
    } finally {
      submit.disabled = false;
    }
  });
  return form;
}

// accountView: the user's own account (the password).
function accountView(page) {
  title("Minha conta");
  fill(page, h("p", { class: "lead" }, `Usuário ${$("#user-name").textContent}`), passwordCard());
}

async function draftsView(page) {
  title("Resultado das fiscalizações");
  const list = await api("/api/v1/portal/drafts");
  const rows = list.items.map((d) => h("tr", null,
    h("td", null, d.vehicle), h("td", null, d.outcome), h("td", null, d.decided_at ? fmtDateTime(d.decided_at, false) : "—")));
  fill(page, 
    h("p", { class: "muted" }, "Minutas geradas pelo monitor, depois da decisão do agente: emitidas como auto ou arquivadas. Minutas em revisão não aparecem aqui."),
    h("section", { class: "card" }, tableWrap("Resultados", h("table", { class: "table", id: "portal-drafts" },
      theadOf(["Veículo", "Resultado", "Decidida em"]),
      h("tbody", null, rows.length ? rows : h("tr", null, h("td", { colspan: "3" }, "Nenhuma minuta decidida.")))))));
}
