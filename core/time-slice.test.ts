import { describe, expect, it } from "vitest";
import { mapInSlices, TimeSlice } from "./time-slice.js";

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe("time slicing", () => {
  it("mapInSlices maps in order and lets other work run while a long map is in progress", async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const items = Array.from({ length: 640 }, (_, i) => i);
    const out = await mapInSlices(items, (i) => {
      busy(0.05); // 640 × 50 µs ≈ 32 ms of work: about ten 3 ms slices
      return i * 2;
    });
    clearInterval(timer);
    expect(out).toEqual(items.map((i) => i * 2));
    expect(ticks).toBeGreaterThanOrEqual(3);
  });

  it("a slice is due once its budget is used, and next() starts a new one", async () => {
    const slice = new TimeSlice(2);
    expect(slice.due()).toBe(false);
    busy(3);
    expect(slice.due()).toBe(true);
    await slice.next();
    expect(slice.due()).toBe(false);
  });
});
