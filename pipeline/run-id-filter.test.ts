/**
 * The run-id filter: never "certainly not" for an id added, rarely "maybe" for one that was not, at any size.
 */
import { expect, it } from "vitest";
import { runIdFor } from "../core/ids.js";
import { RunIdFilter } from "./run-id-filter.js";

const ids = (user: number, n: number): string[] => Array.from({ length: n }, (_, i) => runIdFor(user, `run-${i}`));

it("answers maybe for every id added, across stages, in either case", () => {
  const filter = new RunIdFilter(1000, 1e-5);
  const added = ids(1, 20_000); // 1,000 + 2,000 + … : five stages
  for (const id of added) filter.add(id);
  expect(filter.size).toBe(20_000);
  expect(added.every((id) => filter.mayHave(id))).toBe(true);
  expect(added.every((id) => filter.mayHave(id.toUpperCase()))).toBe(true);
});

it("answers certainly-not for ids never added, at about its false-positive rate however far it grew", () => {
  const filter = new RunIdFilter(1000, 1e-3);
  for (const id of ids(1, 50_000)) filter.add(id);
  const others = ids(2, 200_000); // another user: other ids
  const maybe = others.filter((id) => filter.mayHave(id)).length;
  // Expected at most 200 (1e-3 of 200,000, the bound over all stages); with a bug in the hashing it is thousands.
  expect(maybe).toBeLessThan(300);
  expect(maybe).toBeGreaterThanOrEqual(0);
  // Memory per id stays that of a Bloom filter at this rate (~14.4 bits per id at 1e-3, more for later stages).
  expect(filter.bytes / 50_000).toBeLessThan(6);
});

it("an empty filter has nothing; a string that is not a run id is always maybe", () => {
  const filter = new RunIdFilter();
  expect(filter.mayHave(runIdFor(1, "x"))).toBe(false);
  expect(filter.mayHave("not-a-uuid")).toBe(true);
  expect(filter.mayHave("")).toBe(true);
  filter.add("not-a-uuid");
  expect(filter.size).toBe(0);
});
