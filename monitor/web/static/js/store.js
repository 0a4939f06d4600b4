// The page's state: the fleet, the episodes and the drafts, loaded from the API when the page
// opens (and after every reconnection of the stream) and kept up to date by the stream.

import { api, listAll } from "./api.js";

export const ONLINE_WINDOW_MS = 120000; // as the monitor: a batch within 2 min

class Store extends EventTarget {
  constructor() {
    super();
    this.user = null;
    this.config = {};
    this.vehicles = new Map();
    this.episodes = new Map();
    this.drafts = new Map();
    this.unseenAlerts = 0;
    this.loaded = false;
  }

  emit(type, detail) { this.dispatchEvent(new CustomEvent(type, { detail })); }
  on(type, fn) {
    const h = (e) => fn(e.detail);
    this.addEventListener(type, h);
    return () => this.removeEventListener(type, h);
  }

  async loadAll() {
    const [vs, open, recent, drafts] = await Promise.all([
      listAll("/api/v1/vehicles"),
      listAll("/api/v1/episodes?open=true", 1000),
      api("/api/v1/episodes?limit=300").then((p) => p.items),
      listAll("/api/v1/drafts?status=draft", 2000),
    ]);
    this.vehicles.clear();
    for (const v of vs) this.vehicles.set(v.id, v);
    this.episodes.clear();
    for (const e of recent.concat(open)) this.episodes.set(e.id, e);
    // Decided drafts stay known once seen; pending ones are reloaded.
    for (const [id, d] of this.drafts) if (d.status === "draft") this.drafts.delete(id);
    for (const d of drafts) this.drafts.set(d.id, d);
    this.loaded = true;
    this.emit("reset");
  }

  applyPosition(v) {
    const old = this.vehicles.get(v.id);
    // The live stream carries the judge's view; the version the monitor issued comes with the
    // fleet API's list only.
    if (old && v.config_current == null && old.config_current != null) v.config_current = old.config_current;
    this.vehicles.set(v.id, v);
    this.emit("vehicle", { vehicle: v, isNew: !old });
  }

  applyEpisode(e) {
    const event = e.event;
    delete e.event;
    const old = this.episodes.get(e.id);
    this.episodes.set(e.id, e);
    // Keep the vehicle's open episodes in step without waiting for its next position.
    const v = this.vehicles.get(e.vehicle);
    if (v) {
      const ids = new Set(v.open_episodes || []);
      if (e.end) ids.delete(e.id); else ids.add(e.id);
      v.open_episodes = [...ids];
    }
    const isNewAlert = event === "open" && !old;
    if (isNewAlert) this.unseenAlerts++;
    this.emit("episode", { episode: e, event, isNewAlert });
  }

  applyDraft(d) {
    const old = this.drafts.get(d.id) || {};
    const merged = { ...old, ...d };
    if (!merged.status) merged.status = "draft";
    this.drafts.set(d.id, merged);
    this.emit("draft", { draft: merged, isNew: !old.id });
  }

  pendingDrafts() { return [...this.drafts.values()].filter((d) => d.status === "draft").length; }
  openEpisodes() { return [...this.episodes.values()].filter((e) => !e.end); }
  draftForEpisode(id) { return [...this.drafts.values()].find((d) => (d.episode_ids || []).includes(id)); }
  hasRole(role) {
    const rank = { viewer: 1, fiscal: 2, supervisor: 3, autoridade: 4, admin: 5 };
    return this.user && rank[this.user.role] >= rank[role];
  }
}

export const store = new Store();

// isOnline: the monitor said online and its last batch is recent (the page ages it itself).
export function isOnline(v, now = Date.now()) {
  if (v.online === false || !v.last_seen) return false;
  return now - Date.parse(v.last_seen) < ONLINE_WINDOW_MS;
}

// vehicleState is the colour of a vehicle: offline, alert (an open episode), service, idle.
export function vehicleState(v, now = Date.now()) {
  if (!isOnline(v, now)) return "offline";
  if (v.open_episodes && v.open_episodes.length) return "alert";
  if (v.in_service) return "service";
  return v.in_service === false ? "idle" : "online";
}
export const STATE_LABELS = { offline: "Desconectado", alert: "Em infração", service: "Em serviço", idle: "Fora de serviço", online: "Conectado" };

export function deviceFaults(v) {
  return Object.entries(v.devices || {}).filter(([, s]) => s !== "ok");
}
