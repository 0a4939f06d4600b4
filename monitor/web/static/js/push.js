// Web Push on this device (Perfil → Notificações → "Avisos neste aparelho"): the browser
// subscribes through the dashboard's service worker with the monitor's VAPID public key, and
// the subscription is handed to the monitor (POST /api/v1/me/push-subscriptions), which sends
// the user's alerts to it by their preferences; sw.js shows them. The card lists the user's
// devices, each removable; removing this one also unsubscribes the browser.

import { api } from "./api.js";
import { h, chip } from "./dom.js";
import { fmtDate } from "./fmt.js";
import { toastOk } from "./toast.js";
import { registerServiceWorker } from "./pwa.js";

const supported = () => "serviceWorker" in navigator && "PushManager" in window && window.isSecureContext && typeof window.Notification === "function";

// keyBytes decodes the base64url VAPID key for applicationServerKey.
function keyBytes(b64) {
  const s = atob(b64.replace(/-/g, "+").replace(/_/g, "/") + "===".slice((b64.length + 3) % 4));
  return Uint8Array.from(s, (c) => c.charCodeAt(0));
}

const sameKey = (buf, key) => {
  if (!buf) return true; // not exposed: trust the subscription
  const a = new Uint8Array(buf), b = keyBytes(key);
  return a.length === b.length && a.every((v, i) => v === b[i]);
};

// deviceLabel describes this browser for the list of devices ("Android · Chrome").
export function deviceLabel(ua = navigator.userAgent) {
  const os = /Android/.test(ua) ? "Android" : /iPhone|iPad/.test(ua) ? "iOS" : /Windows/.test(ua) ? "Windows"
    : /Mac OS X/.test(ua) ? "macOS" : /CrOS/.test(ua) ? "ChromeOS" : /Linux/.test(ua) ? "Linux" : "aparelho";
  const br = /Edg\//.test(ua) ? "Edge" : /Firefox\//.test(ua) ? "Firefox" : /SamsungBrowser\//.test(ua) ? "Samsung Internet"
    : /Chrome\//.test(ua) ? "Chrome" : /Safari\//.test(ua) ? "Safari" : "navegador";
  return `${os} · ${br}`;
}

// SUBSCRIBE_TIMEOUT bounds the wait for the browser's push service: a browser without one
// (a headless or de-Googled Chromium) may never answer.
const SUBSCRIBE_TIMEOUT = 20000;

function withTimeout(p) {
  let timer;
  const late = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error("o serviço de push do navegador não respondeu")), SUBSCRIBE_TIMEOUT);
  });
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

async function registration() {
  return (await navigator.serviceWorker.getRegistration("/")) || (await registerServiceWorker());
}

// pushCard is the card of the devices; push is the "push" of GET /api/v1/me/notifications.
export function pushCard(push) {
  const state = h("p", { id: "wp-state", role: "status" });
  const msg = h("p", { class: "form-msg", id: "wp-msg", role: "alert" });
  const say = (text, ok = true) => { msg.textContent = text; msg.className = "form-msg " + (ok ? "is-ok" : "is-error"); };
  const subscribe = h("button", { type: "button", class: "btn btn-primary", id: "wp-subscribe" }, "Receber avisos neste aparelho");
  const list = h("ul", { class: "wp-devices", id: "wp-devices" });
  let devices = push.subscriptions;
  let mine = null; // this browser's PushSubscription, if any

  const paint = () => {
    const here = mine && devices.find((d) => d.endpoint === mine.endpoint);
    if (!supported()) {
      state.replaceChildren(chip("indisponível", "neutral"), " Este navegador não recebe avisos push. No celular, instale o painel (\"Adicionar à tela inicial\") e abra-o pelo ícone.");
      subscribe.hidden = true;
    } else if (Notification.permission === "denied") {
      state.replaceChildren(chip("bloqueado", "warn"), " O navegador bloqueou as notificações deste site: libere-as nas configurações do navegador.");
      subscribe.hidden = true;
    } else {
      state.replaceChildren(here ? chip("ativado", "ok") : chip("desativado", "neutral"), here
        ? " Este aparelho recebe os alertas que combinam com as suas preferências, mesmo com o painel fechado."
        : " Ative para receber os alertas neste aparelho mesmo com o painel fechado.");
      subscribe.hidden = Boolean(here);
    }
    list.replaceChildren(...devices.map((d) => h("li", { dataset: { id: String(d.id) } },
      h("span", null, d.label || "aparelho", mine && d.endpoint === mine.endpoint ? h("strong", null, " (este aparelho)") : null,
        h("small", { class: "muted block" }, `desde ${fmtDate(d.created_at)} · ${d.host}`)),
      h("button", { type: "button", class: "btn btn-small", "aria-label": `Remover ${d.label || "aparelho"}`, onclick: () => remove(d) }, "Remover"))));
    if (!devices.length) list.append(h("li", { class: "muted" }, "Nenhum aparelho recebe avisos push."));
  };

  async function remove(d) {
    try {
      await api(`/api/v1/me/push-subscriptions/${d.id}`, { method: "DELETE" });
    } catch (e) {
      if (e.status !== 404) { say(e.message, false); return; }
    }
    devices = devices.filter((x) => x.id !== d.id);
    if (mine && d.endpoint === mine.endpoint) {
      try { await mine.unsubscribe(); } catch { /* the browser forgets it by itself */ }
      mine = null;
    }
    say("Aparelho removido: ele não recebe mais avisos.");
    paint();
  }

  subscribe.addEventListener("click", async () => {
    subscribe.disabled = true;
    try {
      const perm = Notification.permission === "granted" ? "granted" : await Notification.requestPermission();
      if (perm !== "granted") { say("Sem a permissão de notificações o aparelho não pode receber avisos.", false); return; }
      const reg = await registration();
      if (!reg) { say("O painel não pôde instalar o seu serviço neste navegador.", false); return; }
      await navigator.serviceWorker.ready;
      let sub = await reg.pushManager.getSubscription();
      // A subscription made with another key (the server's key changed) cannot be used.
      if (sub && !sameKey(sub.options && sub.options.applicationServerKey, push.public_key)) {
        await sub.unsubscribe();
        sub = null;
      }
      if (!sub) sub = await withTimeout(reg.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(push.public_key) }));
      const saved = await api("/api/v1/me/push-subscriptions", { method: "POST", body: { subscription: sub.toJSON(), label: deviceLabel() } });
      mine = sub;
      devices = devices.filter((x) => x.id !== saved.id && x.endpoint !== saved.endpoint).concat(saved);
      say("Pronto: este aparelho vai receber os avisos.");
      toastOk("Avisos ativados neste aparelho.");
    } catch (e) {
      say(e.fields ? e.fields.map((f) => f.message).join("; ") : `Não foi possível ativar os avisos neste aparelho (${e.message}).`, false);
    } finally {
      subscribe.disabled = false;
      paint();
    }
  });

  paint();
  if (supported()) {
    registration().then((reg) => reg && reg.pushManager.getSubscription()).then((sub) => { mine = sub || null; paint(); }).catch(() => {});
  }
  return h("section", { class: "card", id: "push-notify", "aria-labelledby": "wp-title" },
    h("h2", { class: "card-title", id: "wp-title" }, "Avisos neste aparelho"), state,
    h("div", { class: "btn-row" }, subscribe), msg,
    h("h3", { class: "card-title" }, "Aparelhos que recebem avisos"), list,
    h("p", { class: "muted small" }, `Até ${push.max} aparelhos. Os avisos seguem as preferências acima e incluem o canal "Push" quando ele estiver marcado.`));
}
