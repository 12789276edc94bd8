/**
 * The runs a project's pipeline reports as it stores their events, for wait_for_run: the pipeline's `events`
 * messages on the project's pub/sub channel (plugins/broadcast.ts; docs/REALTIME.md), each run with its state after
 * the message's events and the types of those events. One subscription per project and process however many calls
 * wait on it, and each message parsed once for all of them. Delivery is best-effort, as pub/sub's is: a message lost
 * is a run a waiting call does not see.
 */
import { projectChannel, type PubSub } from "../../core/ports/pubsub.js";

/** A run as a message reports it. */
export interface ReportedRun {
  readonly sdk_run_id: string;
  readonly status: string;
  /** The types of the events stored for it in this message. */
  readonly eventTypes: ReadonlySet<string>;
}

type Listener = (runs: readonly ReportedRun[]) => void;

interface Watched {
  readonly listeners: Set<Listener>;
  readonly unsubscribe: Promise<() => Promise<void>>;
}

const feeds = new WeakMap<PubSub, Map<number, Watched>>();

/** Calls `listener` with the runs of each message of the project's channel until the returned function is called. */
export async function watchRuns(pubsub: PubSub, projectId: number, listener: Listener): Promise<() => void> {
  let projects = feeds.get(pubsub);
  if (!projects) feeds.set(pubsub, (projects = new Map()));
  let watched = projects.get(projectId);
  if (!watched) {
    const listeners = new Set<Listener>();
    const channel = projectChannel(projectId);
    // The prefix `project.4` also covers `project.42`: only this project's own channel is read.
    const unsubscribe = pubsub.subscribePrefix(channel, (ch, message) => {
      if (ch !== channel || !message.startsWith('{"type":"events"')) return;
      const runs = reportedRuns(message);
      for (const l of listeners) l(runs);
    });
    watched = { listeners, unsubscribe };
    const mine = watched;
    unsubscribe.catch(() => {
      if (projects.get(projectId) === mine) projects.delete(projectId);
    });
    projects.set(projectId, watched);
  }
  const w = watched;
  w.listeners.add(listener);
  try {
    await w.unsubscribe;
  } catch (err) {
    w.listeners.delete(listener);
    throw err;
  }
  return () => {
    if (!w.listeners.delete(listener) || w.listeners.size > 0) return;
    if (projects!.get(projectId) === w) projects!.delete(projectId);
    void w.unsubscribe.then((off) => off()).catch(() => {});
  };
}

function reportedRuns(message: string): ReportedRun[] {
  let body: { runs?: { run?: { sdk_run_id?: unknown; status?: unknown }; events?: { event_type?: unknown }[] }[] };
  try {
    body = JSON.parse(message);
  } catch {
    return [];
  }
  const out: ReportedRun[] = [];
  for (const entry of Array.isArray(body.runs) ? body.runs : []) {
    const id = entry.run?.sdk_run_id;
    if (typeof id !== "string") continue;
    const eventTypes = new Set((Array.isArray(entry.events) ? entry.events : []).map((e) => String(e.event_type)));
    out.push({ sdk_run_id: id, status: String(entry.run?.status), eventTypes });
  }
  return out;
}
