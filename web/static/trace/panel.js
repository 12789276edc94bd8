// The trace's panel: the selected span whole — read when it is selected (/dashboard/:run/spans/:id) — or the run's
// own input, output and events (/dashboard/:run/overview) when no span is. A span's actions (feedback, add to dataset,
// add to queue) are the page's <template id="span-actions"> forms with the span filled in.
import { duration, timestamp, usd } from "../format.js";
import { renderPayload } from "./messages.js";
import { linksList, logsList } from "./otel-parts.js";
import { fillPlaygroundForm } from "./playground-link.js";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

function section(title, ...content) {
  const s = el("section", "tp-section");
  s.append(el("h3", "tp-title", title), ...content);
  return s;
}

function payload(value, kind) {
  const box = el("div", `tp-payload tp-${kind}`);
  renderPayload(box, value, { kind });
  return box;
}

function facts(pairs) {
  const dl = el("dl", "tp-facts");
  for (const [k, v] of pairs) {
    if (v === null || v === undefined || v === "") continue;
    const d = el("div", k === "Span id" ? "tp-id" : "");
    d.append(el("dt", "", k), el("dd", "", typeof v === "number" ? v.toLocaleString("en-US") : String(v)));
    dl.append(d);
  }
  return dl;
}

/** What an event says in a line: an error's type and message, a question, an answer and who gave it. */
function eventText(e) {
  const p = e.payload ?? {};
  switch (e.event_type) {
    case "error": return `${p.error_type ? `${p.error_type}: ` : ""}${p.error_message ?? ""}`;
    case "human_input_requested": return p.question ?? "";
    case "human_input_received": return `${p.response ?? ""}${p.responded_by ? ` — ${p.responded_by}` : ""}`;
    default: return "";
  }
}

const scoreValue = (v) => (v === true ? "good" : v === false ? "bad" : String(v));

function eventsList(events, t0) {
  const ol = el("ol", "tp-events");
  for (const e of events) {
    const li = el("li", `tp-event tp-event-${e.event_type}`);
    const at = Date.parse(e.occurred_at);
    const head = el("div", "tp-event-head");
    head.append(el("span", "tp-event-type", `${e.event_type}${e.payload?.phase ? ` · ${e.payload.phase}` : ""}`),
      el("span", "subtle small", Number.isFinite(t0) && Number.isFinite(at) ? `+${duration(at - t0)}` : timestamp(e.occurred_at)));
    li.append(head);
    const said = eventText(e);
    if (said) li.append(el("div", "tp-event-text", said));
    const rest = { ...e.payload };
    delete rest.phase;
    if (Object.keys(rest).length) {
      const d = el("details", "tp-event-body");
      d.append(el("summary", "small", "payload"), payload(rest, "event"));
      li.append(d);
    }
    ol.append(li);
  }
  return ol;
}

export class Panel {
  constructor(root, { base, runId, onClose }) {
    Object.assign(this, { root, base, runId, onClose });
    this.current = null;
    this.controller = null;
  }

  url(path) { return `${this.base}/dashboard/${encodeURIComponent(this.runId)}${path}`; }

  async read(path) {
    this.controller?.abort();
    this.controller = new AbortController();
    const res = await fetch(this.url(path), { credentials: "same-origin", headers: { Accept: "application/json" }, signal: this.controller.signal });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) throw new Error(body?.error?.message ?? `HTTP ${res.status}`);
    return body;
  }

  /** Shows span `id`, or the run for "" (re-reading it: a live span changes). */
  async show(id) {
    const same = this.current === id;
    this.current = id;
    this.root.dataset.spanId = id;
    if (!same) this.root.replaceChildren(el("p", "subtle small tp-loading", "Loading…"));
    this.root.setAttribute("aria-busy", "true");
    try {
      const body = await this.read(id === "" ? "/overview" : `/spans/${encodeURIComponent(id)}`);
      // The run's OpenTelemetry log lines beside its overview (an empty list for runs sent otherwise).
      if (id === "") body.logs = (await this.read("/logs?limit=200").catch(() => ({ logs: [] }))).logs;
      if (this.current !== id) return;
      this.root.replaceChildren(...(id === "" ? this.runParts(body) : this.spanParts(body)));
    } catch (err) {
      if (err.name === "AbortError" || this.current !== id) return;
      this.root.replaceChildren(el("p", "text-error small tp-error", `Could not read this span: ${err.message}`));
    } finally {
      if (this.current === id) this.root.removeAttribute("aria-busy");
    }
  }

  reload() { if (this.current !== null) return this.show(this.current); }

  head(kind, name, status, close) {
    const h = el("header", "tp-head");
    const title = el("h2", "tp-name");
    title.append(el("span", `tv-kind kind-${kind}`, kind), " ", el("span", "", name));
    h.append(title, el("span", `badge badge-${status === "ok" ? "success" : status}`, status));
    if (close) {
      const b = el("button", "btn btn-ghost btn-sm tp-close", "×");
      b.type = "button";
      b.title = "Close (Esc)";
      b.setAttribute("aria-label", "Close the span");
      b.addEventListener("click", () => this.onClose());
      h.append(b);
    }
    return h;
  }

  spanParts({ span, input, output, metadata, events, logs = [], links = [], scores, run }) {
    const t0 = run?.started_at ? Date.parse(run.started_at) : NaN;
    const start = Date.parse(span.started_at);
    const parts = [this.head(span.kind, span.name || "(unnamed)", span.status, true), facts([
      ["Duration", span.status === "running" ? "running…" : duration(span.duration_ms)],
      ["Starts", Number.isFinite(t0) ? `+${duration(start - t0)}` : timestamp(span.started_at)],
      ["Model", span.model], ["Provider", span.provider],
      ["Tokens in", span.prompt_tokens], ["Tokens out", span.completion_tokens], ["Cached", span.cached_tokens], ["Reasoning", span.reasoning_tokens],
      ["Cost", span.cost_usd !== null && span.cost_usd !== undefined ? usd(span.cost_usd) : null],
      ["Span id", span.span_id],
    ])];
    const endError = events.find((e) => e.payload?.error)?.payload.error;
    if (span.error || endError) parts.push(section("Error", payload(endError ?? span.error, "error")));
    parts.push(section("Input", payload(input, "input")), section("Output", payload(output, "output")));
    if (metadata && Object.keys(metadata).length) parts.push(section("Metadata", payload(metadata, "metadata")));
    const list = el("ul", "tp-scores");
    for (const s of scores) {
      const li = el("li");
      li.append(el("b", "", s.name), ` ${scoreValue(s.value)}`, el("span", "subtle small", ` · ${s.source}${s.comment ? ` · ${s.comment}` : ""}`));
      list.append(li);
    }
    parts.push(section(`Scores (${scores.length})`, scores.length ? list : el("p", "subtle small", "No scores yet.")));
    parts.push(section(`Events (${events.length})`, eventsList(events, t0)));
    if (logs.length) parts.push(section(`Logs (${logs.length})`, logsList(logs, t0)));
    if (links.length) parts.push(section(`Links (${links.length})`, linksList(links, this.base)));
    const actions = this.actions(span, output, input, metadata);
    if (actions) parts.push(section("Actions", actions));
    return parts;
  }

  actions(span, output, input, metadata) {
    const tpl = document.getElementById("span-actions");
    if (!tpl) return null;
    const box = el("div", "tp-actions");
    box.append(tpl.content.cloneNode(true));
    if (!box.children.length) return null;
    for (const input of box.querySelectorAll('input[name="span_id"]')) input.value = span.span_id;
    const expected = box.querySelector('textarea[name="expected_output"]');
    if (expected && output !== null && output !== undefined) expected.value = typeof output === "string" ? output : JSON.stringify(output, null, 2);
    fillPlaygroundForm(box, { span, input, metadata });
    if (!box.children.length) return null;
    return box;
  }

  runParts({ run, input, output, events, logs = [] }) {
    const status = run.status === "success" ? "ok" : run.status;
    const parts = [this.head("run", run.agent_name || "Run", status, false), facts([
      ["Duration", run.duration_ms !== null ? duration(run.duration_ms) : "running…"],
      ["Started", timestamp(run.started_at)],
      ["LLM calls", run.llm_calls], ["Tokens", run.total_tokens], ["Cost", usd(run.cost_usd)],
    ])];
    parts.push(section("Input", payload(input, "input")), section("Output", payload(output, "output")));
    const shown = events.filter((e) => e.event_type !== "run_start" && e.event_type !== "run_end");
    if (shown.length) parts.push(section(`Events (${shown.length})`, eventsList(shown, run.started_at ? Date.parse(run.started_at) : NaN)));
    if (logs.length) parts.push(section(`Logs (${logs.length})`, logsList(logs, run.started_at ? Date.parse(run.started_at) : NaN)));
    // What a member may do with the run is below the trace; a viewer has none of it to be pointed at.
    if (document.getElementById("trace")?.dataset.canAct) {
      parts.push(el("p", "subtle small", "Feedback, scores and “Add to dataset” for the whole run are below the trace. Select a span for its own."));
    }
    return parts;
  }
}
