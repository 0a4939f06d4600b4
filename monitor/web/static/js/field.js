// Constatação em campo: the agent confirms on the phone what they see of an episode (music
// audible? passengers boarding?), with photos from the camera. Each item is signed with the
// session's key and timestamped when the agent records it, then kept in IndexedDB until the
// monitor has it: made offline, it is sent when the network returns (docs/api.md).
//
// The signature (HMAC-SHA256 under the key the monitor handed this session at login) is evidence
// of which session recorded the item and that its capture time, answers, note and photos were
// not changed afterwards on the way; it is not proof against a compromised phone, whose holder
// could sign whatever time and answers they like (docs/operations.md).

import { api, ApiError } from "./api.js";
import { store } from "./store.js";
import { h, icon, chip } from "./dom.js";
import { fmtDateTime, fmtNum, ruleName } from "./fmt.js";
import { toastOk, toastError } from "./toast.js";

const DB_NAME = "trenzinho-campo";
const QUEUE = "fila";

// The key of the current session: {session, key (CryptoKey)}; set at login (setFieldKey).
let sessionKey = null;

// setFieldKey imports the key of GET /api/v1/session (field_key) for signing; null when the
// user cannot record verifications.
export async function setFieldKey(fk) {
  sessionKey = null;
  if (!fk || !crypto.subtle) return;
  const raw = Uint8Array.from(atob(fk.key), (c) => c.charCodeAt(0));
  sessionKey = { session: fk.session, key: await crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]) };
}

function openDB() {
  return new Promise((resolve, reject) => {
    const req = indexedDB.open(DB_NAME, 1);
    req.onupgradeneeded = () => req.result.createObjectStore(QUEUE, { keyPath: "client_id" });
    req.onsuccess = () => resolve(req.result);
    req.onerror = () => reject(req.error);
  });
}

async function tx(mode, fn) {
  const db = await openDB();
  try {
    return await new Promise((resolve, reject) => {
      const t = db.transaction(QUEUE, mode);
      const out = fn(t.objectStore(QUEUE));
      t.oncomplete = () => resolve(out && "result" in out ? out.result : undefined);
      t.onerror = () => reject(t.error);
      t.onabort = () => reject(t.error);
    });
  } finally {
    db.close();
  }
}

const queued = () => tx("readonly", (s) => s.getAll());
const putItem = (item) => tx("readwrite", (s) => s.put(item));
const deleteItem = (id) => tx("readwrite", (s) => s.delete(id));

const hex = (buf) => [...new Uint8Array(buf)].map((b) => b.toString(16).padStart(2, "0")).join("");

// fieldMessage is what the signature covers, byte for byte as the monitor rebuilds it
// (monitor/api/field.go): each field as "<length in bytes>:<value>\n".
function fieldMessage(item) {
  const enc = new TextEncoder();
  const b = (v) => (v == null ? "" : String(v));
  const fields = ["trenzinho-constatacao-v1", item.episode, item.kind, item.captured_at, b(item.music_audible),
    b(item.boarding), item.note, item.photos.map((p) => p.sha256).join(","), item.client_id];
  return enc.encode(fields.map((f) => `${enc.encode(f).length}:${f}\n`).join(""));
}

// record makes a queued item of the form's answers, signed now, and tries to send it.
export async function record({ episode, unit, music, boarding, note, files }) {
  if (!crypto.subtle) throw new Error("A constatação exige conexão segura (HTTPS) com o monitor.");
  if (!sessionKey) throw new Error("Esta sessão não pode registrar constatações (perfil de fiscal necessário).");
  const photos = [];
  for (const f of files) {
    if (!["image/jpeg", "image/png"].includes(f.type)) throw new Error(`${f.name}: a foto deve ser JPEG ou PNG.`);
    photos.push({ sha256: hex(await crypto.subtle.digest("SHA-256", await f.arrayBuffer())), type: f.type, blob: f });
  }
  const item = {
    client_id: crypto.randomUUID(),
    episode,
    kind: music === true && unit === "dB(A)" ? "music_audible" : "field_observation",
    captured_at: new Date().toISOString(),
    music_audible: music,
    boarding,
    note,
    photos,
    user: store.user && store.user.name,
    state: "pending",
  };
  const sig = await crypto.subtle.sign("HMAC", sessionKey.key, fieldMessage(item));
  item.signature = { session: sessionKey.session, client_id: item.client_id, hmac: btoa(String.fromCharCode(...new Uint8Array(sig))) };
  await putItem(item);
  notify();
  const sent = navigator.onLine ? await flush() : 0;
  return { item, sent: sent > 0 && !(await queued()).some((q) => q.client_id === item.client_id) };
}

let flushing = null;

// flush sends the queued items in capture order: each photo first (the monitor answers its
// SHA-256, which must be the one signed), then the verification. It stops at the first network
// failure; an item the monitor refuses stays queued, marked with the reason. It returns how many
// were delivered.
export function flush() {
  if (!flushing) flushing = doFlush().finally(() => { flushing = null; });
  return flushing;
}

async function doFlush() {
  let sent = 0;
  const items = (await queued()).filter((i) => i.state !== "refused").sort((a, b) => a.captured_at.localeCompare(b.captured_at));
  for (const item of items) {
    if (store.user && item.user && item.user !== store.user.name) continue; // another agent's, kept for them
    try {
      for (const p of item.photos) {
        const got = await api("/api/v1/photos", { method: "POST", raw: p.blob, contentType: p.type });
        if (got.sha256 !== p.sha256) throw new ApiError(422, "o monitor recebeu outra foto (hash diferente)");
      }
      const body = { kind: item.kind, note: item.note, captured_at: item.captured_at, photos: item.photos.map((p) => p.sha256), signature: item.signature };
      if (item.music_audible != null) body.music_audible = item.music_audible;
      if (item.boarding != null) body.boarding = item.boarding;
      const ep = await api("/api/v1/episodes/" + encodeURIComponent(item.episode) + "/verification", { method: "POST", body });
      await deleteItem(item.client_id);
      sent++;
      if (ep && ep.id) store.applyEpisode(ep);
      toastOk(`Constatação de ${fmtDateTime(item.captured_at)} enviada ao monitor.`);
    } catch (e) {
      if (e instanceof ApiError && e.status >= 400 && e.status < 500 && e.status !== 401 && e.status !== 408 && e.status !== 429) {
        item.state = "refused";
        item.error = e.message;
        await putItem(item);
        toastError("Constatação recusada pelo monitor: " + e.message);
        continue;
      }
      break; // no network or session: try again later
    }
  }
  notify();
  return sent;
}

// pendingCount is how many items wait to be sent (or were refused).
export async function pendingItems() {
  try { return await queued(); } catch { return []; }
}

const listeners = new Set();
async function notify() {
  const items = await pendingItems();
  for (const fn of listeners) fn(items);
}
export function onQueue(fn) {
  listeners.add(fn);
  notify();
  return () => listeners.delete(fn);
}

// queueStatus is an element that says how many constatações wait on this phone.
export function queueStatus() {
  const el = h("p", { id: "field-queue", class: "field-queue", role: "status", "aria-live": "polite" });
  const off = onQueue((items) => {
    if (!el.isConnected && el.dataset.mounted) { off(); return; }
    el.dataset.mounted = "1";
    const waiting = items.filter((i) => i.state !== "refused").length;
    const refused = items.length - waiting;
    el.dataset.pending = String(waiting);
    el.replaceChildren();
    el.hidden = items.length === 0;
    if (waiting) el.append(icon("clock"), ` ${waiting} constatação(ões) aguardando conexão para envio.`);
    if (refused) el.append(" ", chip(`${refused} recusada(s)`, "danger", items.filter((i) => i.state === "refused").map((i) => i.error).join("; ")));
  });
  return el;
}

// Send when the network returns, and now and then while items wait.
export function startQueue() {
  window.addEventListener("online", () => { flush(); });
  setInterval(() => { if (navigator.onLine) flush(); }, 30000);
  if (navigator.onLine) flush();
}

// fieldView is the route #/constatar/<episode id>: the form, made for a phone.
export const fieldView = {
  title: "Constatação em campo",
  async mount(el, arg) {
    const id = decodeURIComponent(arg || "");
    const e = store.episodes.get(id) || nearbyEpisode(id) || { id };
    const preview = h("div", { class: "field-previews" });
    const status = h("p", { id: "field-status", class: "field-status", role: "status", "aria-live": "polite" });
    const yesNo = (name, legend) => h("fieldset", { class: "field-yesno" }, h("legend", null, legend),
      ...[["sim", "Sim"], ["nao", "Não"], ["", "Não sei"]].map(([v, label]) =>
        h("label", { class: "choice" }, h("input", { type: "radio", name, value: v, checked: v === "" }), label)));
    const files = h("input", { id: "field-photos", name: "fotos", type: "file", accept: "image/jpeg,image/png", capture: "environment", multiple: true });
    files.addEventListener("change", () => {
      preview.replaceChildren(...[...files.files].map((f) => h("span", { class: "chip chip--neutral" }, `${f.name} (${fmtNum(f.size / 1024, 0)} KiB)`)));
    });
    const form = h("form", { id: "field-form", class: "card field-form" },
      h("p", { class: "muted" }, e.vehicle ? `${ruleName(e.rule)} — ${e.vehicle}` : `Episódio ${id}`),
      yesNo("music", "Música audível?"),
      yesNo("boarding", "Embarque ou desembarque de passageiros?"),
      h("div", { class: "field" }, h("label", { for: "field-note" }, "O que você constatou"),
        h("textarea", { id: "field-note", name: "note", rows: 4, maxlength: 2000, required: true, minlength: 10,
          placeholder: "Ex.: música alta no sistema de som, ouvida da calçada da Av. Beira-Mar" })),
      h("div", { class: "field" }, h("label", { for: "field-photos" }, icon("upload"), " Fotos (câmera)"), files, preview),
      h("button", { id: "field-submit", type: "submit", class: "btn btn-primary btn-block" }, "Registrar constatação"),
      status);
    form.addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const f = new FormData(form);
      const answer = (v) => (v === "sim" ? true : v === "nao" ? false : null);
      const btn = form.querySelector("#field-submit");
      btn.disabled = true;
      status.className = "field-status";
      try {
        const { sent } = await record({ episode: id, unit: e.unit, music: answer(f.get("music")), boarding: answer(f.get("boarding")),
          note: String(f.get("note") || "").trim(), files: [...files.files] });
        status.dataset.state = sent ? "sent" : "queued";
        status.textContent = sent ? "Constatação registrada no episódio."
          : "Sem conexão: a constatação foi guardada neste aparelho e será enviada automaticamente quando a rede voltar.";
        form.reset();
        preview.replaceChildren();
      } catch (err) {
        status.dataset.state = "error";
        status.className = "field-status form-error";
        status.textContent = err.message;
      } finally {
        btn.disabled = false;
      }
    });
    el.append(h("div", { class: "page-head" },
      h("a", { class: "back-link", href: "#/perto" }, icon("back"), "Perto de mim"),
      h("h2", { class: "page-title" }, "Constatação em campo")),
    queueStatus(), form,
    h("p", { class: "muted small" }, "A hora registrada é a do aparelho no momento do registro; o monitor guarda também a hora em que recebeu. ",
      h("a", { href: "#/episodio/" + encodeURIComponent(id) }, "Ver o episódio")));
  },
};

// The nearby view keeps the alerts it listed, so that the form knows them offline.
const nearbyAlerts = new Map();
export function rememberAlert(a, vehicle) { nearbyAlerts.set(a.id, { ...a, vehicle }); }
function nearbyEpisode(id) { return nearbyAlerts.get(id); }

const VERIFY_KINDS = { music_audible: "Música confirmada pelo agente", nbr10151_measurement: "Medição NBR 10151", field_observation: "Constatação em campo" };
const yesNoText = (v) => (v == null ? "não informado" : v ? "sim" : "não");

// verificationCard shows an episode's recorded verification: who, when it was captured (the
// phone's clock) and received (the monitor's), the answers, the signature and the photos with
// what their EXIF states.
export function verificationCard(e) {
  const v = e.verification;
  const actions = store.hasRole("fiscal") ? h("a", { class: "btn btn-small", href: "#/constatar/" + encodeURIComponent(e.id) }, icon("plus"), "Constatação em campo") : null;
  if (!v) {
    return h("section", { class: "card", id: "verification" }, h("div", { class: "card-head" }, h("h3", { class: "card-title" }, "Verificação do agente"), actions),
      h("p", { class: "muted" }, e.needs_verification ? "Aguardando a verificação do agente no local." : "Nenhuma verificação registrada."));
  }
  const facts = h("dl", { class: "facts" });
  const add = (k, val) => { if (val != null && val !== "") facts.append(h("dt", null, k), h("dd", null, val)); };
  add("Tipo", VERIFY_KINDS[v.kind] || v.kind);
  add("Agente", v.by);
  if (v.captured_at) add("Constatada em", h("span", { id: "verification-captured" }, fmtDateTime(v.captured_at), " ", h("span", { class: "muted" }, "(relógio do aparelho)")));
  add("Recebida pelo monitor", h("span", { id: "verification-received" }, fmtDateTime(v.at)));
  if (v.music_audible != null || v.kind !== "nbr10151_measurement") add("Música audível", yesNoText(v.music_audible));
  if (v.boarding != null) add("Embarque/desembarque", yesNoText(v.boarding));
  add("Relato", v.note);
  if (v.measurement) {
    const m = v.measurement;
    const corrected = m.corrected_db ? `, corrigido ${fmtNum(m.corrected_db)}` : "";
    add("Medição", `${fmtNum(m.laeq_db)} dB(A) (residual ${fmtNum(m.residual_db)}${corrected}; limite da NBR 10151 para a área e o período, calculado: ${fmtNum(m.limit_db)}) — ${m.meter}`);
  }
  if (v.signature) {
    add("Assinatura", v.signature.verified ? chip("assinada pela sessão do agente", "ok", "HMAC-SHA256 da sessão " + v.signature.session) : chip("assinatura não verificada", "warn"));
  }
  const photos = (v.photos || []).map((p, i) => h("figure", { class: "field-photo", dataset: { sha256: p.sha256 } },
    h("a", { href: "/api/v1/photos/" + p.sha256, target: "_blank", rel: "noopener" },
      h("img", { src: "/api/v1/photos/" + p.sha256, alt: `Foto ${i + 1} da constatação`, loading: "lazy", width: p.width, height: p.height })),
    h("figcaption", null,
      p.exif_taken_at ? `Tirada em ${p.exif_zone_stated ? fmtDateTime(p.exif_taken_at) : p.exif_taken_at.replace("T", " ") + " (fuso não informado)"} segundo o arquivo` : "O arquivo não informa a hora",
      p.exif_lat != null ? ` · posição do arquivo ${fmtNum(p.exif_lat, 5)}; ${fmtNum(p.exif_lon, 5)}` : "",
      ` · recebida ${fmtDateTime(p.received_at)}`,
      h("br"), h("code", { title: "SHA-256 do arquivo" }, p.sha256.slice(0, 16) + "…"))));
  return h("section", { class: "card", id: "verification" },
    h("div", { class: "card-head" }, h("h3", { class: "card-title" }, "Verificação do agente"), actions),
    facts, photos.length ? h("div", { class: "field-photos", id: "verification-photos" }, photos) : null);
}
