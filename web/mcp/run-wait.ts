/**
 * Waiting for the next run of a project that matches a filter and finishes (or starts) after the wait began, for
 * wait_for_run. The pipeline's messages (run-feed.ts) name the runs that just finished or started; those candidates
 * are checked with the runs list's own SQL (EventStore.listRuns, the filter narrowed to their ids), so a run matches
 * here exactly when the explorer would list it. No polling while nothing happens.
 *
 * A message goes out once a run's events are stored, before its new row version is (plugins/broadcast.ts): a
 * candidate that does not match yet is checked again a little later (RECHECK_MS), for the row to catch up.
 */
import type { RunRecord } from "../../core/events/run.js";
import type { EventStore } from "../../core/ports/event-store.js";
import type { PubSub } from "../../core/ports/pubsub.js";
import type { RunsFilter } from "../../core/runs-filter/index.js";
import { HttpProblem } from "../http-errors.js";
import { watchRuns, type ReportedRun } from "./run-feed.js";

export type RunMoment = "finished" | "started";

export interface RunWait {
  readonly filter: RunsFilter;
  readonly on: RunMoment;
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/** Waits of one process on one project at once: each holds a subscription's listener and checks candidates. */
export const MAX_WAITS_PER_PROJECT = 20;
/** When a candidate that did not match is checked again (after its first check). */
const RECHECK_MS = [300, 1_000, 3_000];
/** Ids per check (the runs list's largest page). */
const CHECK_BATCH = 500;
/** Candidates remembered for a re-check; past it, new ones are checked once. */
const MAX_RECHECKED = 10_000;

const FINISHED = new Set(["success", "error"]);
const waiting = new Map<number, number>();

/** Whether a reported run is the moment a wait is for. */
const isMoment = (on: RunMoment, r: ReportedRun): boolean =>
  on === "started" ? r.eventTypes.has("run_start") : FINISHED.has(r.status) && (r.eventTypes.has("run_end") || r.eventTypes.has("error"));

/** The first matching run, or undefined when none matched in time (or the caller went away). */
export async function waitForRun(ports: { pubsub: PubSub; events: EventStore }, projectId: number, wait: RunWait): Promise<RunRecord | undefined> {
  const n = waiting.get(projectId) ?? 0;
  if (n >= MAX_WAITS_PER_PROJECT) {
    throw new HttpProblem(429, "too_many_waits", `at most ${MAX_WAITS_PER_PROJECT} wait_for_run calls may wait at once on a project; try again when one has answered`);
  }
  waiting.set(projectId, n + 1);
  try {
    return await watch(ports, projectId, wait);
  } finally {
    const left = (waiting.get(projectId) ?? 1) - 1;
    if (left > 0) waiting.set(projectId, left);
    else waiting.delete(projectId);
  }
}

function watch(ports: { pubsub: PubSub; events: EventStore }, projectId: number, wait: RunWait): Promise<RunRecord | undefined> {
  return new Promise((resolve, reject) => {
    const due = new Set<string>();
    const tries = new Map<string, number>();
    const timers = new Set<NodeJS.Timeout>();
    let checking = false;
    let done = false;
    let stop: (() => void) | undefined;

    const end = (run: RunRecord | undefined, err?: unknown) => {
      if (done) return;
      done = true;
      for (const t of timers) clearTimeout(t);
      clearTimeout(deadline);
      wait.signal.removeEventListener("abort", aborted);
      stop?.();
      if (err !== undefined) reject(err);
      else resolve(run);
    };
    const aborted = () => end(undefined);
    const deadline = setTimeout(() => end(undefined), wait.timeoutMs);
    wait.signal.addEventListener("abort", aborted);
    if (wait.signal.aborted) return end(undefined);

    const later = (id: string) => {
      const k = tries.get(id) ?? 0;
      if (k >= RECHECK_MS.length || (k === 0 && tries.size >= MAX_RECHECKED)) return;
      tries.set(id, k + 1);
      const t = setTimeout(() => {
        timers.delete(t);
        due.add(id);
        void check();
      }, RECHECK_MS[k]);
      timers.add(t);
    };

    const check = async () => {
      if (checking) return;
      checking = true;
      try {
        while (!done && due.size > 0) {
          const ids = [...due].slice(0, CHECK_BATCH);
          for (const id of ids) due.delete(id);
          const { runs } = await ports.events.listRuns(projectId, { filter: wait.filter, external_ids: ids, limit: ids.length });
          const byId = new Map(runs.map((r) => [r.external_id, r]));
          // The first reported of those the row shows at that moment too.
          const hit = ids.map((id) => byId.get(id)).find((r) => r !== undefined && (wait.on === "started" || FINISHED.has(r.status)));
          if (hit) return end(hit);
          for (const id of ids) later(id);
        }
      } catch (err) {
        end(undefined, err);
      } finally {
        checking = false;
      }
    };

    watchRuns(ports.pubsub, projectId, (reported) => {
      if (done) return;
      for (const r of reported) if (isMoment(wait.on, r)) due.add(r.sdk_run_id);
      if (due.size > 0) void check();
    }).then((off) => {
      if (done) off();
      else stop = off;
    }, (err) => end(undefined, err));
  });
}
