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

/** Log records as a list: time, severity or event name, and the body (structured bodies folded). */
export function logsList(logs, t0) {
  const ol = el("ol", "tp-events tp-logs");
  for (const l of logs) {
    const li = el("li", "tp-event tp-log");
    const at = Date.parse(l.time);
    const head = el("div", "tp-event-head");
    head.append(el("span", "tp-event-type", l.event_name ?? (l.severity_text || "log")),
      el("span", "subtle small", Number.isFinite(t0) && Number.isFinite(at) ? `+${duration(at - t0)}` : timestamp(l.time)));
    li.append(head);
    if (typeof l.body === "string" && l.body) li.append(el("div", "tp-event-text", l.body));
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
      const a = el("a", "link", `${l.run.slice(0, 12)}… · span ${l.span_id}`);
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
