// The dashboard's service worker: it keeps the app shell (the page, its modules, styles, icons
// and vendored libraries) so that the installed dashboard opens without a network, and nothing
// else. The monitor fills in VERSION (a hash of the shell) and SHELL (its files) when it serves
// this file, so that any change to the dashboard installs a new worker with a new cache.
//
// API answers are never cached, except two that hold no personal data and let the map draw
// offline (the map settings and the geofences): those are network-first with the last copy as
// the fallback. Everything else under /api/ — vehicles, episodes, photos, the stream — goes to
// the network untouched, as do the public pages (/v/, /transparencia).
//
// Web Push (Perfil → Notificações → "Receber avisos neste aparelho"): the monitor's push
// message is JSON {title, body, url, tag, count} (monitor/notify/webpush); the worker shows it
// as a notification in Portuguese, one per episode (the tag: a later message about the same
// episode replaces the earlier one), and a tap opens the episode in the dashboard, focusing a
// window already open.

const VERSION = "__SHELL_VERSION__";
const SHELL = ["__SHELL_FILES__"];
const SHELL_CACHE = "trenzinho-shell-" + VERSION;
const MAP_CACHE = "trenzinho-mapa";
const MAP_API = new Set(["/api/v1/config", "/api/v1/geofences"]);

self.addEventListener("install", (event) => {
  event.waitUntil(caches.open(SHELL_CACHE).then((c) => c.addAll(SHELL)).then(() => self.skipWaiting()));
});

self.addEventListener("activate", (event) => {
  event.waitUntil((async () => {
    for (const name of await caches.keys()) {
      if (name.startsWith("trenzinho-shell-") && name !== SHELL_CACHE) await caches.delete(name);
    }
    await self.clients.claim();
  })());
});

self.addEventListener("fetch", (event) => {
  const req = event.request;
  if (req.method !== "GET") return;
  const url = new URL(req.url);
  if (url.origin !== self.location.origin) return;
  if (MAP_API.has(url.pathname) && !url.search) {
    event.respondWith(networkFirst(req, MAP_CACHE));
    return;
  }
  if (req.mode === "navigate" && url.pathname === "/") {
    event.respondWith(networkFirst(req, SHELL_CACHE));
    return;
  }
  if (SHELL.includes(url.pathname)) event.respondWith(cacheFirst(req));
});

// networkFirst answers from the network, keeping a copy; without a network, from the copy.
async function networkFirst(req, cacheName) {
  const cache = await caches.open(cacheName);
  try {
    const resp = await fetch(req);
    if (resp.ok) await cache.put(req.url.split("#")[0].split("?")[0], resp.clone());
    return resp;
  } catch (err) {
    const hit = await cache.match(req.url.split("#")[0].split("?")[0]);
    if (hit) return hit;
    throw err;
  }
}

// cacheFirst answers a shell file from this version's cache (filled at install), else from the
// network.
async function cacheFirst(req) {
  const hit = await caches.match(req, { cacheName: SHELL_CACHE, ignoreSearch: true });
  return hit || fetch(req);
}

// pushNotice is what a push message shows. A message that is not the monitor's JSON (or has
// no payload) still shows a notification: a push subscribed with userVisibleOnly must.
function pushNotice(data) {
  let m = {};
  try { m = data ? data.json() : {}; } catch { m = { body: data.text() }; }
  const str = (v, max) => (typeof v === "string" ? v.slice(0, max) : "");
  const title = str(m.title, 200) || "Monitor do trenzinho: novo alerta";
  const count = Number.isInteger(m.count) && m.count > 1 ? m.count : 0;
  return {
    title,
    options: {
      body: str(m.body, 1000) || "Abra o painel para ver os alertas.",
      tag: str(m.tag, 200) || "trenzinho-alerta",
      renotify: Boolean(str(m.tag, 200)),
      lang: "pt-BR",
      dir: "ltr",
      icon: "/icons/icon-192.png",
      badge: "/icons/icon-192.png",
      timestamp: Date.now(),
      data: { url: episodeURL(str(m.url, 2048)), count },
    },
  };
}

// episodeURL is the dashboard address a notification opens: the message's link when it is
// this dashboard's (the monitor's base_url may name another host: its path and hash are kept),
// the dashboard's start otherwise.
function episodeURL(link) {
  const home = new URL("/", self.location.origin);
  if (!link) return home.href;
  try {
    const u = new URL(link, self.location.origin);
    if (u.protocol !== "https:" && u.protocol !== "http:") return home.href;
    return new URL(u.pathname + u.search + u.hash, self.location.origin).href;
  } catch {
    return home.href;
  }
}

self.addEventListener("push", (event) => {
  const { title, options } = pushNotice(event.data);
  event.waitUntil(self.registration.showNotification(title, options));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const url = (event.notification.data && event.notification.data.url) || new URL("/", self.location.origin).href;
  event.waitUntil((async () => {
    const wins = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const open = wins.find((c) => new URL(c.url).origin === self.location.origin);
    if (open) {
      // The dashboard routes by the hash: navigating the open window keeps its session.
      await open.focus();
      if (open.url !== url && "navigate" in open) {
        try { await open.navigate(url); } catch { /* an uncontrolled window: it stays focused */ }
      }
      return;
    }
    await self.clients.openWindow(url);
  })());
});
