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
};
export const RULES_SHORT = {
  speed: "Velocidade", hours: "Horário", sensitive_zone_sound: "Local sensível", boarding_sound: "Embarque",
  noise_limit: "Ruído NBR", route_deviation: "Itinerário", parked_public_road: "Estacionado",
  telemetry_fault: "Telemetria", document_expired: "Documento",
};
export const ruleName = (r) => RULES[r] || r;
export const RULE_COLORS = {
  speed: "#d64545", hours: "#7d5ba6", sensitive_zone_sound: "#e07a10", boarding_sound: "#c9a227",
  noise_limit: "#d35d90", route_deviation: "#2f7ed8", parked_public_road: "#5d6d7e", telemetry_fault: "#17a2b8",
  document_expired: "#8d6e63",
};
export const ROLES = { viewer: "Observador", fiscal: "Fiscal", supervisor: "Supervisor", admin: "Administrador" };
export const ROLE_RANK = { viewer: 1, fiscal: 2, supervisor: 3, admin: 4 };
export const CATEGORIES = {
  hospital: "Hospital", health: "Unidade de saúde", school: "Escola", library: "Biblioteca",
  public_office: "Repartição pública", church: "Igreja / templo",
};
export const DEVICES = { gps: "GPS", tacho: "Tacógrafo", slm: "Decibelímetro" };
export const DEVICE_STATES = { ok: "ok", no_fix: "sem fix", missing: "ausente" };
export const CLOSED = { cleared: "Encerrado", interrupted: "Interrompido (sem dados)" };
export const SOURCES = { tacho: "tacógrafo", gps: "GPS", slm: "decibelímetro", clock: "relógio", sound: "decibelímetro" };
export const KINDS = { tacho: "Tacógrafo", gps: "GPS", sound: "Decibelímetro" };
export const DRAFT_STATUS = { draft: "Pendente", issued: "Emitido", dismissed: "Arquivado" };
export const AUDIT_ACTIONS = {
  login: "Entrada no sistema", login_failed: "Falha de login", logout: "Saída do sistema",
  "user.create": "Usuário criado", "user.update": "Usuário alterado", "draft.export": "Auto exportado",
  "draft.issue": "Auto emitido", "draft.dismiss": "Minuta arquivada",
};
export const AREAS = {
  rural: "Residencial rural", strict_residential: "Estritamente residencial / hospitais / escolas",
  mixed_residential: "Mista, predominantemente residencial", mixed_commercial: "Mista, comercial/administrativa",
  mixed_leisure: "Mista, cultural/lazer/turismo", industrial: "Predominantemente industrial",
};
export const DETAILS = { silent: "tacógrafo silencioso", contradicts_gps: "tacógrafo contradiz o GPS" };
