/**
 * RunsFilter → the string form, the one a person would type: parseRunsFilter(formatRunsFilter(f)) deep-equals f for
 * every filter the RunsFilter Schema accepts (tested with generated filters in runs-filter.test.ts). Tokens come in a
 * fixed order (time, then the run's facts, then numbers, then text), so one filter has one string.
 */
import type { RunsFilter } from "./schema.js";
import { writeDate, writeDuration, writeNumber, writeText } from "./values.js";

type Bounds = { readonly min?: number; readonly max?: number; readonly min_exclusive?: true; readonly max_exclusive?: true };

/** `cost:1`, or `cost>=0.05 cost<1`: one token per bound. */
function range(field: string, r: Bounds, write: (n: number) => string): string[] {
  if (r.min !== undefined && r.max !== undefined && Object.is(r.min, r.max) && !r.min_exclusive && !r.max_exclusive) return [`${field}:${write(r.min)}`];
  const out: string[] = [];
  if (r.min !== undefined) out.push(`${field}${r.min_exclusive ? ">" : ">="}${write(r.min)}`);
  if (r.max !== undefined) out.push(`${field}${r.max_exclusive ? "<" : "<="}${write(r.max)}`);
  return out;
}

const list = (field: string, values: readonly string[] | undefined, negated = false): string[] =>
  values ? [`${negated ? "-" : ""}${field}:${values.map(writeText).join(",")}`] : [];

export function formatRunsFilter(f: RunsFilter): string {
  const out: string[] = [];
  if (f.since !== undefined) out.push(`since:${f.since}`);
  if (f.from !== undefined) out.push(`from:${writeDate(f.from)}`);
  if (f.to !== undefined) out.push(`to:${writeDate(f.to)}`);
  out.push(...list("status", f.status), ...list("status", f.status_not, true));
  out.push(...list("agent", f.agent), ...list("agent", f.agent_not, true));
  if (f.config_version !== undefined) out.push(`version:${f.config_version}`);
  out.push(...list("env", f.environment), ...list("env", f.environment_not, true));
  out.push(...list("release", f.release), ...list("release", f.release_not, true));
  out.push(...list("model", f.model), ...list("model", f.model_not, true));
  for (const t of f.tags_all ?? []) out.push(`tag:${writeText(t)}`);
  out.push(...list("tag", f.tags_any), ...list("tag", f.tags_none, true));
  if (f.end_user !== undefined) out.push(`user:${writeText(f.end_user)}`);
  if (f.session !== undefined) out.push(`session:${writeText(f.session)}`);
  if (f.id_prefix !== undefined) out.push(`id:${writeText(f.id_prefix)}`);
  for (const c of f.metadata ?? []) {
    const key = `meta.${writeText(c.key)}`;
    if (!("value" in c)) out.push(`${c.op === "exists" ? "" : "-"}${key}:*`);
    else if (typeof c.value === "string") out.push(`${key}${c.op === "=" ? ":" : "!="}${writeText(c.value)}`);
    else out.push(`${key}${c.op}${writeNumber(c.value)}`);
  }
  if (f.cost) out.push(...range("cost", f.cost, writeNumber));
  if (f.duration_ms) out.push(...range("duration", f.duration_ms, writeDuration));
  if (f.tokens) out.push(...range("tokens", f.tokens, writeNumber));
  for (const s of f.score ?? []) {
    const field = `score.${writeText(s.name)}`;
    out.push(...(s.min === undefined && s.max === undefined ? [`${field}:*`] : range(field, s, writeNumber)));
  }
  if (f.has_error !== undefined) out.push(f.has_error ? "has:error" : "-has:error");
  if (f.include_experiments) out.push("is:experiment");
  if (f.include_judge) out.push("is:judge");
  for (const t of f.text ?? []) out.push(writeText(t));
  for (const t of f.text_not ?? []) out.push(`-${writeText(t)}`);
  return out.join(" ");
}
