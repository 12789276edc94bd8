import { describe, expect, it } from "vitest";
import { TimeSlice } from "./time-slice.js";

const busy = (ms: number) => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

describe("time slicing", () => {
  it("a slice is due once its budget is used, and next() starts a new one", async () => {
    const slice = new TimeSlice(2);
    expect(slice.due()).toBe(false);
    busy(3);
    expect(slice.due()).toBe(true);
    await slice.next();
    expect(slice.due()).toBe(false);
  });
});
