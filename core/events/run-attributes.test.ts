import { describe, expect, it } from "vitest";
import { MAX_RUN_METADATA_KEYS, MAX_RUN_TAGS } from "./attributes.js";
import { newRunRecord } from "./run.js";
import { decodeMetadata, foldRunAttributes, mergeMetadata, unionTags } from "./run-attributes.js";

const run = () => newRunRecord({ project_id: 1, user_id: 1 }, "r", "run-uuid", "2026-11-23T10:00:00.000Z");

describe("a run's attributes across its events", () => {
  it("tags: the union, sorted, without repeats; the same array when nothing is new", () => {
    const a = unionTags([], ["vip", "beta", "vip"]);
    expect(a).toEqual(["beta", "vip"]);
    expect(unionTags(a, ["vip"])).toBe(a);
    expect(unionTags(a, ["alpha", "Zed", "ünï"])).toEqual(["Zed", "alpha", "beta", "vip", "ünï"]);
    expect(a).toEqual(["beta", "vip"]); // never changed in place
  });

  it(`tags: past ${MAX_RUN_TAGS} distinct tags further ones are dropped`, () => {
    const first = unionTags([], Array.from({ length: 40 }, (_, i) => `t${String(i).padStart(2, "0")}`));
    const full = unionTags(first, Array.from({ length: 40 }, (_, i) => `u${String(i).padStart(2, "0")}`));
    expect(full).toHaveLength(MAX_RUN_TAGS);
    expect(full.at(-1)).toBe("u09");
    expect(unionTags(full, ["a-new-one"])).toBe(full);
    expect(unionTags(full, ["t00"])).toBe(full);
  });

  it("metadata: the latest value of each key, as JSON text, so its type survives", () => {
    const m1 = mergeMetadata({}, { customer: "acme", tier: 2, trial: true, n: "2" });
    expect({ ...m1 }).toEqual({ customer: '"acme"', tier: "2", trial: "true", n: '"2"' });
    const m2 = mergeMetadata(m1, { tier: 3, region: "eu" });
    expect({ ...m2 }).toEqual({ customer: '"acme"', tier: "3", trial: "true", n: '"2"', region: '"eu"' });
    expect(mergeMetadata(m2, { tier: 3 })).toBe(m2);
    expect({ ...m1 }).toEqual({ customer: '"acme"', tier: "2", trial: "true", n: '"2"' }); // never changed in place
    expect(decodeMetadata(m2)).toEqual({ customer: "acme", tier: 3, trial: true, n: "2", region: "eu" });
    // "__proto__" is a key like any other.
    const proto = mergeMetadata({}, JSON.parse('{"__proto__": "x"}'));
    expect(Object.keys(proto)).toEqual(["__proto__"]);
    expect(Object.keys(decodeMetadata(proto))).toEqual(["__proto__"]);
  });

  it(`metadata: past ${MAX_RUN_METADATA_KEYS} keys further new keys are dropped, known keys still change`, () => {
    const full = mergeMetadata({}, Object.fromEntries(Array.from({ length: MAX_RUN_METADATA_KEYS }, (_, i) => [`k${i}`, i])));
    const next = mergeMetadata(full, { extra: 1, k0: "changed" });
    expect(Object.keys(next)).toHaveLength(MAX_RUN_METADATA_KEYS);
    expect(next.k0).toBe('"changed"');
    expect("extra" in next).toBe(false);
  });

  it("end_user, environment, release: the latest non-empty value; an event without them changes nothing", () => {
    const r = run();
    const { tags, metadata } = r;
    foldRunAttributes(r, {});
    expect(r.tags).toBe(tags);
    expect(r.metadata).toBe(metadata);
    foldRunAttributes(r, { end_user: "u1", environment: "staging", release: "v1" });
    foldRunAttributes(r, { end_user: "u2", tags: ["b"] });
    foldRunAttributes(r, { environment: "production", tags: ["a"], metadata: { k: 1 } });
    expect(r).toMatchObject({ end_user: "u2", environment: "production", release: "v1", tags: ["a", "b"] });
    expect(decodeMetadata(r.metadata)).toEqual({ k: 1 });
  });
});
