// Avisos não entregues (admin): the messages the dispatcher gave up on — a refused address, a
// channel down through every retry — listed newest first, each with a button to send it again
// (GET /api/v1/notifications/dead-letters, POST …/{id}/retry; both audited).

import { api } from "./api.js";
import { h, chip, emptyRow, tableWrap, theadOf } from "./dom.js";
import { fmtDateTime } from "./fmt.js";
import { toastOk } from "./toast.js";

const CHANNELS = { email: "E-mail", telegram: "Telegram", webpush: "Push" };

export const deadLettersView = {
  title: "Avisos não entregues",
  role: "admin",
  mount(el) {
    const tbody = h("tbody");
    const info = h("p", { class: "form-msg", role: "status", id: "dl-msg" });
    const more = h("button", { type: "button", class: "btn", hidden: true }, "Carregar mais");
    const say = (text, ok = true) => { info.textContent = text; info.className = "form-msg " + (ok ? "is-ok" : "is-error"); };
    let items = [], cursor = "";
    const load = async (append = false) => {
      const q = new URLSearchParams({ limit: "100" });
      if (append && cursor) q.set("cursor", cursor);
      try {
        const page = await api("/api/v1/notifications/dead-letters?" + q);
        items = append ? items.concat(page.items) : page.items;
        cursor = page.next_cursor || "";
        more.hidden = !cursor;
        tbody.replaceChildren(...(items.length ? items.map(row) : [emptyRow(6, "Nenhum aviso pendente: todas as mensagens foram entregues.")]));
      } catch (e) {
        say(e.status === 404 ? "Este servidor não envia notificações (nenhum arquivo de notificações configurado)." : e.message, e.status === 404);
      }
    };
    const row = (l) => {
      const btn = h("button", { type: "button", class: "btn btn-small", dataset: { retry: String(l.id) } }, "Reenviar");
      btn.addEventListener("click", async () => {
        btn.disabled = true;
        say("Reenviando…");
        try {
          await api(`/api/v1/notifications/dead-letters/${l.id}/retry`, { method: "POST" });
          toastOk(`Aviso para ${l.user} (${CHANNELS[l.channel] || l.channel}) entregue.`);
          say(`Aviso para ${l.user} entregue.`);
          load();
        } catch (e) {
          say(e.message, false);
          load();
        }
      });
      return h("tr", { dataset: { letter: String(l.id) } },
        h("td", { class: "nowrap" }, fmtDateTime(l.at)),
        h("td", null, l.user, h("small", { class: "muted block" }, `${CHANNELS[l.channel] || l.channel}: ${l.to}`)),
        h("td", { class: "dl-subject" }, l.subject,
          h("small", { class: "block dl-episodes" }, l.episodes.map((id, i) => [i ? ", " : "", h("a", { href: "#/episodio/" + encodeURIComponent(id), title: "Ver o episódio" }, id)]))),
        h("td", { class: "dl-error" }, l.error),
        h("td", { class: "num" }, String(l.attempts), l.retries ? h("small", { class: "muted block" }, `${l.retries} reenvio(s) falho(s)` + (l.last_retry_at ? ", o último " + fmtDateTime(l.last_retry_at) : "")) : null),
        h("td", { class: "actions" }, btn));
    };
    more.addEventListener("click", () => load(true));
    el.append(
      h("div", { class: "page-head" }, h("p", { class: "lead" },
        "Mensagens que o monitor desistiu de entregar (endereço recusado ou canal fora do ar após as tentativas). Os alertas continuam no painel; reenviar manda a mesma mensagem agora.")),
      h("section", { class: "card" }, info,
        tableWrap("Avisos não entregues", h("table", { class: "table", id: "dead-letters-table" },
          theadOf(["Desistência", "Destinatário", "Mensagem e episódios", "Erro", ["Tentativas", "num"], ["Ações", "actions"]]), tbody)),
        h("div", { class: "table-foot" }, more)),
      h("p", { class: "muted small" }, chip("auditado", "neutral"), " Consultar esta lista e reenviar ficam registrados na auditoria."));
    load();
  },
};
