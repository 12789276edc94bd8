/**
 * A big agent run for the trace view's bench and browser tests: a root "agent" span, then turns of a planner node
 * holding LLM calls (chat messages in, an answer out, tokens and cost) and tool calls, every third turn a subgraph
 * node with its own call; every span a start and an end event, as the SDKs send them. `spans` spans in all;
 * the span `needle-<n>` (a tool call among the last ones) carries `needle` in its output, for search.
 */
export interface TraceRunOptions {
  spans: number;
  /** Start of the run, epoch ms. */
  t0?: number;
  /** Text that only the span needle-<n> carries in its output. */
  needle?: string;
}

type Event = Record<string, unknown>;

export function traceRunEvents(id: string, opts: TraceRunOptions): Event[] {
  const t0 = opts.t0 ?? Date.now() - 3_600_000;
  const at = (ms: number) => new Date(t0 + ms).toISOString();
  const events: Event[] = [{ sdk_run_id: id, event_type: "run_start", agent_name: "trace-bench", occurred_at: at(0), payload: { input: { question: "Plan a week in Lisbon" } } }];
  const span = (type: "step" | "tool_call", spanId: string, parent: string | null, start: number, dur: number, startPayload: Event, endPayload: Event) => {
    const ids = { span_id: spanId, ...(parent ? { parent_span_id: parent } : {}) };
    events.push({ sdk_run_id: id, event_type: type, ...ids, occurred_at: at(start), payload: { ...startPayload, phase: "start" } });
    events.push({ sdk_run_id: id, event_type: type, ...ids, occurred_at: at(start + dur), payload: { ...endPayload, phase: "end", duration_ms: dur } });
  };
  const needleAt = Math.max(1, opts.spans - 12);
  let needled = false;
  let made = 1;
  let clock = 10;
  const root = "agent";
  const bodies: (() => void)[] = [];
  for (let turn = 0; made < opts.spans; turn++) {
    const node = `turn-${turn}`;
    const startedAt = clock;
    made++;
    const children: (() => void)[] = [];
    for (let c = 0; c < 6 && made < opts.spans; c++, made++) {
      const sid = `${node}-${c}`;
      const t = clock + 1;
      clock += 900;
      if (c % 3 === 2) {
        const isNeedle: boolean = !needled && made >= needleAt;
        needled ||= isNeedle;
        const spanId = isNeedle ? `needle-${made}` : sid;
        children.push(() => span("tool_call", spanId, node, t, 400, { tool_name: "search_web", input: { query: `lisbon day ${turn}` } },
          { tool_name: "search_web", output: isNeedle && opts.needle ? `found ${opts.needle} in the results` : `3 results for day ${turn}` }));
      } else if (c === 4 && turn % 3 === 0 && made + 1 < opts.spans) {
        const sub = `${sid}-sub`;
        made++;
        children.push(() => {
          span("step", sid, node, t, 800, { node_name: "booking" }, { node_name: "booking", output: { booked: true } });
          span("step", sub, sid, t + 10, 700, { kind: "llm", node_name: "ChatOpenAI", input: [{ role: "user", content: "confirm the booking" }] },
            { kind: "llm", node_name: "ChatOpenAI", model: "gpt-4o-mini", provider: "openai", prompt_tokens: 80, completion_tokens: 12, output: { role: "assistant", content: "Booked." } });
        });
      } else {
        children.push(() => span("step", sid, node, t, 850, {
          kind: "llm", node_name: "ChatOpenAI",
          input: [{ role: "system", content: "You plan trips." }, { role: "user", content: `What should I do on day ${turn}? ${"Tell me more. ".repeat(10)}` }],
        }, {
          kind: "llm", node_name: "ChatOpenAI", model: "gpt-4o", provider: "openai", prompt_tokens: 320, completion_tokens: 60,
          output: { role: "assistant", content: `Day ${turn}: the Alfama in the morning, a tram ride after lunch.` },
        }));
      }
    }
    const endedAt = clock;
    clock += 20;
    bodies.push(() => {
      span("step", node, root, startedAt, endedAt - startedAt, { node_name: "planner", input: { turn } }, { node_name: "planner", output: { done: true } });
      for (const c of children) c();
    });
  }
  span("step", root, null, 5, clock, { node_name: "agent" }, { node_name: "agent" });
  // The root's end event goes last, as a live run would send it.
  const rootEnd = events.pop()!;
  for (const b of bodies) b();
  events.push(rootEnd, { sdk_run_id: id, event_type: "run_end", occurred_at: at(clock + 10), payload: { output: { plan: "done" } } });
  return events;
}

/** Sends events through the batch API in batches of at most 1,000 events and ~900 KiB. */
export async function sendBatches(url: string, key: string, events: readonly Event[]): Promise<void> {
  for (let i = 0; i < events.length;) {
    let end = i;
    for (let bytes = 0; end < events.length && end - i < 1000 && bytes < 900 * 1024; end++) bytes += JSON.stringify(events[end]).length;
    const r = await fetch(`${url}/api/ingest/batch`, {
      method: "POST", headers: { "content-type": "application/json", authorization: `Bearer ${key}` }, body: JSON.stringify({ events: events.slice(i, end) }),
    });
    if (r.status !== 207) throw new Error(`ingest answered ${r.status}: ${(await r.text()).slice(0, 300)}`);
    i = end;
  }
}
