// Escala de plantão: who is on call when (GET /api/v1/notifications/schedule, fiscal and
// above). A supervisor adds and removes shifts; new alerts are sent to whoever is on duty, even
// in their quiet hours. Times are the municipality's local time (America/Sao_Paulo), whatever
// the browser's zone: the page sends "AAAA-MM-DDTHH:MM" and the server reads it in that zone.

import { store } from "./store.js";
import { api } from "./api.js";
import { h, field, chip, emptyRow, tableWrap, theadOf, confirmDialog } from "./dom.js";
import { fmtDateTime } from "./fmt.js";
import { toastOk } from "./toast.js";

// localText: "05/12/2026 18:00" of "2026-12-05T18:00".
const localText = (s) => `${s.slice(8, 10)}/${s.slice(5, 7)}/${s.slice(0, 4)} ${s.slice(11, 16)}`;

export const scheduleView = {
  title: "Escala de plantão",
  role: "fiscal",
  mount(el) {
    const editor = store.hasRole("supervisor");
    const tbody = h("tbody");
    const msg = h("p", { class: "form-msg", role: "status", id: "shift-msg" });
    const say = (text, ok = true) => { msg.textContent = text; msg.className = "form-msg " + (ok ? "is-ok" : "is-error"); };
    let tz = "America/Sao_Paulo";

    const load = async () => {
      try {
        const r = await api("/api/v1/notifications/schedule");
        tz = r.time_zone || tz;
        tbody.replaceChildren(...(r.items.length ? r.items.map(row) : [emptyRow(editor ? 5 : 4, "Nenhum plantão na escala.")]));
      } catch (e) { say(e.message, false); }
    };
    const row = (s) => h("tr", { dataset: { shift: String(s.id), user: s.user } },
      h("th", { scope: "row" }, s.user),
      h("td", { class: "nowrap" }, localText(s.from_local)),
      h("td", { class: "nowrap" }, localText(s.to_local)),
      h("td", null, s.on_duty ? chip("de plantão agora", "ok") : chip(Date.parse(s.to) < Date.now() ? "encerrado" : "previsto", "neutral"),
        s.source === "file" ? h("small", { class: "muted block" }, "do arquivo de configuração") : s.created_by ? h("small", { class: "muted block", title: s.created_at ? fmtDateTime(s.created_at) : "" }, "por " + s.created_by) : null),
      editor ? h("td", { class: "actions" }, s.id ? h("button", { type: "button", class: "btn btn-small btn-danger-outline", "aria-label": `Remover o plantão de ${s.user}`, onclick: async () => {
        const ok = await confirmDialog(`Remover o plantão de ${s.user}?`, `${localText(s.from_local)} a ${localText(s.to_local)}. Os novos alertas deixam de ir para ${s.user} nesse horário.`, "Remover");
        if (!ok) return;
        try {
          await api("/api/v1/notifications/schedule/" + s.id, { method: "DELETE" });
          toastOk(`Plantão de ${s.user} removido.`);
          say("");
          load();
        } catch (e) { say(e.message, false); }
      } }, "Remover") : h("span", { class: "muted small" }, "—")) : null);

    const parts = [h("div", { class: "page-head" }, h("p", { class: "lead" },
      "Quem está de plantão recebe os novos alertas pelos seus canais, mesmo no horário de silêncio. Horários locais (Brasília)."))];
    if (editor) {
      const user = h("input", { id: "shift-user", required: true, maxlength: "64", autocomplete: "off", list: "shift-users" });
      const users = h("datalist", { id: "shift-users" });
      if (store.hasRole("admin")) {
        api("/api/v1/users").then(({ items }) => users.replaceChildren(...items.filter((u) => !u.disabled).map((u) => h("option", { value: u.name })))).catch(() => {});
      }
      const from = h("input", { id: "shift-from", type: "datetime-local", required: true });
      const to = h("input", { id: "shift-to", type: "datetime-local", required: true });
      const form = h("form", { class: "toolbar shift-form", id: "shift-form", onsubmit: async (ev) => {
        ev.preventDefault();
        try {
          const s = await api("/api/v1/notifications/schedule", { method: "POST", body: { user: user.value.trim(), from: from.value.slice(0, 16), to: to.value.slice(0, 16) } });
          say(`Plantão de ${s.user} incluído: ${localText(s.from_local)} a ${localText(s.to_local)}.`);
          form.reset();
          load();
        } catch (e) {
          say(e.fields ? e.fields.map((f) => f.message).join("; ") : e.message, false);
        }
      } }, users, field("Usuário", user), field("Início", from), field("Fim", to),
      h("button", { type: "submit", class: "btn btn-primary", id: "shift-add" }, "Incluir plantão"));
      parts.push(h("section", { class: "card" }, h("h2", { class: "card-title" }, "Novo plantão"), form, msg));
    } else {
      parts.push(msg);
    }
    parts.push(h("section", { class: "card" }, h("h2", { class: "card-title" }, "Escala"),
      tableWrap("Escala de plantão", h("table", { class: "table", id: "schedule-table" },
        theadOf(["Usuário", "Início", "Fim", "Situação", editor ? ["Ações", "actions"] : null]), tbody))));
    el.append(...parts);
    load();
  },
};
