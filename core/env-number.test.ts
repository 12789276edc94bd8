import { describe, expect, it } from "vitest";
import { envNumber } from "./env-number.js";
import { loadConfig } from "./config.js";

describe("envNumber", () => {
  it("is the default when unset or blank, and the number otherwise", () => {
    expect(envNumber({}, "X", 7)).toBe(7);
    expect(envNumber({ X: "" }, "X", 7)).toBe(7);
    expect(envNumber({ X: "  " }, "X", 7)).toBe(7);
    expect(envNumber({ X: " 12 " }, "X", 7)).toBe(12);
    expect(envNumber({ X: "0" }, "X", 7, { min: 0, whole: true })).toBe(0);
    expect(envNumber({ X: "2.5" }, "X", 7)).toBe(2.5);
    expect(envNumber({ X: "-3" }, "X", 7)).toBe(-3);
  });

  it("refuses what is not a number within its bounds, naming the variable and the value", () => {
    expect(() => envNumber({ X: "abc" }, "X", 7)).toThrow('X must be a number, got "abc"');
    expect(() => envNumber({ X: "NaN" }, "X", 7)).toThrow(/^X must be a number/);
    expect(() => envNumber({ X: "Infinity" }, "X", 7)).toThrow(/^X must be a number/);
    expect(() => envNumber({ X: "0" }, "X", 7, { min: 1, whole: true })).toThrow('X must be a whole number of at least 1, got "0"');
    expect(() => envNumber({ X: "1.5" }, "X", 7, { min: 0, whole: true })).toThrow('X must be a whole number of at least 0, got "1.5"');
    expect(() => envNumber({ X: "11" }, "X", 7, { min: 1, max: 10 })).toThrow('X must be a number from 1 to 10, got "11"');
    expect(() => envNumber({ X: "11" }, "X", 7, { max: 10 })).toThrow('X must be a number of at most 10, got "11"');
  });
});

describe("loadConfig's numbers", () => {
  it("name the variable of a bad number", () => {
    expect(() => loadConfig({ RUNWATCH_MAX_BODY_BYTES: "1MB" })).toThrow('RUNWATCH_MAX_BODY_BYTES must be a number, got "1MB"');
    expect(() => loadConfig({ PORT: "http" })).toThrow(/^PORT must be a number/);
    expect(loadConfig({ PORT: "9000" }).webPort).toBe(9000);
    expect(loadConfig({ PORT: "9000", RUNWATCH_WEB_PORT: "9001" }).webPort).toBe(9001);
    expect(() => loadConfig({ RUNWATCH_IMPROVE_DAILY_BUDGET_USD: "-1" })).toThrow(/^RUNWATCH_IMPROVE_DAILY_BUDGET_USD must be/);
  });
});
