// Triage of an alert (docs/api.md, "Triage"): acknowledged, assigned, commented, cleared with a
// reason, reopened — the control room's handling of an episode. It is not the review of a
// draft: clearing an alert decides nothing about a draft or an auto, which keep their process.

import { api } from "./api.js";
import { store } from "./store.js";
import { h, chip, field } from "./dom.js";
import { fmtDateTime } from "./fmt.js";
import { toastOk, toastError } from "./toast.js";

export const TRIAGE_STATES = { novo: "Novo", reconhecido: "Reconhecido", atribuido: "Atribuído", encerrado: "Encerrado" };
const TONES = { novo: "danger", reconhecido: "warn", atribuido: "info", encerrado: "ok" };

// stateOf: an episode from the stream carries no triage: it is new.
export const stateOf = (t) => (t && t.state) || "novo";

// whoText: "reconhecido por ana · atribuído a bia" — who did what, for the alerts list.
export function whoText(t) {
  if (!t) return "";
  const parts = [];
  if (t.state === "encerrado") parts.push(`encerrado por ${t.cleared_by}`);
  else if (t.assignee) parts.push(`atribuído a ${t.assignee}`);
  if (t.acknowledged_by && t.state !== "encerrado") parts.push(`reconhecido por ${t.acknowledged_by}`);
  if (t.escalated_at && t.state === "novo") parts.push("escalonado à supervisão");
  return parts.join(" · ");
}

export function triageChip(t) {
  const s = stateOf(t);
  return chip(TRIAGE_STATES[s] || s, TONES[s] || "neutral", whoText(t) || "Ninguém reconheceu este alerta ainda");
}

// triageAct posts an act and returns the triage after it; a refusal is shown and rethrown.
export async function triageAct(id, path, body = {}) {
  try {
    const t = await api(`/api/v1/episodes/${encodeURIComponent(id)}/${path}`, { method: "POST", body });
    store.emit("triage", t);
    return t;
  } catch (err) {
    toastError(err.message);
    throw err;
  }
}

const ACTS = {
  ack: (ev) => `${ev.user} reconheceu o alerta`,
  assign: (ev) => `${ev.user} atribuiu o alerta a ${ev.assignee}`,
  comment: (ev) => `${ev.user} comentou`,
  clear: (ev) => `${ev.user} encerrou o alerta`,
  reopen: (ev) => `${ev.user} reabriu o alerta`,
  escalate: (ev) => `Sem reconhecimento: o monitor reenviou o alerta à supervisão (${ev.text})`,
};

function historyList(t) {
  const items = (t.history || []).map((ev) => h("li", { dataset: { act: ev.act } },
    h("time", { datetime: ev.at }, fmtDateTime(ev.at)), " — ",
    h("strong", null, (ACTS[ev.act] || ((x) => `${x.user}: ${x.act}`))(ev)),
    ev.text && ev.act !== "escalate" ? h("blockquote", { class: "triage-text" }, ev.text) : null));
  return items.length ? h("ol", { class: "triage-history", id: "triage-history" }, items)
    : h("p", { class: "muted", id: "triage-history" }, "Nenhum ato de triagem ainda.");
}

// triagePanel is the episode view's card: the state, who did what, the acts a fiscal may take
// and the history. It reloads itself after each act and on the stream's triage events.
export function triagePanel(episodeID) {
  const card = h("section", { class: "card", id: "triage-panel" }, h("h3", { class: "card-title" }, "Triagem do alerta"),
    h("p", { class: "muted" }, "Carregando…"));
  const draw = (t) => {
    const s = stateOf(t);
    const me = store.user ? store.user.name : "";
    const canAct = store.hasRole("fiscal");
    const act = (path, body, done) => async (ev) => {
      ev.preventDefault();
      const btn = ev.submitter || ev.currentTarget;
      btn.disabled = true;
      try {
        draw(await triageAct(episodeID, path, body ? body() : {}));
        toastOk(done);
      } catch { btn.disabled = false; }
    };
    const facts = h("dl", { class: "facts" });
    const add = (k, v) => { if (v) facts.append(h("dt", null, k), h("dd", null, v)); };
    add("Situação", h("span", { id: "triage-state", dataset: { state: s } }, TRIAGE_STATES[s] || s));
    if (t.acknowledged_by) add("Reconhecido", `por ${t.acknowledged_by} em ${fmtDateTime(t.acknowledged_at)}`);
    if (t.assignee) add("Atribuído a", `${t.assignee} (por ${t.assigned_by} em ${fmtDateTime(t.assigned_at)})`);
    if (s === "encerrado") add("Encerrado", `por ${t.cleared_by} em ${fmtDateTime(t.cleared_at)}: ${t.clear_reason}`);
    if (t.escalated_at) add("Escalonado", `reenviado à supervisão em ${fmtDateTime(t.escalated_at)}`);

    const forms = [];
    if (canAct) {
      const buttons = h("div", { class: "head-actions" });
      if (s === "novo") buttons.append(h("button", { type: "button", class: "btn btn-primary", id: "triage-ack", onclick: act("ack", null, "Alerta reconhecido") }, "Reconhecer"));
      if (s !== "encerrado" && t.assignee !== me) {
        buttons.append(h("button", { type: "button", class: "btn", id: "triage-assign-me", onclick: act("assign", () => ({ user: me }), "Alerta atribuído a você") }, "Assumir"));
      }
      if (buttons.childElementCount) forms.push(buttons);
      if (s !== "encerrado") {
        const user = h("input", { type: "text", id: "triage-assign-user", name: "user", maxlength: "64", autocomplete: "off", placeholder: "usuário (ex.: maria)" });
        forms.push(h("form", { class: "toolbar", id: "triage-assign-form", onsubmit: act("assign", () => ({ user: user.value.trim() }), "Alerta atribuído") },
          field("Atribuir a", user), h("button", { type: "submit", class: "btn", id: "triage-assign" }, "Atribuir")));
      }
      const reason = h("textarea", { id: "triage-reason", name: "reason", rows: "2", maxlength: "2000", required: true,
        placeholder: s === "encerrado" ? "Por que reabrir?" : "Por que encerrar? (ex.: verificado no local, falso alarme, duplicado)" });
      forms.push(h("form", { id: "triage-clear-form", onsubmit: act(s === "encerrado" ? "reopen" : "clear", () => ({ reason: reason.value }),
        s === "encerrado" ? "Alerta reaberto" : "Alerta encerrado") },
        field(s === "encerrado" ? "Motivo da reabertura" : "Motivo do encerramento", reason,
          "Encerrar o alerta é triagem da central: não decide sobre minuta nem auto, que seguem a revisão."),
        h("button", { type: "submit", class: s === "encerrado" ? "btn" : "btn btn-danger-outline", id: s === "encerrado" ? "triage-reopen" : "triage-clear" },
          s === "encerrado" ? "Reabrir alerta" : "Encerrar alerta")));
      const text = h("textarea", { id: "triage-comment-text", name: "text", rows: "2", maxlength: "2000", required: true, placeholder: "O que foi visto ou feito" });
      forms.push(h("form", { id: "triage-comment-form", onsubmit: act("comments", () => ({ text: text.value }), "Comentário registrado") },
        field("Comentário (não pode ser editado nem apagado)", text), h("button", { type: "submit", class: "btn", id: "triage-comment" }, "Comentar")));
    }
    card.replaceChildren(h("h3", { class: "card-title" }, "Triagem do alerta"), facts, ...forms,
      h("h4", { class: "chart-title" }, "Histórico"), historyList(t));
  };
  const load = async () => {
    try {
      draw(await api(`/api/v1/episodes/${encodeURIComponent(episodeID)}/triage`));
    } catch (err) {
      card.replaceChildren(h("h3", { class: "card-title" }, "Triagem do alerta"), h("p", { class: "form-error" }, err.message));
    }
  };
  load();
  // Another person's act: reload (the event carries only the last history entry).
  const off = store.on("triage", (t) => {
    if (t.episode_id === episodeID && card.isConnected && !card.contains(document.activeElement)) load();
  });
  return { el: card, off };
}
