// Small DOM helpers: elements are built with h(), never from HTML strings.

const PROPS = new Set(["value", "checked", "disabled", "hidden", "selected", "htmlFor", "open", "indeterminate"]);

// h("button", {class: "btn", onclick: fn, "aria-label": "…"}, "texto", child, [children]).
export function h(tag, props, ...children) {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v == null || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "text") el.textContent = v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
      else if (PROPS.has(k)) el[k] = v;
      else el.setAttribute(k, v === true ? "" : String(v));
    }
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const c of children) {
    if (c == null || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : String(c));
  }
}

const SVG = "http://www.w3.org/2000/svg";

// icon("map") is an <svg> that uses the symbol i-map of icons.svg.
export function icon(name, cls = "icon") {
  const svg = document.createElementNS(SVG, "svg");
  svg.setAttribute("class", cls);
  svg.setAttribute("aria-hidden", "true");
  svg.setAttribute("focusable", "false");
  const use = document.createElementNS(SVG, "use");
  use.setAttribute("href", "icons.svg#i-" + name);
  svg.append(use);
  return svg;
}

export function svgEl(tag, attrs = {}) {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  return el;
}

export const $ = (sel, root = document) => root.querySelector(sel);
export const $$ = (sel, root = document) => [...root.querySelectorAll(sel)];

// chip("Emitido", "ok") is a small status label.
export function chip(text, tone = "neutral", title) {
  return h("span", { class: "chip chip--" + tone, title }, text);
}

// field(label, input) is a labelled form control.
let fieldSeq = 0;
export function field(label, input, hint) {
  if (!input.id) input.id = "f" + (++fieldSeq);
  return h("div", { class: "field" }, h("label", { htmlFor: input.id }, label), input,
    hint ? h("small", { class: "hint" }, hint) : null);
}

// download saves text as a file through a temporary link (no request to the server).
export function download(name, text, type = "text/csv;charset=utf-8") {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = h("a", { href: url, download: name, hidden: true });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// emptyRow is the one row of a table that has nothing to show.
export function emptyRow(cols, text) {
  return h("tr", { class: "empty" }, h("td", { colspan: cols }, text));
}

// dateInput is a text field for a date written dd/mm/aaaa whatever the browser's language
// (a native date input shows the browser's format). input.iso() is "2026-11-29", or "" when
// the field is empty or invalid (then the field is marked invalid).
export function dateInput(iso = "", attrs = {}) {
  const toBR = (s) => (s ? s.split("-").reverse().join("/") : "");
  const input = h("input", { type: "text", inputmode: "numeric", placeholder: "dd/mm/aaaa", autocomplete: "off",
    maxlength: "10", pattern: "\\d{2}/\\d{2}/\\d{4}", value: toBR(iso), class: "date-input", ...attrs });
  input.iso = () => {
    const m = /^(\d{1,2})\/(\d{1,2})\/(\d{4})$/.exec(input.value.trim());
    if (!m) {
      input.setCustomValidity(input.value.trim() ? "Use o formato dd/mm/aaaa" : "");
      return "";
    }
    const [d, mo, y] = [+m[1], +m[2], +m[3]];
    const dt = new Date(Date.UTC(y, mo - 1, d));
    if (dt.getUTCMonth() !== mo - 1 || dt.getUTCDate() !== d) { input.setCustomValidity("Data inexistente"); return ""; }
    input.setCustomValidity("");
    return dt.toISOString().slice(0, 10);
  };
  input.setIso = (s) => { input.value = toBR(s); input.setCustomValidity(""); };
  // Type the slashes for the person: 29112026 → 29/11/2026.
  input.addEventListener("input", () => {
    const digits = input.value.replace(/\D/g, "").slice(0, 8);
    if (/^\d+$/.test(input.value.replace(/\//g, "")) && !input.value.endsWith("/")) {
      const out = digits.length > 4 ? `${digits.slice(0, 2)}/${digits.slice(2, 4)}/${digits.slice(4)}` : digits.length > 2 ? `${digits.slice(0, 2)}/${digits.slice(2)}` : digits;
      if (out !== input.value) input.value = out;
    }
  });
  return input;
}

// tableWrap is the horizontal scroll area of a wide table: reachable with the keyboard (the
// arrow keys scroll it), named for screen readers, and with a shadow on the side that has more.
export function tableWrap(label, table) {
  const wrap = h("div", { class: "table-wrap", tabindex: "0", role: "region", "aria-label": label + " (role para ver todas as colunas)" }, table);
  const outer = h("div", { class: "table-scroll" }, wrap);
  const edges = () => {
    const more = wrap.scrollWidth - wrap.clientWidth > 1;
    // A sticky actions column casts its own shadow: no cue over its buttons.
    const sticky = !!table.querySelector("th.actions");
    outer.classList.toggle("more-right", more && !sticky && wrap.scrollLeft + wrap.clientWidth < wrap.scrollWidth - 1);
    outer.classList.toggle("more-left", more && wrap.scrollLeft > 1);
    wrap.setAttribute("aria-label", more ? label + " (role para ver todas as colunas)" : label);
  };
  wrap.addEventListener("scroll", edges, { passive: true });
  if (typeof ResizeObserver === "function") {
    const ro = new ResizeObserver(edges);
    ro.observe(wrap);
    ro.observe(table);
  }
  return outer;
}

// theadOf(["Data", ["Artigos", "col-low"]]): a header row; a [text, class] pair gives the
// column's class (col-low: hidden on narrow screens, see style.css).
export function theadOf(cols) {
  return h("thead", null, h("tr", null, cols.filter(Boolean).map((c) => Array.isArray(c)
    ? h("th", { scope: "col", class: c[1] }, c[0]) : h("th", { scope: "col" }, c))));
}

// confirmDialog asks in a modal <dialog>; resolves true on confirmation.
export function confirmDialog(title, text, confirmLabel) {
  return new Promise((resolve) => {
    const yes = h("button", { type: "submit", class: "btn btn-primary", value: "yes", id: "confirm-yes" }, confirmLabel);
    const no = h("button", { type: "submit", class: "btn", value: "no", formnovalidate: true }, "Cancelar");
    const dlg = h("dialog", { class: "dialog", "aria-labelledby": "dlg-title" },
      h("form", { method: "dialog" }, h("h2", { id: "dlg-title" }, title), h("p", null, text), h("div", { class: "btn-row btn-row--end" }, no, yes)));
    dlg.addEventListener("close", () => { resolve(dlg.returnValue === "yes"); dlg.remove(); });
    document.body.append(dlg);
    dlg.showModal();
    no.focus();
  });
}
