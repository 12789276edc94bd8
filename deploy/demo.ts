/**
 * `runwatch demo`: a few realistic runs, sent through the real ingest API (single and batch), so a newcomer
 * sees a populated dashboard at once: a finished research run whose trace nests LLM calls of two models and
 * parallel tool calls under their nodes, with a human approval, a run that
 * failed, one waiting for input, and one still running.
 */
type DemoEvent = {
  event_type: string;
  sdk_run_id: string;
  agent_name?: string;
  occurred_at: string;
  payload: Record<string, unknown>;
  span_id?: string;
  parent_span_id?: string;
};

export interface DemoRun {
  readonly sdk_run_id: string;
  readonly agent_name: string;
  readonly expected_status: "success" | "error" | "waiting_for_input" | "running";
  readonly events: DemoEvent[];
}

const LONG_RESULT = Array.from({ length: 12 }, (_, i) =>
  `Result ${i + 1}: LangGraph checkpointers persist graph state between steps so a run can pause for a human and resume later.`).join(" ");

export function demoRuns(now = Date.now()): DemoRun[] {
  // Unique per invocation, so running the demo twice adds runs instead of appending to the old ones.
  const tag = `${new Date(now).toISOString().replace(/[-:T]/g, "").slice(2, 12)}-${Math.random().toString(36).slice(2, 6)}`;
  const at = (minutesAgo: number, seconds = 0) => new Date(now - minutesAgo * 60_000 + seconds * 1000).toISOString();
  const research = `demo-research-${tag}`;
  const support = `demo-support-${tag}`;
  const review = `demo-review-${tag}`;
  const etl = `demo-etl-${tag}`;
  return [
    {
      sdk_run_id: research, agent_name: "research-assistant", expected_status: "success",
      events: [
        { event_type: "run_start", sdk_run_id: research, agent_name: "research-assistant", occurred_at: at(18), payload: { framework: "langgraph", input: { question: "How do LangGraph checkpointers work?" } } },
        // Spans: each node holds its LLM calls (their own model, tokens and cost) and tools; the run's totals are their sums.
        { event_type: "step", sdk_run_id: research, occurred_at: at(18, 1), span_id: "plan", payload: { node_name: "plan", phase: "start" } },
        { event_type: "step", sdk_run_id: research, occurred_at: at(18, 1), span_id: "plan-llm", parent_span_id: "plan", payload: { kind: "llm", node_name: "ChatOpenAI", phase: "start", model: "gpt-4o-mini", provider: "openai", input: [{ role: "user", content: "Plan searches for: How do LangGraph checkpointers work?" }] } },
        { event_type: "step", sdk_run_id: research, occurred_at: at(18, 3), span_id: "plan-llm", parent_span_id: "plan", payload: { kind: "llm", node_name: "ChatOpenAI", phase: "end", model: "gpt-4o-mini", provider: "openai", prompt_tokens: 820, completion_tokens: 96, cached_tokens: 512, duration_ms: 1910, output: "Search: langgraph checkpointer; langgraph interrupt" } },
        { event_type: "step", sdk_run_id: research, occurred_at: at(18, 3), span_id: "plan", payload: { node_name: "plan", phase: "end", duration_ms: 2140, output: { queries: ["langgraph checkpointer", "langgraph interrupt"] } } },
        { event_type: "step", sdk_run_id: research, occurred_at: at(18, 4), span_id: "search", payload: { node_name: "search", phase: "start" } },
        { event_type: "tool_call", sdk_run_id: research, occurred_at: at(18, 4), span_id: "search-1", parent_span_id: "search", payload: { tool_name: "web_search", phase: "start", input_preview: "langgraph checkpointer" } },
        { event_type: "tool_call", sdk_run_id: research, occurred_at: at(18, 4), span_id: "search-2", parent_span_id: "search", payload: { tool_name: "web_search", phase: "start", input_preview: "langgraph interrupt" } },
        { event_type: "tool_call", sdk_run_id: research, occurred_at: at(18, 6), span_id: "search-1", parent_span_id: "search", payload: { tool_name: "web_search", phase: "end", output_preview: LONG_RESULT, duration_ms: 1830 } },
        { event_type: "tool_call", sdk_run_id: research, occurred_at: at(18, 7), span_id: "search-2", parent_span_id: "search", payload: { tool_name: "web_search", phase: "end", output_preview: "interrupt() pauses a node until Command(resume=...)", duration_ms: 2410 } },
        { event_type: "step", sdk_run_id: research, occurred_at: at(18, 7), span_id: "search", payload: { node_name: "search", phase: "end", duration_ms: 2500 } },
        { event_type: "human_input_requested", sdk_run_id: research, occurred_at: at(18, 8), payload: { question: "Publish the summary to the team wiki?", context: { draft_words: 412 }, channel: "dashboard" } },
        { event_type: "human_input_received", sdk_run_id: research, occurred_at: at(16), payload: { response: "Yes, publish it", responded_by: "alice@example.com" } },
        { event_type: "step", sdk_run_id: research, occurred_at: at(16, 1), span_id: "write", payload: { node_name: "write", phase: "start" } },
        { event_type: "step", sdk_run_id: research, occurred_at: at(16, 1), span_id: "write-llm", parent_span_id: "write", payload: { kind: "llm", node_name: "ChatAnthropic", phase: "start", model: "claude-sonnet-4-5", provider: "anthropic", input: [{ role: "user", content: "Write a 400-word summary from these results" }] } },
        { event_type: "step", sdk_run_id: research, occurred_at: at(16, 9), span_id: "write-llm", parent_span_id: "write", payload: { kind: "llm", node_name: "ChatAnthropic", phase: "end", model: "claude-sonnet-4-5", provider: "anthropic", prompt_tokens: 4410, completion_tokens: 1314, duration_ms: 7800, output: "LangGraph checkpointers save the graph state after every step…" } },
        { event_type: "step", sdk_run_id: research, occurred_at: at(16, 9), span_id: "write", payload: { node_name: "write", phase: "end", duration_ms: 7950, output: { words: 412 } } },
        { event_type: "run_end", sdk_run_id: research, occurred_at: at(16, 10), payload: { output: { url: "https://wiki.example.com/langgraph-checkpointers" } } },
      ],
    },
    {
      sdk_run_id: support, agent_name: "support-triage", expected_status: "error",
      events: [
        { event_type: "run_start", sdk_run_id: support, agent_name: "support-triage", occurred_at: at(12), payload: { framework: "langchain", input: { ticket: "#4821 Where is my order?" } } },
        { event_type: "step", sdk_run_id: support, occurred_at: at(12, 1), payload: { node_name: "classify", phase: "end", duration_ms: 640, output: { intent: "order_status" } } },
        { event_type: "tool_call", sdk_run_id: support, occurred_at: at(12, 2), payload: { tool_name: "orders_api.lookup", phase: "start", input_preview: "{\"order_id\": \"A-99812\"}" } },
        { event_type: "error", sdk_run_id: support, occurred_at: at(11, 32), payload: { error_type: "TimeoutError", error_message: "orders_api.lookup timed out after 30s", traceback: "Traceback (most recent call last):\n  File \"agent/tools.py\", line 88, in lookup\n    resp = client.get(url, timeout=30)\nhttpx.ReadTimeout: timed out" } },
      ],
    },
    {
      sdk_run_id: review, agent_name: "code-reviewer", expected_status: "waiting_for_input",
      events: [
        { event_type: "run_start", sdk_run_id: review, agent_name: "code-reviewer", occurred_at: at(6), payload: { framework: "langgraph", input: { pull_request: 1287 } } },
        { event_type: "tool_call", sdk_run_id: review, occurred_at: at(6, 2), payload: { tool_name: "github.diff", phase: "end", input_preview: "PR #1287", output_preview: "+ 214 − 37 in 9 files", duration_ms: 420 } },
        { event_type: "human_input_requested", sdk_run_id: review, occurred_at: at(5), payload: { question: "The PR changes the public API of billing.charge(). Request changes or approve?", context: { files: ["billing/charge.py"] }, channel: "dashboard" } },
      ],
    },
    {
      sdk_run_id: etl, agent_name: "research-assistant", expected_status: "running",
      events: [
        { event_type: "run_start", sdk_run_id: etl, agent_name: "research-assistant", occurred_at: at(1), payload: { framework: "langgraph", input: { question: "Summarise this week's incidents" } } },
        { event_type: "step", sdk_run_id: etl, occurred_at: at(1, 2), payload: { node_name: "collect", phase: "start" } },
      ],
    },
  ];
}

export interface DemoOutcome { sdk_run_id: string; status: string; event_count: number }

/** Sends the demo runs: the first through single ingest, the rest as one batch; then waits until all are stored. */
export async function ingestDemo(baseUrl: string, key: string, runs: DemoRun[], timeoutMs = 60_000): Promise<DemoOutcome[]> {
  const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
  const [first, ...rest] = runs;
  for (const e of first!.events) {
    const r = await fetch(`${baseUrl}/api/ingest`, { method: "POST", headers, body: JSON.stringify(e) });
    if (r.status !== 202) throw new Error(`ingest answered ${r.status}: ${await r.text()}`);
  }
  const r = await fetch(`${baseUrl}/api/ingest/batch`, { method: "POST", headers, body: JSON.stringify({ events: rest.flatMap((x) => x.events) }) });
  const body = (await r.json()) as { results: { status: number; error?: unknown }[] };
  const bad = body.results?.find((x) => x.status !== 202);
  if (r.status !== 207 || bad) throw new Error(`batch ingest failed: ${r.status} ${JSON.stringify(bad ?? body)}`);

  const deadline = Date.now() + timeoutMs;
  const outcomes: DemoOutcome[] = [];
  for (const run of runs) {
    for (;;) {
      const res = await fetch(`${baseUrl}/api/runs/${encodeURIComponent(run.sdk_run_id)}`, { headers });
      if (res.status === 200) {
        const { run: got, events } = (await res.json()) as { run: { status: string }; events: unknown[] };
        if (events.length === run.events.length && got.status === run.expected_status) {
          outcomes.push({ sdk_run_id: run.sdk_run_id, status: got.status, event_count: events.length });
          break;
        }
      }
      if (Date.now() > deadline) throw new Error(`run ${run.sdk_run_id} was not processed within ${timeoutMs / 1000}s (is the pipeline running?)`);
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return outcomes;
}
