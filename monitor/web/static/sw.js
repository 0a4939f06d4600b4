// The dashboard's service worker: it keeps the app shell (the page, its modules, styles, icons
// and vendored libraries) so that the installed dashboard opens without a network, and nothing
// else. The monitor fills in VERSION (a hash of the shell) and SHELL (its files) when it serves
// this file, so that any change to the dashboard installs a new worker with a new cache.
//
// API answers are never cached, except two that hold no personal data and let the map draw
// offline (the map settings and the geofences): those are network-first with the last copy as
// the fallback. Everything else under /api/ — vehicles, episodes, photos, the stream — goes to
// the network untouched, as do the public pages (/v/, /transparencia).

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
