/**
 * A span's links (otlp/span-links.ts, in its end event's payload) as its panel shows them: each with `run`, the
 * sdk_run_id of the linked trace's run when that trace is a run of the same project (the panel links to it and to the
 * span, named by the run's agent), else null (the ids are shown as they are). Only the span's own project is looked in.
 */
import type { RunRecord } from "../../core/events/run.js";
import type { WebDeps } from "../deps.js";

export interface SpanLink {
  readonly trace_id: string;
  readonly span_id: string;
  readonly attributes: Record<string, unknown>;
  /** The linked run's sdk_run_id when it is a run of this project; null otherwise. */
  readonly run: string | null;
  /** That run's agent ("" when it has none); null when `run` is. */
  readonly agent_name: string | null;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

export async function linkTargets(deps: WebDeps, run: RunRecord, stored: unknown): Promise<SpanLink[]> {
  if (!Array.isArray(stored)) return [];
  const links = stored.filter(isObj).filter((l) => typeof l.trace_id === "string" && typeof l.span_id === "string");
  const traces = [...new Set(links.map((l) => l.trace_id as string))];
  // One read for every linked trace (up to 32), the span's own run already at hand.
  const others = traces.filter((t) => t !== run.external_id).map((t) => ({ project_id: run.project_id, external_id: t }));
  const known = new Map<string, RunRecord>([[run.external_id, run], ...(others.length ? await deps.events.loadRuns(others) : []).map((r) => [r.external_id, r] as const)]);
  return links.map((l) => {
    const linked = known.get(l.trace_id as string);
    return {
      trace_id: l.trace_id as string,
      span_id: l.span_id as string,
      attributes: isObj(l.attributes) ? l.attributes : {},
      run: linked ? (l.trace_id as string) : null,
      agent_name: linked ? linked.agent_name ?? "" : null,
    };
  });
}
