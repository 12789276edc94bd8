// Display formatters shared by the server (Nunjucks filters, web/common/render.ts) and the browser
// (live updates), so a row rendered by either looks the same. Plain ES module, no dependencies.

/** 1234 → "1.2 s", 95 → "95 ms", 3_723_000 → "1 h 2 m". Null/undefined → "—". */
export function duration(ms) {
  if (ms === null || ms === undefined || ms === "" || Number.isNaN(Number(ms))) return "—";
  ms = Number(ms);
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s < 10 ? s.toFixed(2) : s.toFixed(1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m} m ${Math.round(s % 60)} s`;
  const h = Math.floor(m / 60);
  return h < 48 ? `${h} h ${m % 60} m` : `${Math.floor(h / 24)} d ${h % 24} h`;
}

/** US dollars with precision that suits LLM costs: $0.0042, $1.23, $1,234. */
export function usd(v) {
  const n = Number(v ?? 0);
  if (!Number.isFinite(n) || n === 0) return "$0";
  if (Math.abs(n) < 0.01) return `$${n.toPrecision(2)}`;
  if (Math.abs(n) < 1000) return `$${n.toFixed(2)}`;
  return `$${Math.round(n).toLocaleString("en-US")}`;
}

/** 1234567 → "1.2M", 12345 → "12.3k", 999 → "999". */
export function count(v) {
  const n = Number(v ?? 0);
  if (!Number.isFinite(n)) return "—";
  if (Math.abs(n) >= 1e6) return `${(n / 1e6).toFixed(n >= 1e7 ? 0 : 1)}M`;
  if (Math.abs(n) >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return n.toLocaleString("en-US");
}

/** Absolute UTC time, compact: "2026-11-23 10:04:05". */
export function timestamp(iso) {
  if (!iso) return "—";
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return String(iso);
  return d.toISOString().replace("T", " ").slice(0, 19);
}

/** "just now", "42 s ago", "5 min ago", "3 h ago", "2 d ago". */
export function ago(iso, now = Date.now()) {
  if (!iso) return "—";
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return "—";
  const s = Math.max(0, Math.round((now - t) / 1000));
  if (s < 5) return "just now";
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86400)} d ago`;
}

/** A run's duration: ended − started, or the time elapsed so far for an open run. */
export function runDurationMs(run, now = Date.now()) {
  if (run.duration_ms !== undefined && run.duration_ms !== null) return Number(run.duration_ms);
  if (!run.started_at) return null;
  const end = run.ended_at ? new Date(run.ended_at).getTime() : now;
  return Math.max(0, end - new Date(run.started_at).getTime());
}

export const STATUS_LABELS = {
  running: "running",
  success: "success",
  error: "error",
  waiting_for_input: "waiting for input",
};

export const statusLabel = (s) => STATUS_LABELS[s] ?? String(s ?? "");
