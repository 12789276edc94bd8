/**
 * Waking the agents that wait for an answer (GET /api/runs/{id}/input?wait=N): an in-process notifier, and PubSub
 * channel `input.{projectId}` for an answer given on another web process (scale mode).
 */
import { randomUUID } from "node:crypto";
import type { Logger } from "../core/logger.js";
import type { PubSub } from "../core/ports/pubsub.js";

export const INPUT_CHANNEL_PREFIX = "input.";
export const inputChannel = (projectId: number): string => `${INPUT_CHANNEL_PREFIX}${projectId}`;

/** A waiter registered before the state is read, so a notification between read and wait is not lost. */
export interface InputListener {
  /** Resolves on a notification (or one that came since the last wait), after `ms`, or on abort. */
  wait(ms: number, signal?: AbortSignal): Promise<void>;
  dispose(): void;
}

export interface InputNotifier {
  /** Subscribes this process to `input.*` (once) and registers a listener for the run. */
  listen(projectId: number, sdkRunId: string): Promise<InputListener>;
  /** Wakes local listeners and publishes to other processes. */
  notify(projectId: number, sdkRunId: string): Promise<void>;
}

const notifiers = new WeakMap<PubSub, InputNotifier>();

/** One notifier per PubSub (per web process). */
export function inputNotifier(pubsub: PubSub, logger: Logger): InputNotifier {
  let n = notifiers.get(pubsub);
  if (!n) notifiers.set(pubsub, (n = createInputNotifier(pubsub, logger)));
  return n;
}

export function createInputNotifier(pubsub: PubSub, logger: Logger): InputNotifier {
  const origin = randomUUID();
  const listeners = new Map<string, Set<{ fire(): void }>>();
  const key = (projectId: number | string, sdkRunId: string) => `${projectId}\u0000${sdkRunId}`;
  let subscribed: Promise<unknown> | undefined;

  const wakeLocal = (k: string) => {
    for (const l of listeners.get(k) ?? []) l.fire();
  };

  const subscribe = () =>
    (subscribed ??= pubsub
      .subscribePrefix(INPUT_CHANNEL_PREFIX, (channel, message) => {
        try {
          const m = JSON.parse(message) as { origin?: string; sdk_run_id?: string };
          if (m.origin === origin || typeof m.sdk_run_id !== "string") return;
          wakeLocal(key(channel.slice(INPUT_CHANNEL_PREFIX.length), m.sdk_run_id));
        } catch { /* not ours */ }
      })
      .catch((err) => {
        subscribed = undefined;
        logger.warn("could not subscribe to human-input notifications; waiting agents fall back to periodic checks", { err });
      }));

  return {
    async listen(projectId, sdkRunId) {
      await subscribe();
      const k = key(projectId, sdkRunId);
      let fired = false;
      let wake: (() => void) | undefined;
      const l = { fire() { fired = true; wake?.(); } };
      let set = listeners.get(k);
      if (!set) listeners.set(k, (set = new Set()));
      set.add(l);
      return {
        wait(ms, signal) {
          if (fired || signal?.aborted) { fired = false; return Promise.resolve(); }
          return new Promise<void>((resolve) => {
            const done = () => {
              clearTimeout(timer);
              signal?.removeEventListener("abort", done);
              wake = undefined;
              fired = false;
              resolve();
            };
            const timer = setTimeout(done, Math.max(0, ms));
            signal?.addEventListener("abort", done, { once: true });
            wake = done;
          });
        },
        dispose() {
          wake?.();
          set!.delete(l);
          if (set!.size === 0 && listeners.get(k) === set) listeners.delete(k);
        },
      };
    },
    async notify(projectId, sdkRunId) {
      wakeLocal(key(projectId, sdkRunId));
      try {
        await pubsub.publish(inputChannel(projectId), JSON.stringify({ type: "human_input_answered", sdk_run_id: sdkRunId, origin }));
      } catch (err) {
        logger.warn("could not publish a human-input notification; agents on other processes find it at their next check", { err });
      }
    },
  };
}
