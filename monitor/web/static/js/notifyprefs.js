// Perfil → Notificações: what the signed-in user receives and where (GET/PUT
// /api/v1/me/notifications), and the in-browser notifications (Notification API) of this
// browser. The server sends e-mail and Telegram by these preferences; the page shows a system
// notification for a new episode that passes the same filters while the dashboard is open.

import { store } from "./store.js";
import { api } from "./api.js";
import { h, field, chip } from "./dom.js";
import { ruleName, fmtTime, AUDIT_ACTIONS } from "./fmt.js";
import { peakText, whereText } from "./alerts.js";
import { toastOk } from "./toast.js";
import { pushCard } from "./push.js";
import { passwordCard } from "./password.js";

// The audit log's names of the notification actions (kept here, with their feature).
Object.assign(AUDIT_ACTIONS, {
  "notify.prefs.set": "Preferências de notificação alteradas", "notify.shift.add": "Plantão incluído na escala",
  "notify.shift.delete": "Plantão removido da escala", "notify.dead_letters.list": "Consulta aos avisos não entregues",
  "notify.dead_letter.retry": "Reenvio de aviso não entregue",
  "notify.push.add": "Aparelho inscrito nos avisos push", "notify.push.delete": "Aparelho removido dos avisos push",
  "notify.push.gone": "Aparelho removido dos avisos push (inscrição encerrada pelo navegador)",
});

const SEVERITIES = { "": "Todas", low: "Baixa ou maior", medium: "Média ou maior", high: "Somente alta" };
const SEVERITY_RANK = { low: 1, medium: 2, high: 3 };
const CHANNELS = { email: "E-mail", telegram: "Telegram", webpush: "Push (aplicativo instalado)" };
const SOURCES = {
  saved: "Preferências salvas por você.",
  file: "Preferências iniciais definidas pela administração do servidor; ao salvar, as suas passam a valer.",
  none: "Você ainda não escolheu preferências.",
};
// The browser's choice is this browser's: the permission is granted per browser and device.
const BROWSER_KEY = "trenzinho.browserNotify";

let current = null; // the answer of GET /api/v1/me/notifications

// loadPrefs reads the user's preferences for the in-browser notifications; a failure leaves
// them off until the next load.
async function loadPrefs() {
  try { current = await api("/api/v1/me/notifications"); } catch { current = null; }
  return current;
}

const browserSupported = () => typeof window.Notification === "function";
const browserEnabled = () => localStorage.getItem(BROWSER_KEY) === "on" && browserSupported() && Notification.permission === "granted";

// minutesIn: the minutes since midnight of t in the time zone tz.
function minutesIn(t, tz) {
  const parts = new Intl.DateTimeFormat("en-GB", { timeZone: tz, hour: "2-digit", minute: "2-digit", hourCycle: "h23" }).formatToParts(t);
  const get = (k) => Number(parts.find((p) => p.type === k).value);
  return get("hour") * 60 + get("minute");
}

// quietNow: the quiet hours "22:00-07:00" cover t (From inclusive, To exclusive, wrapping
// midnight), as the server judges them.
export function quietCovers(quiet, t, tz) {
  const m = /^(\d{2}):(\d{2})-(\d{2}):(\d{2})$/.exec(quiet || "");
  if (!m) return false;
  const from = +m[1] * 60 + +m[2], to = +m[3] * 60 + +m[4], now = minutesIn(t, tz);
  if (from === to) return false;
  return from < to ? now >= from && now < to : now >= from || now < to;
}

// matches: the episode passes the user's filters (rules, vehicles or licensees, minimum
// severity) and their quiet hours do not cover now. Being on duty is the server's business
// (messages); the page only shows what the person chose to see.
export function matches(p, e, severities, tz, now = new Date()) {
  const sev = SEVERITY_RANK[(severities || {})[e.rule]] || SEVERITY_RANK.medium;
  if (p.min_severity && sev < SEVERITY_RANK[p.min_severity]) return false;
  if (p.rules.length && !p.rules.includes(e.rule)) return false;
  if (p.vehicles.length || p.licensees.length) {
    const v = store.vehicles.get(e.vehicle);
    const lic = (v && v.licensee) || "";
    if (!p.vehicles.includes(e.vehicle) && !(lic && p.licensees.includes(lic))) return false;
  }
  return !quietCovers(p.quiet_hours, now, tz);
}

// initBrowserNotifications shows a system notification for each new episode that matches.
export function initBrowserNotifications() {
  loadPrefs();
  store.on("episode", ({ episode: e, isNewAlert }) => {
    if (!isNewAlert || !current || !browserEnabled()) return;
    if (!matches(current.prefs, e, current.severities, current.time_zone)) return;
    const where = whereText(e);
    try {
      const n = new Notification("Novo alerta: " + ruleName(e.rule), {
        body: `${e.vehicle} · ${peakText(e)} · ${fmtTime(e.start)}` + (where ? `\n${where}` : ""),
        tag: e.id, lang: "pt-BR", icon: "favicon.svg",
      });
      n.onclick = () => { window.focus(); location.hash = "#/episodio/" + encodeURIComponent(e.id); n.close(); };
    } catch { /* a browser that allows notifications only from a service worker: the toast remains */ }
  });
}

const splitList = (s) => s.split(/[\s,;]+/).map((x) => x.trim()).filter(Boolean);

export const profileView = {
  title: "Perfil",
  async mount(el) {
    const msg = h("p", { class: "form-msg", role: "status", id: "np-msg" });
    const say = (text, ok = true) => { msg.textContent = text; msg.className = "form-msg " + (ok ? "is-ok" : "is-error"); };
    const card = h("section", { class: "card", id: "notify-prefs", "aria-labelledby": "np-title" },
      h("h2", { class: "card-title", id: "np-title" }, "Notificações"), h("p", { class: "muted" }, "Carregando…"));
    el.append(
      h("div", { class: "page-head" }, h("p", { class: "lead" }, `${store.user.name} — escolha quais alertas receber, onde e quando, e altere a sua senha.`)),
      card, browserCard(), passwordCard());
    const data = await loadPrefs();
    if (!data) { card.replaceChildren(h("h2", { class: "card-title" }, "Notificações"), h("p", { class: "form-msg is-error" }, "Não foi possível carregar as preferências.")); return; }
    const p = data.prefs;
    const email = h("input", { id: "np-email", type: "email", maxlength: "254", autocomplete: "email", value: p.email });
    const telegram = h("input", { id: "np-telegram", maxlength: "33", autocomplete: "off", inputmode: "text", value: p.telegram, placeholder: "ex.: 123456789" });
    const channels = Object.entries(CHANNELS).filter(([k]) => data.channels.includes(k)).map(([k, v]) =>
      h("label", { class: "check" }, h("input", { type: "checkbox", name: "channel", value: k, checked: !p.channels.length || p.channels.includes(k) }), h("span", null, v)));
    const severity = h("select", { id: "np-severity" }, Object.entries(SEVERITIES).map(([k, v]) => h("option", { value: k, selected: k === (p.min_severity || "") }, v)));
    // The rules the server knows (its severities), in the dashboard's names.
    const rules = Object.keys(data.severities).map((k) => [k, ruleName(k)]).sort((a, b) => a[1].localeCompare(b[1], "pt-BR")).map(([k, v]) =>
      h("label", { class: "check check--top" }, h("input", { type: "checkbox", name: "rule", value: k, checked: p.rules.includes(k) }),
        h("span", null, v, h("small", { class: "muted block" }, "gravidade " + ({ low: "baixa", medium: "média", high: "alta" }[data.severities[k]] || "média")))));
    const vehicles = h("input", { id: "np-vehicles", autocomplete: "off", value: p.vehicles.join(", "), placeholder: "ex.: PIU-001, PIU-002", list: "np-vehicle-list" });
    const vehicleList = h("datalist", { id: "np-vehicle-list" }, [...store.vehicles.keys()].sort().map((v) => h("option", { value: v })));
    const licensees = h("input", { id: "np-licensees", autocomplete: "off", value: p.licensees.join(", "), placeholder: "códigos do cadastro, ex.: L1" });
    const [qf, qt] = (p.quiet_hours || "-").split("-");
    const quietFrom = h("input", { id: "np-quiet-from", type: "time", value: qf || "" });
    const quietTo = h("input", { id: "np-quiet-to", type: "time", value: qt || "" });
    const onDutyOnly = h("input", { id: "np-onduty", type: "checkbox", checked: p.on_duty_only });
    const source = h("p", { class: "muted small", id: "np-source" }, SOURCES[data.source] || "");
    const form = h("form", { id: "np-form", onsubmit: async (ev) => {
      ev.preventDefault();
      if (!!quietFrom.value !== !!quietTo.value) { say("Informe o início e o fim do horário de silêncio, ou deixe os dois vazios.", false); return; }
      const chosen = [...form.querySelectorAll('input[name="channel"]:checked')].map((i) => i.value);
      const body = {
        email: email.value.trim(), telegram: telegram.value.trim(),
        rules: [...form.querySelectorAll('input[name="rule"]:checked')].map((i) => i.value),
        vehicles: splitList(vehicles.value), licensees: splitList(licensees.value),
        min_severity: severity.value,
        // Every channel ticked is "all" (and takes a channel the server adds later).
        channels: chosen.length === channels.length ? [] : chosen,
        quiet_hours: quietFrom.value ? `${quietFrom.value}-${quietTo.value}` : "",
        on_duty_only: onDutyOnly.checked,
      };
      if (channels.length && !chosen.length) { say("Escolha ao menos um canal.", false); return; }
      try {
        current = await api("/api/v1/me/notifications", { method: "PUT", body });
        source.textContent = SOURCES[current.source];
        say("Preferências salvas.");
        toastOk("Preferências de notificação salvas.");
      } catch (e) {
        say(e.fields ? e.fields.map((f) => `${f.path}: ${f.message}`).join("; ") : e.message, false);
      }
    } },
    source,
    h("fieldset", { class: "np-group" }, h("legend", null, "Onde receber"),
      data.channels.length ? null : h("p", { class: "muted small" }, "Este servidor não envia mensagens (e-mail, Telegram); os endereços ficam guardados para quando enviar."),
      h("div", { class: "toolbar" }, field("E-mail", email), field("Chat do Telegram", telegram, "o número do chat com o robô do monitor")),
      channels.length ? h("div", { class: "np-channels" }, h("span", { class: "muted small" }, "Canais: "), channels) : null),
    h("fieldset", { class: "np-group" }, h("legend", null, "Quais alertas"),
      h("div", { class: "toolbar" }, field("Gravidade mínima", severity)),
      h("p", { class: "muted small" }, "Regras (nenhuma marcada: todas)"),
      h("div", { class: "np-rules" }, rules),
      h("div", { class: "toolbar" }, vehicleList, field("Veículos", vehicles, "vazio: todos"), field("Permissionários", licensees, "vazio: todos"))),
    h("fieldset", { class: "np-group" }, h("legend", null, "Quando"),
      h("div", { class: "toolbar" }, field("Silêncio das", quietFrom), field("até", quietTo)),
      h("p", { class: "muted small" }, `Horário de ${data.time_zone === "America/Sao_Paulo" ? "Brasília" : data.time_zone}. No silêncio nada é enviado, exceto se você estiver de plantão; os alertas continuam no painel.`),
      h("label", { class: "check" }, onDutyOnly, h("span", null, "Receber mensagens somente durante os meus plantões"))),
    h("div", { class: "btn-row" }, h("button", { type: "submit", class: "btn btn-primary", id: "np-save" }, "Salvar preferências")), msg);
    card.replaceChildren(h("h2", { class: "card-title", id: "np-title" }, "Notificações"), form);
    // Web Push to this device, when the server sends it.
    if (data.push) card.after(pushCard(data.push));
  },
};

// browserCard: turning the in-browser notifications on and off in this browser.
function browserCard() {
  const state = h("p", { id: "bn-state", role: "status" });
  const toggle = h("button", { type: "button", class: "btn", id: "bn-toggle" });
  const paint = () => {
    if (!browserSupported()) {
      state.replaceChildren(chip("indisponível", "neutral"), " Este navegador não oferece notificações.");
      toggle.hidden = true;
      return;
    }
    const on = browserEnabled();
    const denied = Notification.permission === "denied";
    state.replaceChildren(on ? chip("ativadas", "ok") : chip("desativadas", "neutral"),
      denied ? " O navegador bloqueou as notificações deste site: libere-as nas configurações do navegador." : on
        ? " Um novo alerta que combine com as suas preferências aparece como notificação do sistema enquanto o painel estiver aberto."
        : " Ative para ver os novos alertas como notificação do sistema enquanto o painel estiver aberto.");
    toggle.textContent = on ? "Desativar neste navegador" : "Ativar neste navegador";
    toggle.disabled = denied;
  };
  toggle.addEventListener("click", async () => {
    if (browserEnabled()) {
      localStorage.setItem(BROWSER_KEY, "off");
    } else {
      const perm = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
      localStorage.setItem(BROWSER_KEY, perm === "granted" ? "on" : "off");
    }
    paint();
  });
  paint();
  return h("section", { class: "card", id: "browser-notify", "aria-labelledby": "bn-title" },
    h("h2", { class: "card-title", id: "bn-title" }, "Notificações no navegador"), state, h("div", { class: "btn-row" }, toggle),
    h("p", { class: "muted small" }, "Vale só para este navegador. O som dos alertas é ligado e desligado pelo botão de som no alto da página."));
}
