import { describe, expect, it } from "vitest";
import { namesProject } from "./sender.js";

describe("namesProject", () => {
  it("gives a record logged before projects its user's personal project, keeps a named one, refuses a malformed one", () => {
    const legacy: { project_id?: unknown; user_id: number } = { user_id: 7 };
    expect(namesProject(legacy)).toBe(true);
    expect(legacy.project_id).toBe(7);
    const team = { project_id: 9, user_id: 7 };
    expect(namesProject(team)).toBe(true);
    expect(team.project_id).toBe(9);
    for (const bad of ["9", 1.5, Number.NaN, 2 ** 60, null, {}]) expect([bad, namesProject({ project_id: bad, user_id: 7 })]).toEqual([bad, false]);
  });
});
