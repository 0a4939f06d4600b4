// "Perto de mim": for the agent on the street, the trains within 1 km of the phone (browser
// geolocation), each with its speed and sound now, whether it is online, the place it is at and
// its open alerts, from which the agent records a constatação em campo. Made for a phone first.
// The position is sent to the monitor for the query only (GET /api/v1/nearby).

import { api } from "./api.js";
import { store } from "./store.js";
import { h, icon, chip } from "./dom.js";
import { fmtAgo, fmtValue, fmtNum, fmtTime, ruleName, CATEGORIES } from "./fmt.js";
import { licenseeName } from "./names.js";
import { queueStatus, rememberAlert } from "./field.js";

const REFRESH_MS = 15000;

export const nearbyView = {
  title: "Perto de mim",
  async mount(el) {
    this.timer = 0;
    this.watch = null;
    const status = h("p", { id: "nearby-where", class: "muted small", role: "status", "aria-live": "polite" }, "Obtendo sua localização…");
    const list = h("ol", { id: "nearby-list", class: "nearby-list" });
    const empty = h("p", { id: "nearby-empty", class: "muted empty-note", hidden: true }, "Nenhum trenzinho a menos de 1 km de você.");
    const refresh = h("button", { id: "nearby-refresh", type: "button", class: "btn btn-primary" }, icon("target"), "Atualizar");
    el.append(
      h("div", { class: "page-head page-head--split nearby-head" },
        h("div", null, h("h2", { class: "page-title" }, "Perto de mim"), status), refresh),
      queueStatus(), list, empty);
    let pos = null;
    const load = async () => {
      if (!pos) return;
      try {
        const r = await api(`/api/v1/nearby?lat=${pos.latitude}&lon=${pos.longitude}`);
        if (!el.isConnected) return;
        status.textContent = `Sua posição: ${fmtNum(pos.latitude, 5)}; ${fmtNum(pos.longitude, 5)} (±${fmtNum(pos.accuracy, 0)} m) · atualizado às ${fmtTime(new Date())}`;
        render(list, empty, r.vehicles);
      } catch (e) {
        status.textContent = navigator.onLine ? "Não foi possível consultar o monitor: " + e.message
          : "Sem conexão: a lista abaixo é a da última consulta.";
      }
    };
    const locate = () => {
      if (!navigator.geolocation) { status.textContent = "Este navegador não informa a localização."; return; }
      navigator.geolocation.getCurrentPosition((p) => { pos = p.coords; load(); }, (err) => {
        status.textContent = err.code === err.PERMISSION_DENIED ? "Permita o acesso à localização para ver os trenzinhos perto de você."
          : "Localização indisponível no momento; tente de novo.";
      }, { enableHighAccuracy: true, timeout: 20000, maximumAge: 10000 });
    };
    refresh.addEventListener("click", locate);
    locate();
    this.timer = setInterval(() => { if (navigator.onLine) locate(); }, REFRESH_MS);
  },
  unmount() {
    clearInterval(this.timer);
  },
};

function render(list, empty, vehicles) {
  empty.hidden = vehicles.length > 0;
  list.replaceChildren(...vehicles.map((v) => {
    const online = v.online === true;
    const place = v.place ? [v.place.street && `${v.place.street} (${fmtNum(v.place.street_m, 0)} m)`,
      v.place.landmark && `perto de ${v.place.landmark} (${fmtNum(v.place.landmark_m, 0)} m)`].filter(Boolean).join(" · ") : "";
    for (const a of v.alerts) rememberAlert(a, v.id);
    return h("li", { class: "nearby-card card", dataset: { vehicle: v.id } },
      h("div", { class: "nearby-title" },
        h("strong", null, v.id), v.licensee ? h("span", { class: "muted small" }, licenseeName(v.licensee)) : null,
        chip(online ? "online" : "offline", online ? "ok" : "neutral", v.last_seen ? "último dado " + fmtAgo(v.last_seen) : "")),
      h("dl", { class: "nearby-now" },
        h("div", null, h("dt", null, "Distância"), h("dd", { class: "nearby-distance" }, fmtValue(v.distance_m, "m", 0))),
        h("div", null, h("dt", null, "Velocidade"), h("dd", { class: "nearby-speed" }, v.speed_kmh != null ? fmtValue(v.speed_kmh, "km/h", 0) : "—")),
        h("div", null, h("dt", null, "Som"), h("dd", { class: "nearby-sound" }, v.laeq_db != null ? fmtValue(v.laeq_db, "dB(A)", 0) : "—"))),
      place ? h("p", { class: "nearby-place small" }, place) : null,
      v.alerts.length ? h("ul", { class: "nearby-alerts" }, v.alerts.map((a) => alertItem(a))) : h("p", { class: "muted small" }, "Sem alertas abertos."));
  }));
}

function alertItem(a) {
  const site = a.site ? `${a.site.name} (${CATEGORIES[a.site.category] || a.site.category || a.site.kind}) a ${fmtValue(a.site.distance_m, "m", 0)}` : "";
  return h("li", { class: "nearby-alert", dataset: { episode: a.id, rule: a.rule } },
    h("div", null, h("strong", null, ruleName(a.rule)), " ", h("span", { class: "muted small" }, "desde " + fmtTime(a.start)),
      site ? h("div", { class: "small" }, "Local: " + site) : null,
      a.verification ? chip("verificação registrada", "ok") : a.needs_verification ? chip("aguarda verificação do agente", "warn") : null),
    h("div", { class: "nearby-actions" },
      h("a", { class: "btn btn-small", href: "#/episodio/" + encodeURIComponent(a.id) }, "Ver"),
      store.hasRole("fiscal") ? h("a", { class: "btn btn-small btn-primary nearby-verify", href: "#/constatar/" + encodeURIComponent(a.id) }, "Constatar") : null));
}
