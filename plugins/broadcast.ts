/**
 * broadcast: as soon as a part's events are stored (afterEventsStored: it does not wait for the runs' new versions,
 * so a dashboard frame waits for one ClickHouse insert, not two), publishes them run by run on their sender's channel
 * `user.{id}` and, the same message, on their project's channel `project.{id}` (docs/REALTIME.md, `events`):
 *   {"type":"events","user_id":42,"project_id":42,"runs":[{"run":{...},"events":[{event_id,event_type,occurred_at,span_id,parent_span_id,payload}]}]}
 * where "run" is the read API's run (core/events/run-json.ts), so a live client and GET /api/runs/{id} agree.
 * Each run comes once per message with its state after the part's last event of it, and its events in log order.
 * A part of 5,000 OTLP events is ~500 runs in ~40 messages, where one message per event with a run snapshot each
 * cost the pipeline thread CPU per span (docs/BENCHMARKS.md, "Pipeline thread, per span") and the host, the gateway and
 * every open tab 5,000 messages. Delivery is best-effort: the dashboard reloads from the stores, so a lost message
 * costs freshness only.
 */
import { jsonString } from "../core/json-text.js";
import { runJson } from "../core/events/run-json.js";
import { projectChannel, userChannel } from "../core/ports/pubsub.js";
import { publishAll } from "../core/pubsub/publish-all.js";
import { TimeSlice } from "../core/time-slice.js";
import type { PipelineEvent, Plugin, PluginContext, RunDraft } from "./plugin.js";

const SCRATCH = "broadcast";

/**
 * Largest message, in characters of its JSON, that another run or event is added to; a message always holds at least
 * one event. Bounded so that a part's messages reach a dashboard socket in pieces the gateway publishes in time slices:
 * uWS drops a socket holding more than 1 MiB unsent (gateway/server.ts).
 */
export const MAX_MESSAGE_CHARS = 128 * 1024;

/** Each run's stored events of one part, by its draft (read once the part's events are all applied). */
type RunEvents = Map<RunDraft, PipelineEvent[]>;

/** One event in a message: its place in the run's tree and its payload's stored JSON as the last member. */
function eventJson(event: PipelineEvent, payloadJson: string): string {
  // Where the event sits in the run's tree, so a live client can place it (docs/API.md, Spans).
  const span = event.span_id ? jsonString(event.span_id) : "null";
  const parent = event.parent_span_id ? jsonString(event.parent_span_id) : "null";
  return `{"event_id":${jsonString(event.event_id)},"event_type":${jsonString(event.event_type)},"occurred_at":${jsonString(event.occurred_at)}` +
    `,"span_id":${span},"parent_span_id":${parent},"payload":${payloadJson}}`;
}

/** A run's state as the message carries it, taken once its part's events are all applied, with the events of one sender. */
interface RunSnapshot {
  readonly project_id: number;
  /** The user whose key sent `events`. */
  readonly user_id: number;
  /** `{"run":<run JSON>,"events":[` */
  readonly open: string;
  readonly events: readonly PipelineEvent[];
}

/** The runs' snapshots: read from the drafts at once, before the next part may change them (overlapped-parts.ts). */
function snapshotRuns(runs: RunEvents): RunSnapshot[] {
  const out: RunSnapshot[] = [];
  for (const [draft, events] of runs) {
    const open = `{"run":${JSON.stringify(runJson(draft.run))},"events":[`;
    const sender = events[0]!.user_id;
    if (events.every((e) => e.user_id === sender)) {
      out.push({ project_id: draft.run.project_id, user_id: sender, open, events });
      continue;
    }
    // Several members' keys sent to this run: each one's events go to their own user channel.
    const bySender = new Map<number, PipelineEvent[]>();
    for (const e of events) {
      const own = bySender.get(e.user_id);
      if (own) own.push(e);
      else bySender.set(e.user_id, [e]);
    }
    for (const [user, own] of bySender) out.push({ project_id: draft.run.project_id, user_id: user, open, events: own });
  }
  return out;
}

/**
 * The `events` messages of a part's runs: per sender and project, runs in order, each message split at
 * MAX_MESSAGE_CHARS, each on the sender's and the project's channel. Made in time slices (thousands of events; the
 * pipeline may share its event loop with ingest).
 */
async function eventsMessages(
  runs: readonly RunSnapshot[], payloadJsonOf: (e: PipelineEvent) => string, slice = new TimeSlice(),
): Promise<[channel: string, message: string][]> {
  const out: [string, string][] = [];
  // "<user> <project>" → the run entries of its open message, comma-separated
  const bodies = new Map<string, string>();
  const send = (group: string) => {
    const body = bodies.get(group);
    if (body) {
      const [user, project] = group.split(" ");
      const message = `{"type":"events","user_id":${user},"project_id":${project},"runs":[${body}]}`;
      out.push([userChannel(user!), message], [projectChannel(project!), message]);
    }
    bodies.set(group, "");
  };
  for (const { user_id, project_id, open: run, events } of runs) {
    const user = `${user_id} ${project_id}`;
    let entry = ""; // this run's events in the open message
    const close = () => {
      if (!entry) return;
      const body = bodies.get(user);
      bodies.set(user, `${body ? `${body},` : ""}${run}${entry}]}`);
      entry = "";
    };
    for (const e of events) {
      const json = eventJson(e, payloadJsonOf(e));
      const open = (bodies.get(user)?.length ?? 0) + run.length + entry.length;
      if (open > run.length && open + json.length > MAX_MESSAGE_CHARS) {
        close();
        send(user);
      }
      entry += entry ? `,${json}` : json;
    }
    close();
    if (slice.due()) await slice.next();
  }
  for (const user of bodies.keys()) send(user);
  return out;
}

/**
 * Last in the built-in chain. Where it sits does not change its messages: it reads the runs once the whole part has
 * been through every plugin, so each message shows every plugin's changes.
 */
export const broadcast = (): Plugin => {
  let ctx: PluginContext | undefined;
  return {
    name: "broadcast",
    init(c) {
      ctx = c;
    },
    onEvent(event, draft, part) {
      if (event.duplicate) return;
      let runs = part.scratch.get(SCRATCH) as RunEvents | undefined;
      if (!runs) part.scratch.set(SCRATCH, (runs = new Map()));
      const events = runs.get(draft);
      if (events) events.push(event);
      else runs.set(draft, [event]);
    },
    async afterEventsStored(part) {
      const runs = part.scratch.get(SCRATCH) as RunEvents | undefined;
      if (!runs || !ctx) return;
      // The runs are read before the first wait: the next part may change these drafts once this part has released them.
      const snapshots = snapshotRuns(runs);
      const messages = await eventsMessages(snapshots, (e) => part.payloadJson.get(e) ?? JSON.stringify(e.payload));
      await publishAll(ctx.pubsub, messages);
    },
  };
};

export default broadcast;
