/**
 * Which Runwatch run a LangGraph invocation reports to. A thread is a session; each invocation is a run of its own
 * (id: LangChain's root run id) unless `runIdFromThread` makes the thread id the run id. A resume continues the run
 * its interrupt paused: the one this handler saw (kept here, bounded), else the one the server says waits for input
 * in the session — so a resume in another process continues it too.
 */
import type { Runwatch } from "./client.js";
import { RunwatchError } from "./errors.js";
import { MAX_WAITING_THREADS } from "./langchain-support.js";
import type { Run } from "./run.js";

export interface ThreadRunOptions {
  sdkRunId?: string | ((ctx: { threadId?: string; rootRunId: string }) => string);
  runIdFromThread?: boolean;
}

export class ThreadRuns {
  /** Runs paused by an interrupt, by thread: a resume in this process continues them (usage carried over). */
  private readonly waiting = new Map<string, Run>();
  private readonly byThread: boolean;

  constructor(
    private readonly options: ThreadRunOptions,
    private readonly client: () => Runwatch,
  ) {
    this.byThread = options.runIdFromThread ?? false;
  }

  /** The run id of a new invocation. */
  idFor(threadId: string | undefined, rootRunId: string): string {
    if (typeof this.options.sdkRunId === "function") return this.options.sdkRunId({ threadId, rootRunId });
    return this.options.sdkRunId ?? (this.byThread ? threadId : undefined) ?? rootRunId;
  }

  /** Bounded: threads that are never resumed must not grow memory forever (oldest forgotten first). */
  remember(threadId: string, run: Run): void {
    this.waiting.delete(threadId);
    this.waiting.set(threadId, run);
    if (this.waiting.size > MAX_WAITING_THREADS) this.waiting.delete(this.waiting.keys().next().value!);
  }

  /** The run this handler saw paused on the thread, forgotten as it is taken. */
  take(threadId: string | undefined): Run | undefined {
    if (threadId === undefined) return undefined;
    const run = this.waiting.get(threadId);
    this.waiting.delete(threadId);
    return run;
  }

  /** What is known without asking the server: the paused run seen here, else a fixed id (option, or the thread's). */
  known(threadId: string): string | undefined {
    const seen = this.waiting.get(threadId)?.sdkRunId;
    if (seen !== undefined) return seen;
    return this.options.sdkRunId !== undefined || this.byThread ? this.idFor(threadId, threadId) : undefined;
  }

  /** The run a resume of the thread continues; asks the server when nothing is known here. */
  async find(threadId: string): Promise<string | undefined> {
    return this.known(threadId) ?? (await this.client().waitingRunOf(threadId));
  }

  /** find(), asked again until the server has stored the interrupt (or the wait is over). */
  async waitFor(threadId: string, wait: { timeoutMs?: number; signal?: AbortSignal }): Promise<string> {
    const deadline = Date.now() + (wait.timeoutMs ?? 60_000);
    for (;;) {
      const id = await this.find(threadId).catch((err: unknown) => {
        if (err instanceof RunwatchError && err.code === "config") throw err;
        return undefined;
      });
      if (id !== undefined) return id;
      if (wait.signal?.aborted || Date.now() >= deadline) throw new RunwatchError("human_input", `no run of thread ${threadId} waits for input`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
