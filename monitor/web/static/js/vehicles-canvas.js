// Vehicles drawn on one canvas, for large fleets: hundreds of DOM markers moving every second
// cost the browser more in style, layout and compositing than the whole page else (see the
// 500-vehicle benchmark in internal/e2e/dashboard_test.go). Same look as the DOM markers: a disc
// in the state colour with a white heading arrow, the id beside it, a ring when selected.

const COLORS = { service: "#1e9e57", idle: "#3776d0", online: "#3776d0", alert: "#d63434", offline: "#8893a1" };
const PAD = 0.25; // the canvas covers the view and a quarter of it around, for panning
const HIT_PX = 14;

export class VehicleCanvas {
  constructor(map, { onClick, tooltip }) {
    const L = window.L;
    this.map = map;
    this.items = new Map(); // id → {lat, lon, course, moving, state}
    this.drawn = []; // [id, x, y] in container pixels, from the last draw
    this.labels = true;
    this.selected = null;
    this.onClick = onClick;
    this.tooltipFn = tooltip;
    this.dirty = false;
    this.frame = 0;
    this.lastDraw = 0;
    if (!map.getPane("vehicles")) map.createPane("vehicles").style.zIndex = "600";
    this.canvas = L.DomUtil.create("canvas", "vehicle-canvas", map.getPane("vehicles"));
    this.ctx = this.canvas.getContext("2d");
    this.tip = L.tooltip({ direction: "top", offset: [0, -12] });
    this.handlers = {
      moveend: () => this.reset(),
      zoomstart: () => { this.canvas.hidden = true; },
      zoomend: () => { this.canvas.hidden = false; this.reset(); },
      resize: () => this.reset(),
      click: (e) => { const id = this.hit(e.containerPoint); if (id) this.onClick(id); },
      mousemove: (e) => this.hover(e),
      mouseout: () => this.hover(null),
    };
    map.on(this.handlers);
    this.reset();
  }

  set(id, v) { this.items.set(id, v); this.schedule(); }
  remove(id) { if (this.items.delete(id)) this.schedule(); }
  has(id) { return this.items.has(id); }
  latLng(id) { const v = this.items.get(id); return v ? window.L.latLng(v.lat, v.lon) : null; }
  select(id) { this.selected = id; this.schedule(true); }
  setLabels(on) { this.labels = on; this.schedule(true); }

  destroy() {
    this.map.off(this.handlers);
    cancelAnimationFrame(this.frame);
    this.map.closeTooltip(this.tip);
    this.canvas.remove();
  }

  // reset places the canvas over the view (plus padding) and redraws.
  reset() {
    const L = window.L;
    const size = this.map.getSize();
    const pad = size.multiplyBy(PAD).round();
    this.origin = this.map.containerPointToLayerPoint([0, 0]).subtract(pad);
    this.padPx = pad;
    const w = size.x + 2 * pad.x, h = size.y + 2 * pad.y;
    const dpr = window.devicePixelRatio || 1;
    if (this.canvas.width !== Math.round(w * dpr) || this.canvas.height !== Math.round(h * dpr)) {
      this.canvas.width = Math.round(w * dpr);
      this.canvas.height = Math.round(h * dpr);
      this.canvas.style.width = w + "px";
      this.canvas.style.height = h + "px";
    }
    L.DomUtil.setPosition(this.canvas, this.origin);
    this.draw();
  }

  // schedule redraws at most four times a second while data changes (each vehicle reports once
  // a second); now: at the next frame.
  schedule(now = false) {
    this.dirty = true;
    if (this.frame) return;
    const wait = now ? 0 : Math.max(0, 250 - (performance.now() - this.lastDraw));
    const go = () => { this.frame = requestAnimationFrame(() => { this.frame = 0; if (this.dirty) this.draw(); }); };
    if (wait) { this.frame = -1; setTimeout(() => { this.frame = 0; go(); }, wait); } else go();
  }

  // draw paints the vehicles state by state (offline below, in infraction on top, the selected
  // one last), each a copy of a pre-drawn image: with 2,000 vehicles, several anti-aliased fills
  // per vehicle made each redraw a long task.
  draw() {
    this.dirty = false;
    this.lastDraw = performance.now();
    const { ctx, map } = this;
    const dpr = window.devicePixelRatio || 1;
    ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    const size = map.getSize();
    const showLabels = this.labels && (this.items.size <= 80 || map.getZoom() >= 16);
    ctx.font = "600 11px system-ui, 'Liberation Sans', 'DejaVu Sans', sans-serif";
    ctx.textBaseline = "middle";
    this.drawn = [];
    const layers = STATES.map(() => []);
    let sel = null;
    for (const [id, v] of this.items) {
      const p = map.latLngToContainerPoint([v.lat, v.lon]);
      if (p.x < -this.padPx.x || p.y < -this.padPx.y || p.x > size.x + this.padPx.x || p.y > size.y + this.padPx.y) continue;
      this.drawn.push([id, p.x, p.y]);
      const item = { id, v, x: p.x + this.padPx.x, y: p.y + this.padPx.y };
      if (id === this.selected) sel = item; else layers[RANK[v.state] ?? 0].push(item);
    }
    layers.forEach((items, i) => this.paint(items, STATES[i], showLabels));
    if (sel) this.paint([sel], sel.v.state, showLabels, true);
  }

  // paint draws vehicles of one state: each a copy of a small pre-drawn image (the disc with its
  // arrow, the course rounded to 5°), far cheaper for the browser than anti-aliased paths.
  paint(items, state, showLabels, selected = false) {
    if (!items.length) return;
    const { ctx } = this;
    if (selected || state === "alert") {
      const halo = new Path2D(), r = selected ? 13.5 : 14;
      for (const { x, y } of items) { halo.moveTo(x + r, y); halo.arc(x, y, r, 0, 2 * Math.PI); }
      ctx.fillStyle = selected ? "#ffcc33" : "rgba(214, 52, 52, 0.25)"; ctx.fill(halo);
    }
    const dpr = window.devicePixelRatio || 1;
    for (const { v, x, y } of items) {
      const step = v.moving ? Math.round((((v.course % 360) + 360) % 360) / COURSE_STEP) % (360 / COURSE_STEP) : -1;
      ctx.drawImage(sprite(state, step, dpr), x - SPRITE / 2, y - SPRITE / 2, SPRITE, SPRITE);
    }
    if (!showLabels) return;
    for (const { id, x, y } of items) {
      const w = ctx.measureText(id).width + 12;
      ctx.fillStyle = state === "alert" ? "#d63434" : "rgba(255, 255, 255, 0.94)";
      roundRect(ctx, x + 14, y - 8.5, w, 17, 4); ctx.fill();
      ctx.fillStyle = state === "alert" ? "#fff" : "#16202b";
      ctx.fillText(id, x + 20, y + 0.5);
    }
  }

  hit(pt) {
    let best = null, bestD = HIT_PX * HIT_PX;
    for (const [id, x, y] of this.drawn) {
      const d = (x - pt.x) ** 2 + (y - pt.y) ** 2;
      if (d <= bestD) { best = id; bestD = d; }
    }
    return best;
  }

  hover(e) {
    const now = performance.now();
    if (e && now - (this.lastHover || 0) < 60) return;
    this.lastHover = now;
    const id = e ? this.hit(e.containerPoint) : null;
    this.map.getContainer().classList.toggle("is-over-vehicle", !!id);
    if (!id) { this.map.closeTooltip(this.tip); return; }
    this.tip.setLatLng(this.latLng(id)).setContent(this.tooltipFn(id));
    if (!this.map.hasLayer(this.tip)) this.map.openTooltip(this.tip);
  }
}

// The drawing order of the states, bottom to top.
const STATES = ["offline", "online", "service", "alert"];
const RANK = { offline: 0, online: 1, idle: 1, service: 2, alert: 3 };

// The vehicle images, drawn once per state, course step and pixel ratio.
const SPRITE = 24; // CSS pixels: the disc (radius 10) and its white border
const COURSE_STEP = 5; // degrees
const sprites = new Map();

function sprite(state, step, dpr) {
  const key = `${state}|${step}|${dpr}`;
  let c = sprites.get(key);
  if (c) return c;
  c = document.createElement("canvas");
  c.width = c.height = Math.ceil(SPRITE * dpr);
  const ctx = c.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const x = SPRITE / 2, y = SPRITE / 2;
  ctx.globalAlpha = state === "offline" ? 0.8 : 1;
  ctx.beginPath(); ctx.arc(x, y, 10, 0, 2 * Math.PI);
  ctx.fillStyle = COLORS[state] || COLORS.offline; ctx.fill();
  ctx.lineWidth = 2; ctx.strokeStyle = "#fff"; ctx.stroke();
  ctx.fillStyle = "#fff";
  if (step >= 0) {
    ctx.translate(x, y); ctx.rotate((step * COURSE_STEP * Math.PI) / 180);
    ctx.beginPath(); ctx.moveTo(0, -6.5); ctx.lineTo(5, 6); ctx.lineTo(0, 3); ctx.lineTo(-5, 6); ctx.closePath(); ctx.fill();
  } else {
    ctx.beginPath(); ctx.arc(x, y, 3.5, 0, 2 * Math.PI); ctx.fill();
  }
  sprites.set(key, c);
  return c;
}

function roundRect(ctx, x, y, w, h, r) {
  ctx.beginPath();
  ctx.moveTo(x + r, y); ctx.arcTo(x + w, y, x + w, y + h, r); ctx.arcTo(x + w, y + h, x, y + h, r);
  ctx.arcTo(x, y + h, x, y, r); ctx.arcTo(x, y, x + w, y, r); ctx.closePath();
}
