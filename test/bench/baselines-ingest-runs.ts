/**
 * bench:baselines-ingest's runs (test/bench/baselines-ingest.ts): the synthetic fleet's runs recorded once, so the
 * in-process replay and ingest see the very same runs, turned into the events an agent sends (with the simulated
 * times as `occurred_at`) and posted to POST /api/ingest/batch.
 *
 * A run of minute t ends inside that minute, 1 to 59 s after it starts (spread evenly over the minute's runs), so a
 * window read at the last millisecond of a minute holds exactly the runs of its minutes. Its events: run_start at the
 * end minus the latency (whole milliseconds, the precision of ClickHouse's DateTime64(3): the recorded latency is
 * rounded to it), three tool_call ends a few ms before the end (a failed one carries `error`), run_end with tokens,
 * cost and the run's scores (`payload.scores`, created at the event's time), and for a failed run an `error` event
 * at the same time after it (ties go to arrival order: the run ends in error).
 */
import { Fleet, MINUTE, type Incident, type Run } from "./baselines-fleet.js";
import { agentName, type RunSource } from "./baselines-replay.js";

/** The runs of every agent and minute in [from, to), drawn from a Fleet in time order. */
export class RecordedRuns implements RunSource {
  private readonly runs: Run[][];
  readonly count: number;

  constructor(readonly size: number, incidents: readonly Incident[], readonly from: number, readonly to: number) {
    const fleet = new Fleet(size, incidents);
    this.runs = [];
    let count = 0;
    for (let t = from; t < to; t += MINUTE) {
      for (let i = 0; i < size; i++) {
        const r = fleet.runsInMinute(i, t).map((x) => ({ ...x, latency: Math.max(1, Math.round(x.latency * 1000)) / 1000 }));
        count += r.length;
        this.runs.push(r);
      }
    }
    this.count = count;
  }

  runsInMinute(i: number, t: number): Run[] {
    if (t < this.from || t >= this.to) throw new Error(`no runs recorded at ${new Date(t).toISOString()}`);
    return this.runs[((t - this.from) / MINUTE) * this.size + i]!;
  }
}

export type IngestEvent = Record<string, unknown>;
const iso = (ms: number) => new Date(ms).toISOString();

/** When the k-th of n runs of the minute starting at t ends: within [t + 1 s, t + 59 s]. */
export const endOf = (t: number, k: number, n: number): number => t + 1000 + Math.floor(((k + 0.5) * 58_000) / n);

/** The events of one run of `agent`, ending at `end`. */
export function runEvents(agent: string, id: string, run: Run, end: number): IngestEvent[] {
  const start = end - Math.round(run.latency * 1000);
  const events: IngestEvent[] = [{ event_type: "run_start", sdk_run_id: id, agent_name: agent, occurred_at: iso(start), payload: {} }];
  for (let c = 0; c < run.toolCalls; c++) {
    events.push({
      event_type: "tool_call", sdk_run_id: id, occurred_at: iso(end - run.toolCalls + c),
      payload: { tool_name: "search", phase: "end", ...(c < run.toolFails ? { error: "upstream timed out" } : {}) },
    });
  }
  const scores = [
    ...(run.correctness !== undefined ? [{ name: "correctness", value: run.correctness }] : []),
    ...(run.helpfulness !== undefined ? [{ name: "helpfulness", value: run.helpfulness }] : []),
  ];
  events.push({ event_type: "run_end", sdk_run_id: id, occurred_at: iso(end), payload: { total_tokens: run.tokens, cost_usd: run.cost, ...(scores.length ? { scores } : {}) } });
  if (run.error) events.push({ event_type: "error", sdk_run_id: id, occurred_at: iso(end), payload: { error_type: "AgentError", error_message: "the agent failed" } });
  return events;
}

/** The fleet's runs as events, one run's at a time, in time order. */
export function* fleetEvents(runs: RecordedRuns): Generator<IngestEvent[]> {
  for (let t = runs.from; t < runs.to; t += MINUTE) {
    for (let i = 0; i < runs.size; i++) {
      const list = runs.runsInMinute(i, t);
      for (let k = 0; k < list.length; k++) yield runEvents(agentName(i), `a${i}-${t}-${k}`, list[k]!, endOf(t, k, list.length));
    }
  }
}

/** The SLO stream's runs as events from `t0`: `perMinute` runs a minute of 1 s each, `bad(m)` of minute m's ending in error. */
export function* sloEvents(agent: string, t0: number, minutes: number, perMinute: number, bad: (m: number) => number): Generator<IngestEvent[]> {
  for (let m = 0; m < minutes; m++) {
    const t = t0 + m * MINUTE;
    for (let k = 0; k < perMinute; k++) {
      const end = endOf(t, k, perMinute);
      const id = `slo-${m}-${k}`;
      yield [
        { event_type: "run_start", sdk_run_id: id, agent_name: agent, occurred_at: iso(end - 1000), payload: {} },
        { event_type: "run_end", sdk_run_id: id, occurred_at: iso(end), payload: {} },
        ...(k < bad(m) ? [{ event_type: "error", sdk_run_id: id, occurred_at: iso(end), payload: { error_type: "AgentError" } }] : []),
      ];
    }
  }
}

/**
 * Posts the groups' events to POST /api/ingest/batch over `connections` connections, whole groups per batch of at
 * most `batchSize` events (a group is one run: its events stay in one batch and in order, since the batches of
 * different connections may be stored in either order); every event must be accepted. Returns the events sent.
 */
export async function sendAll(url: string, key: string, groups: Iterable<IngestEvent[]>, o: { batchSize: number; connections: number }): Promise<number> {
  const it = groups[Symbol.iterator]();
  let next = it.next();
  let sent = 0;
  const nextBatch = (): IngestEvent[] | undefined => {
    const batch: IngestEvent[] = [];
    while (!next.done && (batch.length === 0 || batch.length + next.value.length <= o.batchSize)) {
      batch.push(...next.value);
      next = it.next();
    }
    return batch.length > 0 ? batch : undefined;
  };
  await Promise.all(Array.from({ length: o.connections }, async () => {
    for (let batch = nextBatch(); batch; batch = nextBatch()) {
      const res = await fetch(`${url}/api/ingest/batch`, {
        method: "POST", headers: { authorization: `Bearer ${key}`, "content-type": "application/json" }, body: JSON.stringify({ events: batch }),
      });
      const text = await res.text();
      if (res.status !== 207 || !text.startsWith(`{"accepted":${batch.length},"rejected":0`)) throw new Error(`batch answered ${res.status}: ${text.slice(0, 500)}`);
      sent += batch.length;
    }
  }));
  return sent;
}
