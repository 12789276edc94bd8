// The span panel's OpenTelemetry parts: a span's (or run's) log records, and a span's links to other spans. A link
// whose trace is a run of this project (`run` set by the server) opens that run at the linked span; any other is
// shown as its ids.
import { duration, timestamp } from "../format.js";
import { renderPayload } from "./messages.js";

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined) e.textContent = text;
  return e;
}

/** The role a GenAI content event speaks in, by its name (the body's own `role` first). */
const EVENT_ROLES = {
  "gen_ai.system.message": "system", "gen_ai.user.message": "user", "gen_ai.assistant.message": "assistant", "gen_ai.tool.message": "tool",
};
const SUMMARY_CHARS = 500;
const asText = (v) => (typeof v === "string" ? v : v === undefined || v === null ? "" : JSON.stringify(v));
const cut = (s) => (s.length > SUMMARY_CHARS ? `${s.slice(0, SUMMARY_CHARS - 1)}…` : s);

/**
 * A record in one line a person reads: a text body as it is; a GenAI message as "role: content" (a choice's message,
 * its tool calls named); an evaluation as "name: label or value — explanation"; any other structure as compact JSON.
 */
export function logSummary(l) {
  if (typeof l.body === "string") return cut(l.body);
  const a = l.attributes ?? {};
  if (l.event_name === "gen_ai.evaluation.result") {
    const verdict = asText(a["gen_ai.evaluation.score.label"] ?? a["gen_ai.evaluation.score.value"]);
    const explanation = asText(a["gen_ai.evaluation.explanation"]);
    return cut(`${asText(a["gen_ai.evaluation.name"]) || "evaluation"}: ${verdict}${explanation ? ` — ${explanation}` : ""}`);
  }
  const b = l.body !== null && typeof l.body === "object" && !Array.isArray(l.body) ? l.body : undefined;
  if (!b) return l.body === null || l.body === undefined ? "" : cut(asText(l.body));
  const m = l.event_name === "gen_ai.choice" && b.message && typeof b.message === "object" ? b.message : b;
  const role = m.role ?? EVENT_ROLES[l.event_name] ?? (l.event_name === "gen_ai.choice" ? "assistant" : undefined);
  const calls = Array.isArray(m.tool_calls) ? m.tool_calls.map((c) => c?.function?.name ?? c?.name).filter(Boolean) : [];
  const said = asText(m.content) || (calls.length ? `calls ${calls.join(", ")}` : "");
  if (said) return cut(role ? `${role}: ${said}` : said);
  return cut(JSON.stringify(b));
}

/** Log records as a list: time, severity or event name, the record in one line, and the whole record folded. */
export function logsList(logs, t0) {
  const ol = el("ol", "tp-events tp-logs");
  for (const l of logs) {
    const li = el("li", "tp-event tp-log");
    const at = Date.parse(l.time);
    const head = el("div", "tp-event-head");
    head.append(el("span", "tp-event-type", l.event_name ?? (l.severity_text || "log")),
      el("span", "subtle small", Number.isFinite(t0) && Number.isFinite(at) ? `+${duration(at - t0)}` : timestamp(l.time)));
    li.append(head);
    const summary = logSummary(l);
    if (summary) li.append(el("div", "tp-event-text", summary));
    const rest = { ...(typeof l.body === "string" || l.body === null ? {} : { body: l.body }), ...(Object.keys(l.attributes ?? {}).length ? { attributes: l.attributes } : {}) };
    if (Object.keys(rest).length) {
      const d = el("details", "tp-event-body");
      const box = el("div", "tp-payload tp-event");
      renderPayload(box, rest, { kind: "event" });
      d.append(el("summary", "small", "record"), box);
      li.append(d);
    }
    ol.append(li);
  }
  return ol;
}

/** A span's links: to the linked run and span when it is this project's, else the ids as text. */
export function linksList(links, base) {
  const ul = el("ul", "tp-links");
  for (const l of links) {
    const li = el("li", "tp-link");
    if (l.run) {
      const a = el("a", "link", `${l.agent_name || "run"} (${l.run.slice(0, 8)}…), span ${l.span_id}`);
      a.title = `run ${l.run}, span ${l.span_id}`;
      a.href = `${base}/dashboard/${encodeURIComponent(l.run)}#span=${encodeURIComponent(l.span_id)}`;
      a.dataset.linkedSpan = l.span_id;
      li.append(a);
    } else {
      li.append(el("code", "small", `trace ${l.trace_id} · span ${l.span_id}`), el("span", "subtle small", " (not a run of this project)"));
    }
    const attrs = Object.entries(l.attributes ?? {});
    if (attrs.length) li.append(el("div", "subtle small", attrs.map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join(" · ")));
    ul.append(li);
  }
  return ul;
}
