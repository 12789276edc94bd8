// The live connection shared by every page (loaded by layout.njk; pages import it for messages).
// Fetches a short-lived token from web, connects to the gateway, subscribes to the user's channel and
// reconnects with backoff. See docs/REALTIME.md for the protocol.
import { ago, duration } from "./format.js";

const messageListeners = new Set();
const reconnectListeners = new Set();

/** fn(msg) for every message pushed on the user's channel (e.g. {type:"events", runs:[…]}, {type:"notification"}). */
export function onMessage(fn) { messageListeners.add(fn); }
/**
 * fn(run, events) for each run of an `events` message (docs/REALTIME.md): the run as it is after the events, and
 * its newly stored events in order ({event_id, event_type, occurred_at, span_id, parent_span_id, payload}).
 */
export function onRunEvents(fn) {
  onMessage((msg) => {
    if (msg.type !== "events" || !Array.isArray(msg.runs)) return;
    for (const entry of msg.runs) if (entry?.run) fn(entry.run, Array.isArray(entry.events) ? entry.events : []);
  });
}
/** fn() after the connection came back from a drop: messages may have been missed, reload state. */
export function onReconnect(fn) { reconnectListeners.add(fn); }

/**
 * For a page that re-fetches a server-rendered fragment when a run's message arrives: a message goes out once the
 * run's events are stored, beside the write of the run's new version that the fragment is rendered from
 * (docs/DASHBOARD.md), so the first fetch can still show the run as it was. Returns start(): it calls fetchOnce(),
 * and again every intervalMs after each fetch until current() holds, at most `tries` fetches in all; calling start
 * again begins anew (one loop at a time). stopped() is called when the loop ends, settled or not.
 */
export function refetchUntil(fetchOnce, current, { tries = 8, intervalMs = 250, stopped = () => {} } = {}) {
  let left = 0;
  let timer = null;
  let generation = 0;
  const step = async (gen) => {
    clearTimeout(timer);
    await fetchOnce();
    if (gen !== generation) return; // a later start took over while this fetch ran
    if (current() || --left <= 0) stopped();
    else timer = setTimeout(() => step(gen), intervalMs);
  };
  return () => {
    left = tries;
    step(++generation);
  };
}

/**
 * For a page that swaps in a server-rendered fragment of itself (`?fragment=<name>`) when pushed messages say it
 * changed: returns refresh(), which fetches the fragment into `root` at most once per minIntervalMs after the last
 * fetch began (calls while one waits share it) and resolves when it is swapped in — by `apply(html)` when given
 * (a page that merges the fragment into what it shows), else as root's whole content.
 */
export function fragmentRefresher(root, fragment, minIntervalMs, apply = (html) => { root.innerHTML = html; }) {
  let last = 0;
  let pending = null;
  const refresh = async () => {
    last = Date.now();
    try {
      const url = new URL(location.href);
      url.searchParams.set("fragment", fragment);
      const res = await fetch(url, { credentials: "same-origin" });
      if (res.ok) {
        apply(await res.text());
        tick(root);
      }
    } catch (err) {
      console.warn(`${fragment} refresh failed`, err);
    }
  };
  return () => (pending ??= new Promise((r) => setTimeout(r, Math.max(0, last + minIntervalMs - Date.now()))).then(() => {
    pending = null;
    return refresh();
  }));
}

const indicator = document.getElementById("live-indicator");
function setState(state, text) {
  if (!indicator) return;
  indicator.dataset.state = state;
  indicator.querySelector(".live-text").textContent = text;
}

let attempt = 0;
let everSubscribed = false;
let socket = null;
let pingTimer = null;
let pongDeadline = null;

async function connect() {
  setState("connecting", "Connecting…");
  let info;
  try {
    const res = await fetch(`${document.body.dataset.base ?? ""}/api/realtime/token`, { credentials: "same-origin", headers: { Accept: "application/json" } });
    if (res.status === 401) { setState("off", "Signed out"); return; }
    if (!res.ok) throw new Error(`token: HTTP ${res.status}`);
    info = await res.json();
  } catch (err) {
    return retry();
  }
  const ws = new WebSocket(info.url, info.protocols);
  socket = ws;
  let refused = false;
  ws.onmessage = (e) => {
    let msg;
    try { msg = JSON.parse(e.data); } catch { return; }
    switch (msg.type) {
      case "hello":
        ws.send(JSON.stringify({ type: "subscribe", channel: info.channel }));
        return;
      case "subscribed": {
        const wasReconnect = everSubscribed;
        everSubscribed = true;
        attempt = 0;
        setState("live", "Live");
        startHeartbeat(ws);
        if (wasReconnect) for (const fn of reconnectListeners) safe(fn);
        return;
      }
      case "pong":
        clearTimeout(pongDeadline);
        return;
      case "error":
        refused = msg.error?.code === "forbidden_channel" || msg.error?.code === "not_a_member";
        console.warn("realtime:", msg.error?.code, msg.error?.message);
        return;
      default:
        for (const fn of messageListeners) safe(fn, msg);
    }
  };
  ws.onclose = (e) => {
    stopHeartbeat();
    if (socket === ws) socket = null;
    if (refused || e.code === 4403) { setState("off", "Refused"); return; }
    retry();
  };
}

function retry() {
  setState("connecting", "Reconnecting…");
  // Exponential backoff with jitter, capped at 30 s.
  const delay = Math.min(30_000, 500 * 2 ** attempt++) * (0.5 + Math.random() / 2);
  setTimeout(connect, delay);
}

// The gateway pings at the protocol level; this application ping also catches half-open connections
// (laptop sleep, proxies) that a browser would otherwise only notice after minutes.
function startHeartbeat(ws) {
  stopHeartbeat();
  pingTimer = setInterval(() => {
    if (ws.readyState !== WebSocket.OPEN) return;
    ws.send(JSON.stringify({ type: "ping" }));
    clearTimeout(pongDeadline);
    pongDeadline = setTimeout(() => ws.close(), 10_000);
  }, 25_000);
}
function stopHeartbeat() { clearInterval(pingTimer); clearTimeout(pongDeadline); }

function safe(fn, arg) { try { fn(arg); } catch (err) { console.error(err); } }

/** Keeps relative times ("5 s ago") and the durations of open runs ticking. */
export function tick(root = document) {
  const now = Date.now();
  for (const el of root.querySelectorAll("[data-ts]")) if (el.dataset.ts) el.textContent = ago(el.dataset.ts, now);
  for (const el of root.querySelectorAll("[data-started]")) {
    if (!el.dataset.started || el.dataset.ended) continue;
    el.textContent = duration(now - new Date(el.dataset.started).getTime());
  }
}
setInterval(tick, 1000);

connect();
