// User management (admin): create accounts, change roles, reset passwords, disable and enable.

import { store } from "./store.js";
import { api } from "./api.js";
import { h, field, chip, emptyRow, confirmDialog } from "./dom.js";
import { fmtDateTime, ROLES } from "./fmt.js";

export const usersView = {
  title: "Usuários",
  role: "admin",
  mount(el) {
    const tbody = h("tbody");
    const msg = h("p", { class: "form-msg", role: "status" });
    const roleSelect = (value, attrs = {}) => h("select", attrs, Object.entries(ROLES).map(([k, v]) => h("option", { value: k, selected: k === value }, v)));
    const name = h("input", { name: "name", required: true, autocomplete: "off", pattern: "[A-Za-z0-9][A-Za-z0-9._@\\-]{0,63}", maxlength: "64" });
    const password = h("input", { name: "password", type: "password", required: true, minlength: "8", autocomplete: "new-password" });
    const role = roleSelect("viewer", { name: "role" });
    // A licensee's user (the portal) is bound to a licensee of the registry, by its id.
    const licensee = h("input", { name: "licensee", autocomplete: "off", maxlength: "64", placeholder: "ex.: L1" });
    const licenseeField = field("Permissionário (id no cadastro)", licensee);
    licenseeField.hidden = true;
    role.addEventListener("change", () => { licenseeField.hidden = role.value !== "licensee"; licensee.required = role.value === "licensee"; });
    const say = (text, ok = true) => { msg.textContent = text; msg.className = "form-msg " + (ok ? "is-ok" : "is-error"); };

    const load = async () => {
      try {
        const { items } = await api("/api/v1/users");
        tbody.replaceChildren(...(items.length ? items.map(row) : [emptyRow(6, "Nenhum usuário.")]));
      } catch (e) { say(e.message, false); }
    };
    const patch = async (user, body, done) => {
      try {
        await api("/api/v1/users/" + encodeURIComponent(user.name), { method: "PATCH", body });
        say(done);
        load();
      } catch (e) { say(e.message, false); load(); }
    };
    const row = (u) => {
      const sel = roleSelect(u.role, { "aria-label": "Papel de " + u.name });
      sel.addEventListener("change", () => patch(u, { role: sel.value }, `Papel de ${u.name} alterado para ${ROLES[sel.value]}.`));
      const self = store.user && store.user.name === u.name;
      return h("tr", { dataset: { user: u.name } },
        h("th", { scope: "row" }, u.name, self ? h("small", { class: "muted" }, " (você)") : null),
        h("td", null, sel),
        h("td", { class: "agent-id" }, u.full_name && u.matricula && u.cargo
          ? `${u.full_name} — matrícula ${u.matricula} — ${u.cargo}`
          : chip("incompleta: não pode emitir autos", "warn")),
        h("td", null, u.created_at ? fmtDateTime(u.created_at) : "—"),
        h("td", null, u.disabled ? chip("desativado", "neutral") : chip("ativo", "ok")),
        h("td", { class: "actions" },
          h("button", { type: "button", class: "btn btn-small", onclick: () => editAgent(u) }, "Identificação"),
          h("button", { type: "button", class: "btn btn-small", onclick: () => resetPassword(u) }, "Redefinir senha"),
          h("button", { type: "button", class: "btn btn-small" + (u.disabled ? "" : " btn-danger-outline"), onclick: async () => {
            const ok = await confirmDialog(u.disabled ? `Reativar ${u.name}?` : `Desativar ${u.name}?`,
              u.disabled ? "A pessoa volta a poder entrar no sistema." : "As sessões abertas terminam e a pessoa não consegue mais entrar.",
              u.disabled ? "Reativar" : "Desativar");
            if (ok) patch(u, { disabled: !u.disabled }, u.disabled ? `${u.name} reativado.` : `${u.name} desativado.`);
          } }, u.disabled ? "Reativar" : "Desativar")));
    };
    // The agent's identification an auto prints (issuing requires all three).
    const editAgent = (u) => {
      const input = (name, value) => h("input", { name, value: value || "", maxlength: "200", autocomplete: "off" });
      const fullName = input("full_name", u.full_name), matricula = input("matricula", u.matricula), cargo = input("cargo", u.cargo);
      const err = h("p", { class: "form-error", role: "alert" });
      const dlg = h("dialog", { class: "dialog", "aria-labelledby": "agent-title" },
        h("form", { method: "dialog", onsubmit: async (ev) => {
          if (ev.submitter && ev.submitter.value === "cancel") return;
          ev.preventDefault();
          try {
            await api("/api/v1/users/" + encodeURIComponent(u.name), { method: "PATCH",
              body: { full_name: fullName.value.trim(), matricula: matricula.value.trim(), cargo: cargo.value.trim() } });
            dlg.close();
            say(`Identificação de ${u.name} salva.`);
            load();
          } catch (e) { err.textContent = e.message; }
        } },
        h("h2", { id: "agent-title" }, "Identificação de " + u.name),
        h("p", { class: "muted small" }, "Impressa nos autos que a pessoa emitir; sem nome completo, matrícula e cargo ela não pode emitir autos."),
        field("Nome completo", fullName), field("Matrícula", matricula), field("Cargo", cargo), err,
        h("div", { class: "btn-row btn-row--end" }, h("button", { type: "submit", class: "btn", value: "cancel", formnovalidate: true }, "Cancelar"),
          h("button", { type: "submit", class: "btn btn-primary", value: "ok" }, "Salvar"))));
      dlg.addEventListener("close", () => dlg.remove());
      document.body.append(dlg);
      dlg.showModal();
      fullName.focus();
    };
    const resetPassword = (u) => {
      const input = h("input", { type: "password", minlength: "8", required: true, autocomplete: "new-password" });
      const err = h("p", { class: "form-error", role: "alert" });
      const dlg = h("dialog", { class: "dialog", "aria-labelledby": "pw-title" },
        h("form", { method: "dialog", onsubmit: async (ev) => {
          if (ev.submitter && ev.submitter.value === "cancel") return;
          ev.preventDefault();
          try {
            await api("/api/v1/users/" + encodeURIComponent(u.name), { method: "PATCH", body: { password: input.value } });
            dlg.close();
            say(`Senha de ${u.name} redefinida; as sessões dele(a) foram encerradas.`);
          } catch (e) { err.textContent = e.message; }
        } },
        h("h2", { id: "pw-title" }, "Nova senha para " + u.name), field("Nova senha (mínimo 8 caracteres)", input), err,
        h("div", { class: "btn-row btn-row--end" }, h("button", { type: "submit", class: "btn", value: "cancel", formnovalidate: true }, "Cancelar"),
          h("button", { type: "submit", class: "btn btn-primary", value: "ok" }, "Salvar"))));
      dlg.addEventListener("close", () => dlg.remove());
      document.body.append(dlg);
      dlg.showModal();
      input.focus();
    };
    const form = h("form", { class: "toolbar", id: "new-user", onsubmit: async (e) => {
      e.preventDefault();
      try {
        const body = { name: name.value.trim(), password: password.value, role: role.value };
        if (role.value === "licensee") body.licensee = licensee.value.trim();
        await api("/api/v1/users", { method: "POST", body });
        say(`Usuário ${name.value.trim()} criado como ${ROLES[role.value]}.`);
        form.reset();
        licenseeField.hidden = true;
        load();
      } catch (err) { say(err.message, false); }
    } }, field("Nome de usuário", name), field("Senha inicial (mín. 8 caracteres)", password), field("Papel", role), licenseeField,
    h("button", { type: "submit", class: "btn btn-primary" }, "Criar usuário"));
    el.append(
      h("div", { class: "page-head" }, h("p", { class: "lead" }, `Observador acompanha; fiscal também emite e arquiva autos e registra notificações, defesas, recursos e pagamentos; supervisor também gerencia o cadastro; ${ROLES.autoridade} também decide defesas, suspensões, anulações e a inscrição em dívida ativa (nunca de autos que emitiu); administrador também gerencia usuários, vê a auditoria e, como autoridade superior, decide recursos (nunca contra a própria decisão). Permissionário é o usuário de uma empresa permissionária: vê só o portal, com os próprios veículos, episódios, autos e processos, e apresenta defesas e recursos.`)),
      h("section", { class: "card" }, h("h2", { class: "card-title" }, "Novo usuário"), form, msg),
      h("section", { class: "card" }, h("h2", { class: "card-title" }, "Usuários"),
        h("div", { class: "table-wrap" }, h("table", { class: "table", id: "users-table" },
          h("thead", null, h("tr", null, ...["Usuário", "Papel", "Identificação do agente", "Criado em", "Situação", "Ações"].map((t) => h("th", { scope: "col" }, t)))),
          tbody))));
    load();
  },
};
