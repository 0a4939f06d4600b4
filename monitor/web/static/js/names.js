// Names a person reads instead of codes: the licensee's razão social instead of its registry
// id, and what a draft's penalty is when its rule is not fined on a first offence (a
// notificação preliminar, Art. 41, I) instead of "multa 0".

import { store } from "./store.js";
import { listAll } from "./api.js";
import { h } from "./dom.js";
import { fmtNum } from "./fmt.js";

const licensees = new Map(); // id → {razao_social, cnpj}

// loadLicensees reads the registry's licensees once (only when the monitor has a registry: the
// route is a 404 otherwise). A failure leaves the ids shown as they are.
export async function loadLicensees() {
  if (!store.config.registry) return;
  try {
    const ls = await listAll("/api/v1/registry/licensees");
    licensees.clear();
    for (const l of ls) licensees.set(l.id, l);
    store.emit("licensees");
  } catch { /* the ids stay */ }
}

// licenseeName: "Trenzinho Alegria da Orla Ltda" for "L1"; the id itself when unknown.
export function licenseeName(id) {
  if (!id) return "";
  const l = licensees.get(id);
  return (l && l.razao_social) || id;
}

// licenseeEl is the licensee as a table cell shows it: the razão social, the id in a tooltip.
export function licenseeEl(id, empty = "não cadastrado") {
  if (!id) return h("span", { class: "muted" }, empty);
  const name = licenseeName(id);
  return name === id ? h("span", null, id) : h("span", { title: `Permissionário ${id}`, dataset: { licensee: id } }, name);
}

// ---- Penalties -------------------------------------------------------------------------

const WARNING_PENALTY = /^Art\.\s*41,\s*I$/;

// ruleNotice: the profile's notice text of the rules of a draft that carry one.
function ruleNotices(rules) {
  const all = (store.config && store.config.rules) || {};
  return [...new Set((rules || []).map((r) => all[r] && all[r].notice).filter(Boolean))];
}

// penaltyOf says what a draft (or a row of the queue) proposes: kind "fine" (a fine in the
// fiscal unit), "warning" (a notificação preliminar, Art. 41, I: no fine on a first offence)
// or "none" (no fine: e.g. a recommendation to the agent); text is what the page prints.
// Once issued, the calculus decides: assessment.warning is a notificação preliminar and
// assessment.penalty the article applied (a repetition moves Art. 41, I to Art. 47).
export function penaltyOf(d) {
  const a = d.case && d.case.assessment;
  const unit = (d.draft && d.draft.fiscal_unit) || store.config.fiscal_unit || "UFMP";
  if (a) {
    if (a.warning) return { kind: "warning", penalty: a.penalty || d.penalty, text: `sem multa (notificação preliminar, ${a.penalty || "Art. 41, I"})` };
    if (!(a.total_ufmp > 0)) return { kind: "none", penalty: a.penalty || d.penalty, text: "sem multa" };
    return { kind: "fine", penalty: a.penalty || d.penalty, text: `${fmtNum(a.total_ufmp, 2)} ${a.fiscal_unit || unit}` };
  }
  if (d.fine_ufmp > 0) return { kind: "fine", penalty: d.penalty, text: `${fmtNum(d.fine_ufmp, 2)} ${unit}` };
  if (WARNING_PENALTY.test(String(d.penalty || "").trim())) {
    return { kind: "warning", penalty: d.penalty, text: `sem multa (notificação preliminar, ${d.penalty})`, notices: ruleNotices(d.rules) };
  }
  const notices = ruleNotices(d.rules);
  return { kind: "none", penalty: d.penalty, text: "sem multa" + (notices.length ? ` (${notices.join("; ")})` : ""), notices };
}
