// Alterar senha: the signed-in user changes their own password (POST /api/v1/me/password),
// from the control room's Perfil page and from the licensee's portal alike. The server checks
// the current password and the policy; the form checks the confirmation and the length first,
// so that a typo costs no attempt against the login's limit.

import { api } from "./api.js";
import { h, field } from "./dom.js";
import { AUDIT_ACTIONS } from "./fmt.js";

// The audit log's names of these actions (kept here, with their feature).
Object.assign(AUDIT_ACTIONS, {
  "user.password_change": "Senha alterada pelo próprio usuário",
  "user.password_change_failed": "Troca de senha recusada (senha atual incorreta)",
});

// The server's bounds (store.MinPasswordLen, store.MaxPasswordLen).
const MIN_LEN = 8, MAX_LEN = 256;

// passwordCard: the "Alterar senha" form, in a card.
export function passwordCard() {
  const msg = h("p", { class: "form-msg", role: "status", id: "pw-msg" });
  const say = (text, ok) => { msg.textContent = text; msg.className = "form-msg " + (ok ? "is-ok" : "is-error"); };
  const input = (id, autocomplete) => h("input", { id, type: "password", autocomplete, required: true, maxlength: String(MAX_LEN) });
  const current = input("pw-current", "current-password");
  const next = input("pw-new", "new-password");
  const confirm = input("pw-confirm", "new-password");
  const submit = h("button", { type: "submit", class: "btn btn-primary", id: "pw-save" }, "Alterar senha");
  const form = h("form", { id: "pw-form", onsubmit: async (ev) => {
    ev.preventDefault();
    const n = [...next.value].length;
    if (n < MIN_LEN || n > MAX_LEN) { say(`A nova senha deve ter de ${MIN_LEN} a ${MAX_LEN} caracteres.`, false); return; }
    if (next.value !== confirm.value) { say("A confirmação não confere com a nova senha.", false); return; }
    if (next.value === current.value) { say("A nova senha deve ser diferente da atual.", false); return; }
    submit.disabled = true;
    try {
      const r = await api("/api/v1/me/password", { method: "POST", body: { current: current.value, new: next.value } });
      form.reset();
      say(r.message || "Senha alterada.", true);
    } catch (e) {
      const text = e.message || "";
      say(text.charAt(0).toUpperCase() + text.slice(1) + (text.endsWith(".") ? "" : "."), false);
    } finally {
      submit.disabled = false;
    }
  } },
  h("div", { class: "toolbar" }, field("Senha atual", current), field("Nova senha", next), field("Confirmar a nova senha", confirm)),
  h("div", { class: "btn-row" }, submit), msg);
  return h("section", { class: "card", id: "password-card", "aria-labelledby": "pw-title" },
    h("h2", { class: "card-title", id: "pw-title" }, "Alterar senha"),
    h("p", { class: "muted small" }, `A nova senha deve ter de ${MIN_LEN} a ${MAX_LEN} caracteres. Ao alterá-la, as outras sessões abertas com a sua conta (em outros aparelhos ou navegadores) são encerradas; esta continua.`),
    form);
}
