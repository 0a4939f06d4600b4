// The monitor's API (docs/api.md): JSON requests with the session cookie, and the event stream
// with automatic reconnection and a visible state.

export class ApiError extends Error {
  constructor(status, message) { super(message); this.status = status; }
}

let unauthorized = () => {};
// onUnauthorized sets what happens when a request finds the session gone (expired or ended).
export function onUnauthorized(fn) { unauthorized = fn; }

let leaving = false;

// signOut ends the session and reloads the page on the login form. From its first step no
// request leaves the page: a route the hash change would start, a page's timer or a queue
// would otherwise ask the server after the session ended, and the answer, a 401, is an error
// in the console and a toast on the way out. The hash is cleared with history.replaceState,
// which fires no hashchange.
export async function signOut(stream) {
  leaving = true;
  if (stream) stream.stop();
  try {
    await fetch("/api/v1/logout", { method: "POST", credentials: "same-origin", headers: { Accept: "application/json" } });
  } catch { /* leaving anyway */ }
  backToLogin();
}

// backToLogin reloads the page, without its hash, on the login form: the session has ended or
// was found gone.
export function backToLogin() {
  leaving = true;
  history.replaceState(null, "", location.pathname + location.search);
  location.reload();
}

// api(path, {method, body, signal}) sends body as JSON (a FormData as multipart/form-data);
// {raw, contentType} send a text body as it is (e.g. a CSV file). The error thrown on a non-2xx answer carries the status and, when the
// server sent them, the field problems of a 422 (error.fields: [{path, message}]).
export async function api(path, { method = "GET", body, raw, contentType, signal } = {}) {
  if (leaving) throw new ApiError(0, "Saindo do sistema.");
  const opts = { method, credentials: "same-origin", headers: { Accept: "application/json" }, signal };
  if (raw !== undefined) {
    opts.headers["Content-Type"] = contentType || "text/plain;charset=utf-8";
    opts.body = raw;
  } else if (body instanceof FormData) {
    opts.body = body; // the browser sets the multipart boundary
  } else if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  let r;
  try {
    r = await fetch(path, opts);
  } catch (e) {
    if (e.name === "AbortError") throw e;
    throw new ApiError(0, "Sem conexão com o servidor. Verifique a rede e tente de novo.");
  }
  const data = await r.json().catch(() => ({}));
  if (!r.ok) {
    if (r.status === 401 && path !== "/api/v1/login" && !leaving) unauthorized();
    const err = new ApiError(r.status, data.error || `Erro ${r.status} do servidor`);
    if (Array.isArray(data.fields)) err.fields = data.fields;
    throw err;
  }
  return data;
}

// listAll follows next_cursor until the list ends or max items have come.
export async function listAll(path, max = 5000) {
  const sep = path.includes("?") ? "&" : "?";
  let items = [], cursor = "";
  for (;;) {
    const page = await api(path + sep + "limit=1000" + (cursor ? "&cursor=" + encodeURIComponent(cursor) : ""));
    items = items.concat(page.items || []);
    if (!page.next_cursor || items.length >= max) return items;
    cursor = page.next_cursor;
  }
}

// Stream is GET /api/v1/stream. The browser reconnects by itself after a network error; when
// the server refuses the stream (an error status), EventSource gives up and Stream starts a new
// one with backoff. Every (re)connection fires "resync" so that the page reloads what it may
// have missed. "state" events carry connecting | live | reconnecting.
export class Stream extends EventTarget {
  constructor(url, events) {
    super();
    this.url = url;
    this.events = events;
    this.es = null;
    this.state = "connecting";
    this.backoff = 2000;
    this.timer = 0;
    this.connectedOnce = false;
  }
  start() {
    this.stop();
    this.es = new EventSource(this.url);
    this.es.addEventListener("open", () => {
      this.backoff = 2000;
      this.setState("live");
      if (this.connectedOnce) this.dispatchEvent(new Event("resync"));
      this.connectedOnce = true;
    });
    this.es.addEventListener("error", () => {
      if (this.es.readyState === EventSource.CLOSED) {
        this.setState("reconnecting");
        this.es.close();
        clearTimeout(this.timer);
        this.timer = setTimeout(() => this.reconnect(), this.backoff);
        this.backoff = Math.min(this.backoff * 2, 30000);
      } else {
        this.setState("reconnecting");
      }
    });
    for (const name of this.events) {
      this.es.addEventListener(name, (ev) => {
        let data;
        try { data = JSON.parse(ev.data); } catch { return; }
        this.dispatchEvent(new CustomEvent("message", { detail: { type: name, data } }));
      });
    }
  }
  async reconnect() {
    // Ask whether the session still exists (always 200) before reopening the stream.
    try {
      const s = await api("/api/v1/session");
      if (!s.authenticated) { unauthorized(); return; }
    } catch {
      this.timer = setTimeout(() => this.reconnect(), this.backoff);
      this.backoff = Math.min(this.backoff * 2, 30000);
      return;
    }
    this.start();
  }
  stop() {
    clearTimeout(this.timer);
    if (this.es) { this.es.close(); this.es = null; }
  }
  setState(s) {
    if (s === this.state) return;
    this.state = s;
    this.dispatchEvent(new CustomEvent("state", { detail: s }));
  }
}

// superseding is for a view whose loads can overlap (a tab, then a filter, chosen while the
// first load is still on its way): each call begins a load and returns a check that stays true
// until a later load begins, so that only the last load's answer is shown, whichever answers
// last.
export function superseding() {
  let n = 0;
  return () => {
    const mine = ++n;
    return () => mine === n;
  };
}
