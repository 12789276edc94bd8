/** The long-poll notifier: wakes local listeners, and listeners of another process through PubSub. */
import { describe, expect, it } from "vitest";
import { memoryPubSub } from "../core/pubsub/memory.js";
import { createLogger } from "../core/logger.js";
import { createInputNotifier } from "./notifier.js";

const logger = createLogger("error");

describe("human-input notifier", () => {
  it("wakes a listener registered before the notification, only for its run", async () => {
    const n = createInputNotifier(memoryPubSub(), logger);
    const mine = await n.listen(1, "a");
    const other = await n.listen(1, "b");
    await n.notify(1, "a");
    const t = Date.now();
    await mine.wait(5_000); // already notified: returns at once
    expect(Date.now() - t).toBeLessThan(100);
    const t2 = Date.now();
    await other.wait(150); // not notified: times out
    expect(Date.now() - t2).toBeGreaterThanOrEqual(140);
    mine.dispose();
    other.dispose();
  });

  it("a notification on one process wakes a waiter on another (shared PubSub, as Redis in scale mode)", async () => {
    const bus = memoryPubSub();
    const webA = createInputNotifier(bus, logger);
    const webB = createInputNotifier(bus, logger);
    const l = await webA.listen(42, "run-x");
    const woke = l.wait(10_000).then(() => Date.now());
    const sent = Date.now();
    await webB.notify(42, "run-x");
    expect((await woke) - sent).toBeLessThan(100);
    l.dispose();
    const unrelated = await webA.listen(43, "run-x");
    await webB.notify(42, "run-x"); // another user's run of the same name
    const t = Date.now();
    await unrelated.wait(120);
    expect(Date.now() - t).toBeGreaterThanOrEqual(110);
    unrelated.dispose();
  });
});
