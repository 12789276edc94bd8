/**
 * A dashboard WebSocket client on a thread of its own (live-server.ts): it records when each event's frame
 * arrives, as epoch milliseconds, and posts them to the benchmark in batches. On the benchmark's own thread it
 * read frames too slowly while that thread was sending load, and the gateway rightly dropped it as a slow consumer.
 */
import { parentPort, workerData } from "node:worker_threads";
import WebSocket from "ws";
import { threadData } from "../../core/threads/spawn.js";

const { url, protocols, channel } = threadData<{ url: string; protocols: string[]; channel: string }>(workerData);
let pending: [string, number][] = [];
const ws = new WebSocket(url, protocols);
ws.on("message", (data) => {
  const at = performance.timeOrigin + performance.now();
  const msg = JSON.parse(data.toString());
  if (msg.type === "hello") ws.send(JSON.stringify({ type: "subscribe", channel }));
  else if (msg.type === "subscribed") parentPort!.postMessage({ type: "subscribed" });
  else if (msg.type === "events") for (const r of msg.runs) for (const e of r.events) pending.push([e.event_id, at]);
});
ws.on("close", (code) => parentPort!.postMessage({ type: "closed", code }));
ws.on("error", (err) => parentPort!.postMessage({ type: "error", message: String(err) }));
setInterval(() => {
  if (pending.length === 0) return;
  parentPort!.postMessage({ type: "arrived", frames: pending });
  pending = [];
}, 20);
parentPort!.on("message", (m) => {
  if (m === "close") ws.close();
});
