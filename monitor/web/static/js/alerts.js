// Alerts: one per episode (never one per reading). A new episode rings a short Web Audio beep
// (when the person has interacted with the page and left the sound on), shows a toast and
// flashes the Alertas badge; the Alertas page lists the episodes with filters.

import { store } from "./store.js";
import { api } from "./api.js";
import { h, $, chip, field, emptyRow, tableWrap, theadOf } from "./dom.js";
import { fmtDateTime, fmtTime, fmtDuration, fmtValue, fmtAgo, ruleName, RULES, RULE_COLORS, CLOSED, CLOSED_HELP, DETAILS, DOCUMENT_LABELS, documentText, limitApplies } from "./fmt.js";
import { triageChip, whoText, stateOf, triageAct } from "./triage.js";

// episodeStatus: [text, tone] of an episode's state.
export function episodeStatus(e) {
  if (!e.end) return ["Em andamento", "danger"];
  return [e.closed_reason === "interrupted" ? "Interrompido" : "Encerrado", e.closed_reason === "interrupted" ? "warn" : "neutral"];
}

// statusHelp explains an episode's status (episodeStatus) in a sentence: the chip's title.
export function statusHelp(e) {
  if (!e.end) return CLOSED_HELP.open;
  return CLOSED_HELP[e.closed_reason] || CLOSED[e.closed_reason] || "";
}

// peakText: "45 km/h (limite 30 + 7)".
export function peakText(e) {
  // An expired document: how long ago it expired, not a "limit" of 0 days.
  if (e.rule === "document_expired") return `vencido há ${fmtValue(e.peak, e.unit)}`;
  // A tachograph fault: the vehicle's speed by the GPS while the tachograph was silent or
  // contradicted it; no speed limit is in question.
  if (e.rule === "telemetry_fault") return `${DETAILS[e.detail] || "falha do tacógrafo"} com o veículo a ${fmtValue(e.peak, e.unit)} pelo GPS`;
  const lim = limitApplies(e) ? ` (limite ${fmtValue(e.limit, e.unit)}${e.tolerance ? " + " + fmtValue(e.tolerance, e.unit) : ""})` : "";
  return (e.estimate ? "≈ " : "") + fmtValue(e.peak, e.unit) + lim;
}

export function whereText(e) {
  if (e.site) return `${e.site.name} a ${fmtValue(e.site.distance_m, "m", 0)}` + (e.site.verified ? "" : " (não verificado)");
  if (e.rule === "document_expired" && (e.document || e.detail)) return documentText(e.document, e.detail);
  if (e.rule === "telemetry_fault") return ""; // peakText says it
  if (e.detail) return DETAILS[e.detail] || DOCUMENT_LABELS[e.detail] || e.detail;
  return "";
}

// alertItem is one episode in a feed.
export function alertItem(e, fresh = false) {
  const [st, tone] = episodeStatus(e);
  const bar = h("span", { class: "alert-bar" });
  bar.style.backgroundColor = RULE_COLORS[e.rule] || "#5d6d7e";
  const a = h("a", { class: "alert-link", href: "#/episodio/" + encodeURIComponent(e.id) },
    bar,
    h("span", { class: "alert-body" },
      h("span", { class: "alert-title" }, ruleName(e.rule)),
      h("span", { class: "alert-meta" }, h("strong", null, e.vehicle), " · ", peakText(e)),
      whereText(e) ? h("span", { class: "alert-meta" }, whereText(e)) : null,
      h("span", { class: "alert-time" }, fmtDateTime(e.start), " · ", e.end ? fmtDuration(e.duration_s) : fmtAgo(e.start))),
    chip(st, tone, statusHelp(e)));
  return h("li", { class: "alert-item" + (e.end ? "" : " is-open") + (fresh ? " is-fresh" : ""), dataset: { episode: e.id, rule: e.rule } }, a);
}

// --- Notifier -----------------------------------------------------------------------------

let soundOn = localStorage.getItem("trenzinho.sound") !== "off";
let audio = null;

export function initNotifier() {
  const btn = $("#sound-toggle");
  const paint = () => {
    btn.setAttribute("aria-pressed", String(soundOn));
    btn.title = soundOn ? "Som dos alertas ligado (clique para silenciar)" : "Som dos alertas desligado (clique para ligar)";
    btn.setAttribute("aria-label", btn.title);
    btn.querySelector("use").setAttribute("href", "icons.svg#i-" + (soundOn ? "sound" : "mute"));
  };
  btn.addEventListener("click", () => {
    soundOn = !soundOn;
    localStorage.setItem("trenzinho.sound", soundOn ? "on" : "off");
    paint();
    if (soundOn) beep(660, 0.08);
  });
  paint();
  store.on("episode", ({ episode, isNewAlert }) => {
    if (!isNewAlert) return;
    beep();
    toast(episode);
    const badge = $("#badge-alerts");
    badge.classList.remove("is-flash");
    void badge.offsetWidth; // restart the animation
    badge.classList.add("is-flash");
  });
}

// beep: two short tones. Browsers allow audio only after the person has interacted with the
// page; before that the alert is visual only (no console warning from a blocked AudioContext).
let lastBeep = 0;

export function beep(freq = 880, dur = 0.12) {
  if (!soundOn || !navigator.userActivation || !navigator.userActivation.hasBeenActive) return;
  if (performance.now() - lastBeep < 1500) return; // one beep for a burst of alerts
  lastBeep = performance.now();
  try {
    if (!audio) audio = new AudioContext();
    if (audio.state === "suspended") audio.resume();
    const t = audio.currentTime;
    for (const [i, f] of [[0, freq], [1, freq * 1.25]]) {
      const o = audio.createOscillator(), g = audio.createGain();
      o.type = "sine";
      o.frequency.value = f;
      const s = t + i * (dur + 0.05);
      g.gain.setValueAtTime(0.0001, s);
      g.gain.exponentialRampToValueAtTime(0.25, s + 0.01);
      g.gain.exponentialRampToValueAtTime(0.0001, s + dur);
      o.connect(g).connect(audio.destination);
      o.start(s);
      o.stop(s + dur + 0.02);
    }
  } catch { /* no audio device: the visual cue remains */ }
}

function toast(e) {
  const box = $("#toasts");
  const close = h("button", { type: "button", class: "toast-close", "aria-label": "Fechar aviso", onclick: () => t.remove() }, "×");
  const t = h("div", { class: "toast", role: "alert" },
    h("a", { href: "#/episodio/" + encodeURIComponent(e.id), class: "toast-link" },
      h("strong", null, "Novo alerta: " + ruleName(e.rule)),
      h("span", null, `${e.vehicle} · ${peakText(e)} · ${fmtTime(e.start)}`)), close);
  box.prepend(t);
  while (box.childElementCount > 4) box.lastElementChild.remove();
  setTimeout(() => t.remove(), 15000);
}

// --- The Alertas page ---------------------------------------------------------------------

// statusLegend explains the column Situação: what each status says of the episode and of its
// draft (CLOSED_HELP).
export function statusLegend() {
  return h("details", { class: "card legend", id: "status-legend" },
    h("summary", null, "O que significa a situação de um episódio"),
    h("dl", { class: "facts" }, ...[["Em andamento", CLOSED_HELP.open], ["Encerrado", CLOSED_HELP.cleared], ["Interrompido", CLOSED_HELP.interrupted]]
      .flatMap(([k, v]) => [h("dt", null, k), h("dd", null, v.replace(/^[^:]+: /, ""))])));
}

export const alertsView = {
  title: "Alertas",
  mount(el) {
    store.unseenAlerts = 0;
    store.emit("badges");
    const rule = h("select", { name: "rule" }, h("option", { value: "" }, "Todas as regras"),
      Object.entries(RULES).map(([k, v]) => h("option", { value: k }, v)));
    const vehicle = h("input", { type: "search", name: "vehicle", placeholder: "ex.: PIU-001", autocomplete: "off" });
    const openOnly = h("input", { type: "checkbox", name: "open" });
    // The triage filter (docs/api.md, "Triage"): "mine" is assigned to the signed-in user.
    const triage = h("select", { name: "triage", id: "alerts-triage" }, h("option", { value: "" }, "Todas"),
      h("option", { value: "novo" }, "Novos (sem reconhecimento)"), h("option", { value: "reconhecido" }, "Reconhecidos"),
      h("option", { value: "mine" }, "Atribuídos a mim"), h("option", { value: "atribuido" }, "Atribuídos (todos)"),
      h("option", { value: "encerrado" }, "Encerrados"));
    const tbody = h("tbody");
    const more = h("button", { type: "button", class: "btn", hidden: true }, "Carregar mais");
    const status = h("p", { class: "muted", role: "status" });
    let cursor = "", items = [];
    const filterQS = () => {
      const q = new URLSearchParams();
      if (rule.value) q.set("rule", rule.value);
      if (vehicle.value.trim()) q.set("vehicle", vehicle.value.trim());
      if (openOnly.checked) q.set("open", "true");
      if (triage.value === "mine") { q.set("triage", "atribuido"); q.set("assignee", "me"); }
      else if (triage.value) q.set("triage", triage.value);
      return q;
    };
    const me = () => (store.user ? store.user.name : "");
    const triageMatches = (t) => !triage.value || (triage.value === "mine" ? stateOf(t) === "atribuido" && t.assignee === me() : stateOf(t) === triage.value);
    const matches = (e) => (!rule.value || e.rule === rule.value) &&
      (!vehicle.value.trim() || e.vehicle === vehicle.value.trim()) && (!openOnly.checked || !e.end) && triageMatches(e.triage);
    const row = (e, fresh) => {
      const [st, tone] = episodeStatus(e);
      const tr = h("tr", { class: (e.end ? "" : "is-open") + (fresh ? " is-fresh" : ""), dataset: { episode: e.id } },
        h("td", null, fmtDateTime(e.start)),
        h("td", { class: "nowrap" }, h("strong", null, e.vehicle)),
        h("td", null, h("a", { href: "#/episodio/" + encodeURIComponent(e.id) }, ruleName(e.rule))),
        h("td", { class: "col-low" }, e.article, h("br"), h("small", { class: "muted" }, "penalidade: " + e.penalty)),
        h("td", { class: "num" }, peakText(e)),
        h("td", { class: "num col-low" }, fmtDuration(e.duration_s)),
        h("td", null, whereText(e) || "—"),
        h("td", null, chip(st, tone, statusHelp(e))),
        h("td", { class: "triage-cell" }, triageChip(e.triage),
          whoText(e.triage) ? h("small", { class: "muted triage-who" }, whoText(e.triage)) : null,
          stateOf(e.triage) === "novo" && store.hasRole("fiscal")
            ? h("button", { type: "button", class: "btn btn-small triage-ack", onclick: async (ev) => {
              ev.currentTarget.disabled = true;
              try { await triageAct(e.id, "ack"); } catch { /* shown by triageAct */ }
            } }, "Reconhecer") : null));
      return tr;
    };
    const render = () => {
      tbody.replaceChildren(...(items.length ? items.map((e) => row(e)) : [emptyRow(9, "Nenhum episódio com esses filtros.")]));
    };
    const load = async (append = false) => {
      status.textContent = "Carregando…";
      try {
        const q = filterQS();
        q.set("limit", "100");
        if (append && cursor) q.set("cursor", cursor);
        const page = await api("/api/v1/episodes?" + q);
        items = append ? items.concat(page.items) : page.items;
        cursor = page.next_cursor || "";
        more.hidden = !cursor;
        status.textContent = `${items.length} episódio(s)`;
        render();
      } catch (e) {
        status.textContent = e.message;
      }
    };
    const form = h("form", { class: "toolbar", onsubmit: (e) => { e.preventDefault(); load(); } },
      field("Regra", rule), field("Veículo", vehicle), field("Triagem", triage),
      h("label", { class: "check" }, openOnly, h("span", null, "Somente em andamento")),
      h("button", { type: "submit", class: "btn btn-primary" }, "Filtrar"));
    rule.addEventListener("change", () => load());
    openOnly.addEventListener("change", () => load());
    triage.addEventListener("change", () => load());
    more.addEventListener("click", () => load(true));
    el.append(
      h("div", { class: "page-head" }, h("p", { class: "lead" }, "Cada episódio é um alerta: aberto quando a infração se confirma, encerrado quando termina. Os novos aparecem aqui em tempo real. ",
        "A triagem (reconhecer, atribuir, comentar, encerrar) é o trabalho da central sobre o alerta; não decide sobre minutas nem autos.")),
      h("div", { class: "card" }, form,
        tableWrap("Episódios", h("table", { class: "table", id: "alerts-table" },
          theadOf(["Início", "Veículo", "Regra", ["Artigo", "col-low"], "Pico", ["Duração", "col-low"], "Local", "Situação", "Triagem"]),
          tbody)),
        h("div", { class: "table-foot" }, status, more)),
      statusLegend());
    const offTriage = store.on("triage", (t) => {
      const i = items.findIndex((x) => x.id === t.episode_id);
      if (i < 0) return;
      items[i] = { ...items[i], triage: t };
      if (!triageMatches(t)) items.splice(i, 1);
      render();
    });
    const offEpisode = store.on("episode", ({ episode }) => {
      const i = items.findIndex((x) => x.id === episode.id);
      // The stream's episode carries no triage: keep the one known.
      if (i >= 0) items[i] = { ...episode, triage: items[i].triage };
      else if (matches(episode)) items.unshift(episode);
      else return;
      render();
      const tr = tbody.querySelector(`tr[data-episode="${CSS.escape(episode.id)}"]`);
      if (tr) tr.classList.add("is-fresh");
      store.unseenAlerts = 0;
      store.emit("badges");
    });
    this.off = () => { offEpisode(); offTriage(); };
    load();
  },
  unmount() { if (this.off) this.off(); },
};
