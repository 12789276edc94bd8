import { describe, expect, it } from "vitest";
import { once } from "node:events";
import { osThreadName, spawnThread } from "./spawn.js";

describe("spawnThread", () => {
  it("shortens thread names to what the OS keeps (15 bytes)", () => {
    expect(osThreadName("runwatch-pipeline")).toBe("rw-pipeline");
    expect(osThreadName("runwatch-ingest")).toBe("rw-ingest");
    expect(osThreadName("a-very-long-thread-name")).toBe("a-very-long-thr");
  });

  it.runIf(process.platform === "linux")("names the OS thread, so top -H and ps -L show which thread is which", async () => {
    const worker = spawnThread(new URL("./testing/report-comm.ts", import.meta.url), null, "runwatch-pipeline");
    const [name] = await once(worker, "message");
    await worker.terminate();
    expect(name).toBe("rw-pipeline");
  });
});
