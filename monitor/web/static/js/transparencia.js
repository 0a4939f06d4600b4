// The public transparency page (GET /transparencia): a month's report from
// GET /api/v1/public/transparency, as tables. No login, no personal data.
import { h } from "./dom.js";
import { RULES } from "./fmt.js";

const num = (x, d = 2) => x.toLocaleString("pt-BR", { minimumFractionDigits: d, maximumFractionDigits: d });

function counts(obj, label) {
  const keys = Object.keys(obj).sort();
  if (keys.length === 0) return h("span", null, "nenhum");
  return h("ul", null, keys.map((k) => h("li", null, `${label(k)}: ${obj[k]}`)));
}

function render(rep) {
  const out = document.getElementById("relatorio");
  out.replaceChildren();
  const status = document.getElementById("status");
  status.textContent = rep.partial
    ? `Mês ${rep.month} (parcial: a coleta de telemetria começa em ${rep.telemetry_since ? new Date(rep.telemetry_since).toLocaleString("pt-BR") : "—"}).`
    : `Mês ${rep.month}.`;
  if (rep.licensees.length === 0) {
    out.append(h("p", null, "Nenhum dado neste mês."));
    return;
  }
  const rows = rep.licensees.map((l) =>
    h("tr", null,
      h("th", { scope: "row" }, l.razao_social),
      h("td", null, String(l.vehicles)),
      h("td", null, num(l.hours_in_service)),
      h("td", null, num(l.hours_in_offence)),
      h("td", null, l.share_compliant == null ? "—" : `${num(l.share_compliant * 100, 1)} %`),
      h("td", null, String(l.autos_confirmed)),
      h("td", null, counts(l.autos_by_article, (k) => k)),
      h("td", null, String(l.autos_annulled)),
    ));
  out.append(h("table", { class: "transparency-table" },
    h("thead", null, h("tr", null,
      ["Permissionário", "Veículos em serviço", "Horas em serviço", "Horas em infração", "Tempo em conformidade",
        "Autos confirmados", "Autos confirmados por artigo", "Autos anulados"].map((t) => h("th", { scope: "col" }, t)))),
    h("tbody", null, rows)));
  // Alerts, autos in process and notificações preliminares: only in aggregate, no licensee.
  out.append(h("h2", null, "Todos os permissionários"),
    h("p", null, "Alertas do monitor e autos em andamento são publicados apenas no total, sem nome de permissionário: " +
      "um alerta não é uma infração constatada, e um auto em andamento ainda pode ser anulado."),
    h("table", { class: "transparency-table" },
      h("tbody", null,
        h("tr", null, h("th", { scope: "row" }, "Alertas por regra"), h("td", null, counts(rep.alerts_by_rule || {}, (k) => RULES[k] || k))),
        h("tr", null, h("th", { scope: "row" }, "Autos em andamento"), h("td", null, String(rep.autos_pending))),
        h("tr", null, h("th", { scope: "row" }, "Notificações preliminares"), h("td", null, String(rep.warnings))))));
}

async function load(month) {
  const q = `?month=${encodeURIComponent(month)}`;
  document.getElementById("csv").href = `api/v1/public/transparency.csv${q}`;
  document.getElementById("json").href = `api/v1/public/transparency${q}`;
  const status = document.getElementById("status");
  status.textContent = "Carregando…";
  try {
    const resp = await fetch(`api/v1/public/transparency${q}`, { credentials: "omit" });
    const body = await resp.json();
    if (!resp.ok) {
      status.textContent = body.error || `Erro ${resp.status}`;
      return;
    }
    render(body);
  } catch {
    status.textContent = "Não foi possível carregar os dados.";
  }
}

const input = document.getElementById("mes");
const params = new URLSearchParams(location.search);
const now = new Date();
input.value = params.get("month") || `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}`;
input.max = `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, "0")}`;
document.getElementById("mes-form").addEventListener("submit", (ev) => {
  ev.preventDefault();
  history.replaceState(null, "", `?month=${input.value}`);
  load(input.value);
});
load(input.value);
