// Confirmation and error toasts (bottom right), for what a person did: "Auto emitido", …

import { h, $ } from "./dom.js";

function show(text, cls, role, ms) {
  const box = $("#toasts");
  const t = h("div", { class: "toast " + cls, role }, h("span", { class: "toast-text" }, text),
    h("button", { type: "button", class: "toast-close", "aria-label": "Fechar aviso", onclick: () => t.remove() }, "×"));
  box.prepend(t);
  while (box.childElementCount > 4) box.lastElementChild.remove();
  if (ms) setTimeout(() => t.remove(), ms);
  return t;
}

// toastOk confirms a decision or an act; it goes away by itself.
export const toastOk = (text) => show(text, "toast--ok", "status", 8000);
// toastError stays until closed.
export const toastError = (text) => show(text, "toast--error", "alert", 0);
