// A vehicle's panel beside the map: its live state and the day's timeline of episodes.

import { store, vehicleState, STATE_LABELS } from "./store.js";
import { listAll } from "./api.js";
import { h, icon, chip, dateInput } from "./dom.js";
import { fmtNum, fmtValue, fmtDate, fmtDateTime, fmtAgo, fmtTime, fmtDuration, compass, localDate, dayRange, isoDateBR, addDays,
  ruleName, RULE_COLORS, DEVICES, DEVICE_STATES } from "./fmt.js";
import { episodeStatus, peakText, statusHelp } from "./alerts.js";
import { licenseeName } from "./names.js";

export class VehiclePanel {
  constructor(el, id, { onClose, onCenter, onFollow }) {
    this.el = el;
    this.id = id;
    this.day = localDate();
    this.episodes = [];
    this.ctrl = new AbortController();
    const v = store.vehicles.get(id);
    this.stats = h("dl", { class: "stats" });
    this.devices = h("div", { class: "devices" });
    this.timeline = h("div", { class: "timeline", role: "img" });
    this.list = h("ol", { class: "timeline-list" });
    this.note = h("p", { class: "muted", role: "status" });
    this.state = chip("", "neutral");
    const dayInput = dateInput(this.day);
    const setDay = (iso) => { if (!iso) return; this.day = iso; dayInput.setIso(iso); this.loadDay(); };
    dayInput.addEventListener("change", () => setDay(dayInput.iso()));
    const dayRow = h("div", { class: "day-row" },
      h("button", { type: "button", class: "icon-btn", "aria-label": "Dia anterior", onclick: () => setDay(addDays(this.day, -1)) }, icon("back")),
      dayInput,
      h("button", { type: "button", class: "icon-btn flip", "aria-label": "Dia seguinte", onclick: () => setDay(addDays(this.day, 1)) }, icon("back")),
      h("button", { type: "button", class: "btn btn-small", onclick: () => setDay(localDate()) }, "Hoje"));
    const followBtn = h("button", { type: "button", class: "btn btn-small", "aria-pressed": "false" }, icon("follow"), "Seguir");
    followBtn.addEventListener("click", () => {
      const on = followBtn.getAttribute("aria-pressed") !== "true";
      followBtn.setAttribute("aria-pressed", String(on));
      onFollow(on);
    });
    el.replaceChildren(
      h("div", { class: "panel-head" },
        h("button", { type: "button", class: "icon-btn", "aria-label": "Voltar à lista de veículos", onclick: onClose }, icon("back")),
        h("div", { class: "panel-title" }, h("h2", { id: "vehicle-title" }, id), this.licensee = h("span", { class: "muted" })),
        this.state),
      h("div", { class: "panel-actions" },
        h("button", { type: "button", class: "btn btn-small", onclick: onCenter }, icon("target"), "Centralizar"), followBtn,
        h("a", { class: "btn btn-small", href: "#/alertas" }, "Alertas")),
      this.stats,
      h("h3", { class: "section-title" }, "Dispositivos"), this.devices,
      h("h3", { class: "section-title" }, "Linha do tempo do dia"),
      h("label", { class: "sr-only", htmlFor: dayInput.id = "vehicle-day" }, "Dia da linha do tempo (dd/mm/aaaa)"), dayRow,
      this.timeline, this.note, this.list);
    if (v) this.update(v); else this.note.textContent = "Veículo desconhecido.";
    this.loadDay();
    this.tick = setInterval(() => { const cur = store.vehicles.get(id); if (cur) this.update(cur); }, 5000);
  }

  update(v) {
    const st = vehicleState(v);
    this.state.className = "chip chip--" + { offline: "neutral", alert: "danger", service: "ok", idle: "info", online: "info" }[st];
    this.state.textContent = STATE_LABELS[st];
    this.licensee.textContent = v.licensee ? "Permissionário: " + licenseeName(v.licensee) : "Veículo não cadastrado";
    this.licensee.title = v.licensee ? "Permissionário " + v.licensee : "";
    const row = (k, val, cls) => [h("dt", null, k), h("dd", { class: cls }, val)];
    this.stats.replaceChildren(
      ...row("Velocidade", fmtValue(v.speed_kmh, "km/h"), "big"),
      ...row("Nível sonoro", fmtValue(v.laeq_db, "dB(A)"), "big"),
      ...row("Rumo", compass(v.course_deg)),
      ...row("Em serviço", v.in_service == null ? "desconhecido" : v.in_service ? "sim" : "não"),
      ...row("Visto por último", v.last_seen ? `${fmtDateTime(v.last_seen)} (${fmtAgo(v.last_seen)})` : "nunca"),
      ...row("Posição", v.lat == null ? "sem posição" : `${fmtNum(v.lat, 5)}; ${fmtNum(v.lon, 5)}`),
      ...row("Fila no veículo", v.spool_depth == null ? "—" : `${v.spool_depth} lote(s)`),
      ...row("Configuração", v.config_current ? `versão ${v.config_version || "nenhuma"}${v.config_version === v.config_current ? " (atual)" : ` — desatualizada (atual: ${v.config_current})`}` : v.config_version ? `versão ${v.config_version}` : "—"),
      ...row("Episódios abertos", String((v.open_episodes || []).length)));
    const devs = Object.entries(DEVICES).map(([k, name]) => {
      const s = (v.devices || {})[k];
      return chip(`${name}: ${s ? DEVICE_STATES[s] || s : "sem informação"}`, s === "ok" ? "ok" : s ? "danger" : "neutral");
    });
    this.devices.replaceChildren(...devs);
  }

  async loadDay() {
    const [from, to] = dayRange(this.day);
    this.note.textContent = "Carregando…";
    try {
      const q = new URLSearchParams({ vehicle: this.id, from: from.toISOString(), to: to.toISOString() });
      this.episodes = await listAll("/api/v1/episodes?" + q, 1000);
      this.from = from; this.to = to;
      this.renderDay();
    } catch (e) {
      if (e.name !== "AbortError") this.note.textContent = e.message;
    }
  }

  episodeChanged(e) {
    if (!this.from) return;
    const start = Date.parse(e.start), end = e.end ? Date.parse(e.end) : Date.now();
    if (end < this.from.getTime() || start >= this.to.getTime()) return;
    const i = this.episodes.findIndex((x) => x.id === e.id);
    if (i >= 0) this.episodes[i] = e; else this.episodes.unshift(e);
    this.renderDay();
  }

  renderDay() {
    const span = this.to - this.from;
    const bars = [];
    for (let hh = 0; hh <= 24; hh += 6) {
      const tick = h("span", { class: "tl-tick" + (hh === 0 ? " tl-tick--start" : hh === 24 ? " tl-tick--end" : "") }, String(hh).padStart(2, "0") + "h");
      tick.style.left = (hh / 24) * 100 + "%";
      bars.push(tick);
    }
    const now = Date.now();
    for (const e of this.episodes) {
      const s = Math.max(Date.parse(e.start), +this.from), en = Math.min(e.end ? Date.parse(e.end) : now, +this.to);
      const seg = h("a", { class: "tl-seg" + (e.end ? "" : " is-open"), href: "#/episodio/" + encodeURIComponent(e.id),
        title: `${ruleName(e.rule)} — ${fmtTime(e.start)} (${fmtDuration(e.duration_s)})`, "aria-label": `${ruleName(e.rule)} às ${fmtTime(e.start)}` });
      seg.style.left = ((s - this.from) / span) * 100 + "%";
      seg.style.width = `max(4px, ${((en - s) / span) * 100}%)`;
      seg.style.backgroundColor = RULE_COLORS[e.rule] || "#5d6d7e";
      bars.push(seg);
    }
    if (this.day === localDate()) {
      const mark = h("span", { class: "tl-now", title: "agora" });
      mark.style.left = ((now - this.from) / span) * 100 + "%";
      bars.push(mark);
    }
    this.timeline.replaceChildren(h("div", { class: "tl-track" }, ...bars));
    this.timeline.setAttribute("aria-label", `${this.episodes.length} episódio(s) em ${isoDateBR(this.day)}`);
    this.note.textContent = this.episodes.length ? `${this.episodes.length} episódio(s) em ${isoDateBR(this.day)}` : `Nenhum episódio em ${isoDateBR(this.day)}.`;
    const sorted = [...this.episodes].sort((a, b) => a.start.localeCompare(b.start));
    this.list.replaceChildren(...sorted.map((e) => {
      const [st, tone] = episodeStatus(e);
      const dot = h("span", { class: "tl-dot" });
      dot.style.backgroundColor = RULE_COLORS[e.rule] || "#5d6d7e";
      return h("li", null, h("a", { href: "#/episodio/" + encodeURIComponent(e.id) },
        h("span", { class: "tl-time" }, localDate(e.start) === this.day ? fmtTime(e.start, false) : fmtDate(e.start).slice(0, 5) + " " + fmtTime(e.start, false)), dot,
        h("span", { class: "tl-text" }, h("strong", null, ruleName(e.rule)), h("small", null, peakText(e) + " · " + fmtDuration(e.duration_s))),
        chip(st, tone, statusHelp(e))));
    }));
  }

  destroy() {
    clearInterval(this.tick);
    this.ctrl.abort();
    this.el.replaceChildren();
  }
}

