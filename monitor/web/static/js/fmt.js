// Formatting for people in Brazil: pt-BR numbers, dd/mm/aaaa dates and local time in the
// municipality's time zone (America/Sao_Paulo unless the monitor says otherwise), and the
// Portuguese names of every code the API uses.

let TZ = "America/Sao_Paulo";
const cache = new Map();

export function setTimeZone(tz) {
  if (tz && tz !== TZ) { TZ = tz; cache.clear(); }
}
export const timeZone = () => TZ;

function parts(t, key, opts) {
  let f = cache.get(key);
  if (!f) { f = new Intl.DateTimeFormat("pt-BR", { timeZone: TZ, hourCycle: "h23", ...opts }); cache.set(key, f); }
  const out = {};
  for (const p of f.formatToParts(toDate(t))) out[p.type] = p.value;
  return out;
}

export function toDate(t) {
  if (t instanceof Date) return t;
  if (typeof t === "number") return new Date(t);
  return new Date(t);
}

const DATE = { day: "2-digit", month: "2-digit", year: "numeric" };
const TIME = { hour: "2-digit", minute: "2-digit", second: "2-digit" };

// fmtDate: 29/11/2026.
export function fmtDate(t) {
  if (t == null || t === "") return "—";
  const p = parts(t, "d", DATE);
  return `${p.day}/${p.month}/${p.year}`;
}
// fmtTime: 20:31:05 (or 20:31 without seconds).
export function fmtTime(t, seconds = true) {
  if (t == null || t === "") return "—";
  const p = parts(t, "t", TIME);
  return seconds ? `${p.hour}:${p.minute}:${p.second}` : `${p.hour}:${p.minute}`;
}
// fmtDateTime: 29/11/2026 20:31:05.
export function fmtDateTime(t, seconds = true) {
  if (t == null || t === "") return "—";
  const p = parts(t, "dt", { ...DATE, ...TIME });
  return `${p.day}/${p.month}/${p.year} ${p.hour}:${p.minute}` + (seconds ? `:${p.second}` : "");
}
// localDate: the calendar day of t in the municipality, "2026-11-29".
export function localDate(t = new Date()) {
  const p = parts(t, "d", DATE);
  return `${p.year}-${p.month}-${p.day}`;
}
// offsetMinutes: local time minus UTC at t, in minutes (-180 in Brasília time).
export function offsetMinutes(t) {
  const p = parts(t, "dt", { ...DATE, ...TIME });
  const asUTC = Date.UTC(+p.year, +p.month - 1, +p.day, +p.hour, +p.minute, +p.second);
  return Math.round((asUTC - Math.floor(toDate(t).getTime() / 1000) * 1000) / 60000);
}
// dayRange("2026-11-29"): the first instant of that local day and of the next, as Dates.
export function dayRange(iso) {
  const [y, m, d] = iso.split("-").map(Number);
  const startOf = (yy, mm, dd) => {
    const guess = Date.UTC(yy, mm - 1, dd);
    let t = guess - offsetMinutes(guess) * 60000;
    t = guess - offsetMinutes(t) * 60000;
    return new Date(t);
  };
  return [startOf(y, m, d), startOf(y, m, d + 1)];
}
export function addDays(iso, n) {
  const [y, m, d] = iso.split("-").map(Number);
  return new Date(Date.UTC(y, m - 1, d + n)).toISOString().slice(0, 10);
}
// isoDateBR: "2026-11-29" → 29/11/2026.
export function isoDateBR(iso) {
  if (!iso) return "—";
  const [y, m, d] = iso.split("-");
  return `${d}/${m}/${y}`;
}

const numFmts = new Map();
// fmtNum: 45,5 (at most `digits` decimals).
export function fmtNum(v, digits = 1) {
  if (v == null || Number.isNaN(+v)) return "—";
  let f = numFmts.get(digits);
  if (!f) { f = new Intl.NumberFormat("pt-BR", { maximumFractionDigits: digits }); numFmts.set(digits, f); }
  return f.format(+v);
}
export function fmtValue(v, unit, digits = 1) {
  return v == null ? "—" : fmtNum(v, digits) + " " + unit;
}
// fmtDuration: 45 s, 4 min 30 s, 1 h 05 min.
export function fmtDuration(s) {
  if (s == null) return "—";
  s = Math.round(s);
  if (s < 60) return s + " s";
  const m = Math.floor(s / 60), sec = s % 60;
  if (m < 60) return sec ? `${m} min ${String(sec).padStart(2, "0")} s` : `${m} min`;
  const hh = Math.floor(m / 60), mm = m % 60;
  if (hh < 48) return `${hh} h ${String(mm).padStart(2, "0")} min`;
  return `${Math.floor(hh / 24)} dias ${hh % 24} h`;
}
// fmtAgo: agora, há 12 s, há 3 min, há 2 h, há 3 dias.
export function fmtAgo(t, now = Date.now()) {
  if (!t) return "nunca";
  const s = Math.max(0, Math.round((now - toDate(t).getTime()) / 1000));
  if (s < 5) return "agora";
  if (s < 60) return `há ${s} s`;
  if (s < 3600) return `há ${Math.floor(s / 60)} min`;
  if (s < 86400) return `há ${Math.floor(s / 3600)} h`;
  const d = Math.floor(s / 86400);
  return d === 1 ? "há 1 dia" : `há ${d} dias`;
}
const COMPASS = ["N", "NE", "L", "SE", "S", "SO", "O", "NO"];
export function compass(deg) {
  if (deg == null) return "—";
  return `${COMPASS[Math.round((((deg % 360) + 360) % 360) / 45) % 8]} (${fmtNum(deg, 0)}°)`;
}

export const RULES = {
  speed: "Excesso de velocidade",
  hours: "Fora do horário de serviço",
  sensitive_zone_sound: "Som perto de local sensível",
  boarding_sound: "Som no embarque/desembarque",
  noise_limit: "Ruído acima do limite (NBR 10151)",
  route_deviation: "Fora do itinerário autorizado",
  parked_public_road: "Estacionado em via pública",
  telemetry_fault: "Falha de telemetria",
  document_expired: "Documento vencido",
  clock_fault: "Relógio do equipamento adiantado",
  telemetry_conflict: "Lote reenviado com conteúdo diferente",
};
export const RULES_SHORT = {
  speed: "Velocidade", hours: "Horário", sensitive_zone_sound: "Local sensível", boarding_sound: "Embarque",
  noise_limit: "Ruído NBR", route_deviation: "Itinerário", parked_public_road: "Estacionado",
  telemetry_fault: "Telemetria", document_expired: "Documento", clock_fault: "Relógio", telemetry_conflict: "Conflito",
};
export const ruleName = (r) => RULES[r] || r;
// setRuleLabels fills RULES, RULES_SHORT and RULE_COLORS from the monitor's one table of the
// rules (GET /api/v1/config rule_labels, rules.Table): the entries above are only the fallback
// of a monitor that does not send it.
export function setRuleLabels(labels) {
  for (const r of labels || []) {
    if (r.name) RULES[r.id] = r.name;
    if (r.short) RULES_SHORT[r.id] = r.short;
    if (r.color) RULE_COLORS[r.id] = r.color;
    if (r.no_limit) NO_LIMIT.add(r.id); else NO_LIMIT.delete(r.id);
  }
}
// NO_LIMIT are the rules whose episodes' limit is no limit of the law (rules.Table no_limit);
// telemetry_fault's is the fallback of a monitor that does not say.
const NO_LIMIT = new Set(["telemetry_fault"]);
export const RULE_COLORS = {
  speed: "#d64545", hours: "#7d5ba6", sensitive_zone_sound: "#e07a10", boarding_sound: "#c9a227",
  noise_limit: "#d35d90", route_deviation: "#2f7ed8", parked_public_road: "#5d6d7e", telemetry_fault: "#17a2b8",
  document_expired: "#8d6e63", clock_fault: "#607d8b", telemetry_conflict: "#b71c1c",
};
export const ROLES = { viewer: "Observador", fiscal: "Fiscal", supervisor: "Supervisor", autoridade: "Autoridade competente", admin: "Administrador", licensee: "Permissionário" };
// setAuthorityTitle names the role autoridade as the profile does (authority.title, e.g.
// "Autoridade Julgadora de Posturas").
export function setAuthorityTitle(title) { if (title) ROLES.autoridade = title; }
export const authorityTitle = () => ROLES.autoridade;
export const ROLE_RANK = { viewer: 1, fiscal: 2, supervisor: 3, autoridade: 4, admin: 5 };
export const CATEGORIES = {
  hospital: "Hospital", health: "Unidade de saúde", school: "Escola", library: "Biblioteca",
  public_office: "Repartição pública", church: "Igreja / templo",
};
export const DEVICES = { gps: "GPS", tacho: "Tacógrafo", slm: "Decibelímetro" };
export const DEVICE_STATES = { ok: "ok", no_fix: "sem fix", missing: "ausente" };
export const CLOSED = { cleared: "Encerrado", interrupted: "Interrompido (sem dados)" };
// CLOSED_HELP explains each way an episode ends, where its status is shown (a chip's title and
// the legend of the Alertas page): "Interrompido" puzzles whoever reads it first.
export const CLOSED_HELP = {
  open: "Em andamento: a condição ainda é observada nos dados do veículo.",
  cleared: "Encerrado: os dados mostraram a condição cessar pelo tempo de encerramento da regra.",
  interrupted: "Interrompido: os dados do veículo (ou do instrumento da regra, como o decibelímetro de um episódio de ruído) " +
    "pararam antes de a condição cessar. O episódio termina na última leitura recebida: o fim não foi observado e a duração " +
    "é a mínima comprovada. Se dados atrasados chegarem e continuarem a série, o episódio é reaberto; a minuta registra a " +
    "interrupção entre os avisos ao agente.",
};
// CLOCK_HELP explains "relógio não confiável", a warning of the driver's coach whose batch was
// timed by the bridge's system clock (no GPS or RTC time).
export const CLOCK_HELP = "Relógio não confiável: o equipamento do permissionário registrou este alerta com o relógio do sistema, " +
  "sem hora de GPS nem de relógio de tempo real. A hora não é prova, então o alerta aparece como contexto e não é citado " +
  "na minuta: não serve para afirmar no auto que o condutor foi alertado, nem quando.";
// limitApplies says whether an episode's limit is a limit of the law that its value was judged
// against (rules.Table no_limit). A telemetry_fault episode's is not: its value is the GPS speed
// and its "limit" the speed from which the tachograph must be reporting (gps_min_kmh).
export function limitApplies(e) { return e.limit != null && !NO_LIMIT.has(e.rule); }
export const SOURCES = { tacho: "tacógrafo", gps: "GPS", slm: "decibelímetro", clock: "relógio", sound: "decibelímetro" };
export const KINDS = { tacho: "Tacógrafo", gps: "GPS", sound: "Decibelímetro" };
export const DRAFT_STATUS = { draft: "Pendente", issued: "Emitido", dismissed: "Arquivado" };
export const AUDIT_ACTIONS = {
  login: "Entrada no sistema", login_failed: "Falha de login", login_throttled: "Login bloqueado (tentativas demais)", logout: "Saída do sistema",
  "draft.read": "Minuta consultada", "draft.pdf": "PDF da minuta gerado", "draft.export": "Minuta exportada (selada)",
  "user.create": "Usuário criado", "user.update": "Usuário alterado",
  "draft.issue": "Auto emitido", "draft.dismiss": "Minuta arquivada",
  "case.issue": "Processo aberto (cálculo da penalidade)", "case.import": "Auto em papel importado",
  "case.notify": "Notificação registrada", "case.defence": "Defesa registrada", "case.decide": "Decisão sobre a defesa",
  "case.appeal": "Recurso registrado", "case.decide_appeal": "Decisão sobre o recurso", "case.notify_appeal_decision": "Notificação da decisão do recurso",
  "case.pay": "Pagamento registrado", "case.divida_ativa": "Inscrição em dívida ativa", "case.suspension": "Suspensão aplicada",
  "registry.licensee.create": "Permissionário cadastrado", "registry.licensee.update": "Permissionário alterado",
  "registry.licensee.delete": "Permissionário excluído", "registry.vehicle.create": "Veículo cadastrado",
  "registry.vehicle.update": "Veículo alterado", "registry.vehicle.delete": "Veículo excluído",
  "registry.driver.create": "Condutor cadastrado", "registry.driver.update": "Condutor alterado",
  "registry.driver.delete": "Condutor excluído", "registry.driver.read": "Consulta a dados de condutor",
  "registry.drivers.list": "Consulta à lista de condutores", "registry.expiring.drivers": "Consulta a vencimentos de condutores",
  "episode.ack": "Alerta reconhecido", "episode.assign": "Alerta atribuído", "episode.comment": "Comentário em alerta",
  "episode.clear": "Alerta encerrado (triagem)", "episode.reopen": "Alerta reaberto", "episode.escalate": "Alerta escalonado à supervisão",
};
// auditObject: "draft:PIU-001.speed.…" → "minuta PIU-001.speed.…", "registry:drivers" → "cadastro: condutores".
const AUDIT_OBJECTS = { user: "usuário", draft: "minuta", driver: "condutor", licensee: "permissionário", vehicle: "veículo", case: "auto", episode: "episódio" };
const AUDIT_REGISTRY = { drivers: "condutores", expiring: "vencimentos", licensees: "permissionários", vehicles: "veículos" };
export function auditObject(o) {
  if (!o) return "";
  const i = o.indexOf(":");
  if (i < 0) return o;
  const kind = o.slice(0, i), id = o.slice(i + 1);
  if (kind === "registry") return "cadastro: " + (AUDIT_REGISTRY[id] || id);
  return AUDIT_OBJECTS[kind] ? `${AUDIT_OBJECTS[kind]} ${id}` : o;
}

// The case workflow (docs/api.md, "Cases").
export const CASE_STATES = {
  issued: "Emitido", notified: "Notificado", defence_filed: "Defesa pendente", defence_rejected: "Defesa indeferida",
  defence_accepted: "Defesa acolhida", confirmed: "Multa confirmada", paid: "Pago", dividaativa: "Dívida ativa",
  dismissed: "Arquivado", annulled: "Anulado", appeal_filed: "Recurso pendente", appeal_accepted: "Recurso provido",
};
export const CASE_STATE_TONE = {
  issued: "warn", notified: "info", defence_filed: "info", defence_rejected: "danger", defence_accepted: "neutral",
  confirmed: "danger", paid: "ok", dividaativa: "danger", dismissed: "neutral", annulled: "neutral", appeal_filed: "info", appeal_accepted: "neutral",
};
export const CASE_ACTIONS = {
  issue: "Emissão do auto", import: "Importação do auto em papel", notify: "Notificação do autuado",
  defence: "Defesa apresentada", decide: "Decisão sobre a defesa", pay: "Pagamento da multa",
  divida_ativa: "Inscrição em dívida ativa", suspension: "Suspensão aplicada",
  delivery_failed: "Tentativa de entrega frustrada", notify_decision: "Notificação da decisão", annul: "Anulação de ofício",
  appeal: "Recurso interposto", decide_appeal: "Decisão sobre o recurso", notify_appeal_decision: "Notificação da decisão do recurso",
};
export const NOTIFY_MODES = { in_person: "pessoalmente (em mãos)", mail: "por correio com AR", electronic: "por meio eletrônico", edital: "por edital" };
export const ORIGINS = { draft: "Monitor", manual: "Lavrado na rua", import: "Importado (papel)" };

const WEEKDAYS = ["domingo", "segunda-feira", "terça-feira", "quarta-feira", "quinta-feira", "sexta-feira", "sábado"];
// weekday("2026-11-23"): segunda-feira.
export function weekday(iso) {
  const [y, m, d] = iso.split("-").map(Number);
  return WEEKDAYS[new Date(Date.UTC(y, m - 1, d)).getUTCDay()];
}
// daysUntil("2026-12-20"): whole days from today (in the municipality) to that day; negative
// when it is past.
export function daysUntil(iso, today = localDate()) {
  const a = today.split("-").map(Number), b = iso.split("-").map(Number);
  return Math.round((Date.UTC(b[0], b[1] - 1, b[2]) - Date.UTC(a[0], a[1] - 1, a[2])) / 86400000);
}
// fmtBRL("3360.00"): R$ 3.360,00.
export function fmtBRL(v) {
  if (v == null || v === "" || Number.isNaN(+v)) return "—";
  return new Intl.NumberFormat("pt-BR", { style: "currency", currency: "BRL" }).format(+v);
}
// fmtCNPJ("11222333000181"): 11.222.333/0001-81 (also the alphanumeric CNPJ).
export function fmtCNPJ(s) {
  if (!s) return "—";
  const c = String(s).replace(/[^0-9A-Za-z]/g, "").toUpperCase();
  if (c.length !== 14) return s;
  return `${c.slice(0, 2)}.${c.slice(2, 5)}.${c.slice(5, 8)}/${c.slice(8, 12)}-${c.slice(12)}`;
}
// plural(2, "dia", "dias"): "2 dias".
export const plural = (n, one, many) => `${n} ${Math.abs(n) === 1 ? one : many}`;
export const AREAS = {
  rural: "Residencial rural", strict_residential: "Estritamente residencial / hospitais / escolas",
  mixed_residential: "Mista, predominantemente residencial", mixed_commercial: "Mista, comercial/administrativa",
  mixed_leisure: "Mista, cultural/lazer/turismo", industrial: "Predominantemente industrial",
};
export const DETAILS = { silent: "tacógrafo silencioso", contradicts_gps: "tacógrafo contradiz o GPS" };
// The registry's document kinds, as registry/labels.go names them.
export const DOCUMENT_LABELS = {
  licenca: "licença de funcionamento", csv: "Certificado de Segurança Veicular (CSV)", inspecao: "inspeção técnica veicular",
  atestado_medico: "atestado médico de aptidão física e mental", cnh: "Carteira Nacional de Habilitação (CNH)",
  afericao_tacografo: "aferição do tacógrafo", verificacao_dispositivo: "verificação/calibração do equipamento",
};
// documentText: "inspeção técnica veicular nº INS-2025/118" (an expired item of the registry, as
// a document_expired episode carries it).
export function documentText(doc, kind, withDate = false) {
  const k = (doc && doc.document) || kind;
  if (!k) return "";
  const label = (doc && doc.label) || DOCUMENT_LABELS[k] || k;
  return label + (doc && doc.number ? ` nº ${doc.number}` : "") + (withDate && doc && doc.valid_until ? `, válido até ${isoDateBR(doc.valid_until)}` : "");
}

// fmtOpeningHours reads an OpenStreetMap opening_hours value in Portuguese for the common
// forms ("Mo-Fr 07:00-12:00,13:00-22:00; PH off" → "seg a sex 07:00–12:00, 13:00–22:00;
// feriados: fechado"); anything it does not know is left as written.
const OSM_DAYS = { Mo: "seg", Tu: "ter", We: "qua", Th: "qui", Fr: "sex", Sa: "sáb", Su: "dom", PH: "feriados" };
export function fmtOpeningHours(s) {
  if (!s) return "";
  if (s.trim() === "24/7") return "todos os dias, 24 horas";
  return s.split(";").map((rule) => {
    const m = rule.trim().match(/^((?:Mo|Tu|We|Th|Fr|Sa|Su|PH)(?:[-,](?:Mo|Tu|We|Th|Fr|Sa|Su|PH))*)\s+(.+)$/);
    if (!m) return rule.trim();
    const days = m[1].replace(/[A-Z][a-z]|PH/g, (d) => OSM_DAYS[d] || d).replace(/-/g, " a ").replace(/,/g, ", ");
    const times = m[2].trim() === "off" ? "fechado" : m[2].replace(/-/g, "–").replace(/,/g, ", ");
    return days === "feriados" ? `feriados: ${times}` : `${days} ${times}`;
  }).join("; ");
}
