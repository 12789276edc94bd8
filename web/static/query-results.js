// How the /query page reads a query's answer (web/static/query.js): column types, cells, the chart's series and a
// refusal's message. Plain functions without the DOM, so they are tested on their own (web/query/query-results.test.ts).

/** The type inside Nullable(…) and LowCardinality(…). */
export function baseType(type) {
  let t = String(type ?? "").trim();
  for (let m = /^(?:Nullable|LowCardinality)\((.*)\)$/.exec(t); m; m = /^(?:Nullable|LowCardinality)\((.*)\)$/.exec(t)) t = m[1].trim();
  return t;
}

/** Integers, floats and decimals (the same test as the server's file export, web/query/result-file.ts). */
export const isNumericType = (type) => /^(U?Int\d+|Float\d+|Decimal(\d+)?\b|BFloat16)/.test(baseType(type));
/** Date, Date32, DateTime, DateTime('tz'), DateTime64(p, 'tz'). */
export const isTimeType = (type) => /^(Date|Date32|DateTime|DateTime64)(\(|$)/.test(baseType(type));

/** "1 row", "1,000 rows". */
export const rowCount = (n) => `${Number(n).toLocaleString("en-US")} row${n === 1 ? "" : "s"}`;

/** A cell past this many characters, or of more than one line, is folded to its start. */
export const FOLD_AT = 120;

/** A cell's HTML (`esc` escapes text): NULL marked, arrays and objects as JSON, long text folded. */
export function cellHtml(value, esc) {
  if (value === null || value === undefined) return '<span class="null">NULL</span>';
  const text = typeof value === "object" ? JSON.stringify(value) : String(value);
  if (text.length <= FOLD_AT && !text.includes("\n")) return esc(text);
  const head = text.split("\n", 1)[0].slice(0, 80);
  return `<details class="fold"><summary>${esc(head)}…</summary><pre>${esc(text)}</pre></details>`;
}

/**
 * A time as ClickHouse writes one ("2026-12-06 10:04:05.123", "2026-12-06"), in seconds; UTC when it names no zone
 * (the documented tables' times are UTC). NaN when it is none.
 */
export function timeOf(v) {
  if (v === null || v === undefined || v === "") return NaN;
  if (typeof v === "number") return v;
  let s = String(v).trim().replace(" ", "T");
  if (/^\d{4}-\d{2}-\d{2}T[\d:.]+$/.test(s)) s += "Z";
  return Date.parse(s) / 1000;
}

/**
 * The chart of an answer: its first numeric column (y) over its first date/time column (x), points in time order,
 * rows without both values left out; null when the answer has no such pair or no point.
 */
export function chartSeries(columns, rows) {
  const xi = columns.findIndex((c) => isTimeType(c.type));
  const yi = columns.findIndex((c, i) => i !== xi && isNumericType(c.type));
  if (xi < 0 || yi < 0) return null;
  const points = [];
  for (const r of rows) {
    const x = timeOf(r[xi]);
    const y = r[yi] === null || r[yi] === undefined ? NaN : Number(r[yi]);
    if (Number.isFinite(x) && Number.isFinite(y)) points.push([x, y]);
  }
  if (points.length === 0) return null;
  points.sort((a, b) => a[0] - b[0]);
  return { x: columns[xi].name, y: columns[yi].name, xs: points.map((p) => p[0]), ys: points.map((p) => p[1]) };
}

/**
 * What a refused or failed query's answer says: its message, the field it names and the bound it hit
 * (`{error: {code, message, field?, limit?}}`, or `{error: "…", field?, limit?}`).
 */
export function refusalText(status, answer) {
  const e = answer?.error;
  const message = (typeof e === "object" && e !== null ? e.message : e) || `the server answered HTTP ${status}`;
  const field = (typeof e === "object" && e !== null ? e.field : undefined) ?? answer?.field;
  const limit = (typeof e === "object" && e !== null ? e.limit : undefined) ?? answer?.limit;
  const said = [field ? `field: ${field}` : "", limit ? `limit: ${limit}` : ""].filter(Boolean).join(", ");
  return `Refused: ${message}${said ? ` (${said})` : ""}`;
}
