/**
 * A bounded fuzz of ingest (2,500 random malformed bodies, ~20 s on a quiet machine; seeded: FUZZ_SEED reproduces a run)
 * against a real server with the pipeline: no answer is a 5xx, every error names what is wrong, every event that
 * was acknowledged is stored (none is dead-lettered: ingest's rules are what storage takes), and a valid event sent
 * afterwards is stored within seconds.
 */
import { describe, expect, it } from "vitest";
import { listDeadLetters } from "../../stores/dead-letters.js";
import { json, waitForRun } from "./harness.js";
import { useFuzzTarget } from "./fuzz-target.js";
import { fuzzSeed, seededRandom } from "./seeded-random.js";

const SEED = fuzzSeed();
/** A fixed count, not a time budget: on a loaded machine the run takes longer but tests just as much. */
const BODIES = 2_500;

const server = useFuzzTarget();

const EVENT_TYPES = ["run_start", "run_end", "error", "step", "tool_call", "human_input_requested", "human_input_received"];

function fuzzer(seed: number) {
  const r = seededRandom(seed);
  const str = (): string =>
    r.pick([
      () => "a\u0000b",
      () => "x\ud800",
      () => "\udc00y",
      () => "ok",
      () => "",
      () => "é😀\u202e" + String.fromCharCode(r.int(0x10000)),
      () => "z".repeat(r.int(5_000)),
      () => Array.from({ length: r.int(40) }, () => String.fromCharCode(r.int(0x10000))).join(""),
      () => "2026-11-23T10:00:00Z",
      () => "9999-99-99T99:99:99Z",
    ])();
  const num = (): number => r.pick([0, -1, 1.5, 2 ** 53, 2 ** 64, -(2 ** 63), 1e308, -1e308, 4294967296, 5e-324, r.int(1000)]);
  const nested = (d: number): unknown => (d === 0 ? str() : r.next() < 0.5 ? [nested(d - 1)] : { [str()]: nested(d - 1) });
  const value = (depth = 0): unknown =>
    r.pick([
      () => str(),
      () => num(),
      () => null,
      () => r.next() < 0.5,
      () => nested(r.int(150)),
      () => (depth < 3 ? Array.from({ length: r.int(5) }, () => value(depth + 1)) : []),
      () => (depth < 3 ? Object.fromEntries(Array.from({ length: r.int(5) }, () => [str(), value(depth + 1)])) : {}),
    ])();
  const validish = (): Record<string, unknown> => {
    const type = r.pick(EVENT_TYPES);
    const payload: Record<string, unknown> = {
      node_name: "n", phase: r.pick(["start", "end"]), tool_name: "t", question: "q?", response: "yes",
      prompt_tokens: r.int(100), cost_usd: 0.01, output: value(), input: value(),
    };
    if (r.next() < 0.4) {
      // An LLM call priced by the pipeline: real and unknown models and providers, cache counts that may exceed
      // the prompt's (as Anthropic reports them).
      Object.assign(payload, {
        kind: "llm", model: r.pick(["gpt-4o", "claude-sonnet-4-5", "gemini-2.5-pro", "openai/gpt-4o-mini", "__proto__", "constructor", str()]),
        provider: r.pick(["openai", "anthropic", "google", "toString", str()]), completion_tokens: r.int(5000), cached_tokens: r.int(1_000_000),
        ...(r.next() < 0.5 ? { cache_write_tokens: r.int(300_000) } : {}), ...(r.next() < 0.5 ? {} : { cost_usd: undefined }),
      });
    }
    const e: Record<string, unknown> = { event_type: type, sdk_run_id: `fuzz-${r.int(50)}`, agent_name: "fuzzer", payload };
    // Mutate one to three fields, top level or in the payload.
    for (let i = 0, n = 1 + r.int(3); i < n; i++) {
      const target = r.next() < 0.5 ? e : payload;
      const field = r.pick(["event_type", "sdk_run_id", "agent_name", "occurred_at", "event_id", "config_version", "payload", "node_name", "phase", "prompt_tokens", "total_tokens", "cost_usd", "duration_ms", "question", "context", str()]);
      if (r.next() < 0.15) delete target[field];
      else target[field] = value();
    }
    return e;
  };
  const bytes = (): Uint8Array => Uint8Array.from({ length: r.int(300) }, () => r.int(256));
  /** One request: [path, body, content-type]. */
  return (): [string, string | Uint8Array, string] => {
    const batch = r.next() < 0.35;
    const path = batch ? "/api/ingest/batch" : "/api/ingest";
    const ct = r.next() < 0.03 ? r.pick(["text/plain", "application/xml", ""]) : "application/json";
    const shape = r.int(10);
    if (shape === 0) return [path, bytes(), ct];
    if (shape === 1) {
      const text = JSON.stringify(batch ? { events: [validish()] } : validish());
      return [path, text.slice(0, r.int(text.length)), ct];
    }
    if (shape === 2) return [path, JSON.stringify(value()), ct];
    if (shape === 3) {
      // Invalid UTF-8 inside an otherwise valid event.
      const text = JSON.stringify(validish());
      const enc = new TextEncoder().encode(text);
      const at = 1 + r.int(Math.max(1, enc.length - 2));
      return [path, Uint8Array.from([...enc.subarray(0, at), 0xc3, 0x28, 0xff, ...enc.subarray(at)]), ct];
    }
    const body = batch ? { events: Array.from({ length: 1 + r.int(30) }, validish) } : validish();
    return [path, JSON.stringify(body), ct];
  };
}

describe(`ingest fuzz (seed ${SEED})`, () => {
  it("no 5xx, errors name what is wrong, every acknowledged event is stored, and a valid event after it is stored", async () => {
    const { srv, key, userId } = server;
    const next = fuzzer(SEED);
    const statuses = new Map<number, number>();
    const acked = new Set<string>();
    const problems: string[] = [];
    const t0 = Date.now();
    let sent = 0;
    const worker = async () => {
      while (sent < BODIES) {
        sent++;
        const [path, body, ct] = next();
        const res = await fetch(`${srv.url}${path}`, { method: "POST", headers: { authorization: `Bearer ${key}`, ...(ct ? { "content-type": ct } : {}) }, body: body as BodyInit });
        statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
        const text = await res.text();
        if (res.status >= 500) problems.push(`${res.status} for ${path}: ${text.slice(0, 200)}`);
        const parsed = JSON.parse(text) as { event_id?: string; error?: { code: string; message: string }; results?: { status: number; event_id?: string; error?: { message: string } }[] };
        if (res.status === 202) acked.add(parsed.event_id!);
        else if (res.status === 207) {
          for (const item of parsed.results!) {
            if (item.status === 202) acked.add(item.event_id!);
            else if (!item.error?.message) problems.push(`batch item ${item.status} without a message`);
          }
        } else if (!parsed.error?.code || !parsed.error.message) problems.push(`${res.status} without an error code and message: ${text.slice(0, 200)}`);
      }
    };
    await Promise.all(Array.from({ length: 8 }, worker));
    const elapsed = Date.now() - t0;
    console.log(`fuzz seed ${SEED}: ${sent} bodies in ${elapsed} ms, statuses ${JSON.stringify(Object.fromEntries(statuses))}, ${acked.size} events acknowledged`);
    expect(problems).toEqual([]);
    expect(sent).toBe(BODIES);

    // The pipeline is not stuck: a valid event sent now is stored within seconds.
    const res = await fetch(`${srv.url}/api/ingest`, json(key, { event_type: "run_start", sdk_run_id: "after-fuzz", agent_name: "ok", payload: {} }));
    expect(res.status).toBe(202);
    await waitForRun(srv.url, key, "after-fuzz", (b) => b.events.length === 1, 20_000);

    // Every acknowledged event stored (a dead letter counts as seen here, then fails below).
    const deadline = Date.now() + 30_000;
    let missing: string[] = [];
    let deadLettered: string[] = [];
    for (;;) {
      const rows = await srv.ports.clickhouse.query<{ id: string }>("SELECT DISTINCT toString(event_id) AS id FROM agent_events WHERE user_id = {uid:UInt64}", { uid: userId });
      const stored = new Set(rows.map((x) => x.id));
      const letters = await listDeadLetters(srv.ports.sql, { projectId: userId, limit: 1000 });
      const dead = new Set(letters.map((d) => d.event_id));
      missing = [...acked].filter((id) => !stored.has(id) && !dead.has(id));
      deadLettered = letters.map((d) => `${d.event_id}: ${d.error}`);
      if (missing.length === 0 || Date.now() > deadline) {
        console.log(`fuzz: ${stored.size} stored, ${dead.size} dead-lettered`);
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    expect(missing).toEqual([]);
    // Whatever ingest acknowledged, the pipeline can store: a dead letter here is a plugin failing on valid input.
    expect(deadLettered).toEqual([]);
  }, 150_000);
});
