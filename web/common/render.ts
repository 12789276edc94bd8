/**
 * Rendering for the dashboard pages: the shared Nunjucks environment of web/views.ts (autoescaped) plus the
 * display filters shared with the browser (web/static/format.js), so server-rendered and live-patched rows
 * look the same.
 */
import nunjucks from "nunjucks";
import type { Context } from "koa";
import * as fmt from "../static/format.js";
import { render, views } from "../views.js";

const escapeHtml = (s: string): string =>
  s.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

/** A time as an ISO string, or undefined when it is none (null, empty, not a date). */
function isoOf(v: unknown): string | undefined {
  if (v === null || v === undefined || v === "") return undefined;
  const d = v instanceof Date ? v : new Date(String(v));
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
}

/**
 * A <time> element: `text` of the time, its exact UTC time as the title; with `live`, the relative text is kept
 * current in the browser (data-ts: web/static/live.js's tick). "—" for no time.
 */
function timeElement(v: unknown, text: (iso: string) => string, live: boolean): nunjucks.runtime.SafeString | string {
  const iso = isoOf(v);
  if (!iso) return "—";
  const exact = `${fmt.timestamp(iso)} UTC`;
  return new nunjucks.runtime.SafeString(
    `<time datetime="${iso}" title="${escapeHtml(exact)}"${live ? ` data-ts="${iso}"` : ""}>${escapeHtml(text(iso))}</time>`,
  );
}

export function installFilters(env: nunjucks.Environment): void {
  env.addFilter("duration", fmt.duration);
  env.addFilter("usd", fmt.usd);
  env.addFilter("count", fmt.count);
  env.addFilter("ts", fmt.timestamp);
  env.addFilter("ago", (iso: string | null) => fmt.ago(iso));
  /** A past time as "5 min ago" that stays current without a reload, the exact time as its title. */
  env.addFilter("ago_time", (v: unknown) => timeElement(v, (iso) => fmt.ago(iso), true));
  /** A time as "2026-11-23 10:04:05 UTC" (an expiry, say: a future time), the same as its title. */
  env.addFilter("ts_time", (v: unknown) => timeElement(v, (iso) => `${fmt.timestamp(iso)} UTC`, false));
  env.addFilter("status_label", fmt.statusLabel);
  env.addFilter("run_duration", (run: Parameters<typeof fmt.runDurationMs>[0]) => fmt.duration(fmt.runDurationMs(run)));
  env.addFilter("clock", (iso: string | null) => fmt.timestamp(iso).slice(11));
  env.addFilter("day", (iso: string | null) => fmt.timestamp(iso).slice(0, 10));
  env.addFilter("score", (v: unknown) =>
    v === null || v === undefined ? "—" : typeof v === "number" ? (Number.isInteger(v) ? String(v) : v.toFixed(3)) : String(v));
  env.addFilter("signed", (d: number) => `${d > 0 ? "+" : d < 0 ? "−" : "±"}${Number.isInteger(d) ? Math.abs(d) : Math.abs(d).toFixed(3)}`);
  env.addFilter("delta_class", (d: number) => (d < 0 ? "text-error" : d > 0 ? "text-success" : "subtle"));
  env.addFilter("pretty_json", (v: unknown) => (typeof v === "string" ? v : JSON.stringify(v, null, 2)));
}
installFilters(views);

/** A full page (extends layout.njk). Pages show live data, so nothing is cached. */
export function renderPage(ctx: Context, template: string, vars: Record<string, unknown> = {}, status = 200): void {
  render(ctx, template, vars, status);
  ctx.set("Cache-Control", "no-store");
}

/** A fragment (no layout) that a live script swaps into the page. */
export const renderFragment = renderPage;

/** First value of a query parameter as a trimmed string, or undefined. */
export function queryParam(ctx: Context, name: string): string | undefined {
  const v = ctx.query[name];
  const s = (Array.isArray(v) ? v[0] : v)?.trim();
  return s ? s : undefined;
}
