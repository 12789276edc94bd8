/** formAction (web/forms.ts): which errors show the form again, with what status, field and message. */
import { describe, expect, it } from "vitest";
import { AuthError, Conflict, NotFound, RateLimited, ValidationError } from "../core/errors.js";
import { formAction, type Refusal } from "./forms.js";

/** Runs `run` as a form action refusing `refuses`; what it resolved to and what the page was shown with. */
async function submit(refuses: Parameters<typeof formAction>[0]["refuses"], run: () => unknown, field?: string) {
  const shown: Refusal[] = [];
  const done = await formAction({ refuses, ...(field ? { field } : {}), run, refused: async (r) => void shown.push(r) });
  return { done, shown };
}

describe("formAction", () => {
  it("resolves true when the action runs to its end, and shows nothing", async () => {
    let ran = false;
    expect(await submit(["ValidationError"], async () => void (ran = true))).toEqual({ done: true, shown: [] });
    expect(ran).toBe(true);
  });

  it("shows a refusal with the table's status, the error's field and message", async () => {
    const cases: Array<[Error, Refusal]> = [
      [new ValidationError({ message: "name is required", field: "name" }), { kind: "ValidationError", status: 422, code: "validation_error", field: "name", message: "name is required", lines: [] }],
      [new Conflict({ code: "agent_exists", message: "exists", field: "name" }), { kind: "Conflict", status: 409, code: "agent_exists", field: "name", message: "exists", lines: [] }],
      [new NotFound({ resource: "run", message: "no such run" }), { kind: "NotFound", status: 404, code: "not_found", field: "form", message: "no such run", lines: [] }],
      [new AuthError({ code: "forbidden", message: "not yours" }), { kind: "AuthError", status: 403, code: "forbidden", field: "form", message: "not yours", lines: [] }],
    ];
    for (const [err, refusal] of cases) {
      expect(await submit(["ValidationError", "Conflict", "NotFound", "AuthError"], () => { throw err; })).toEqual({ done: false, shown: [refusal] });
    }
  });

  it("puts a refusal that names no field by the form's own field; keeps an upload's bad lines", async () => {
    const { shown } = await submit(["ValidationError"], async () => { throw new ValidationError({ message: "bad" }); }, "api_key");
    expect(shown[0]).toMatchObject({ field: "api_key", message: "bad", status: 422 });
    const lines = [{ line: 2, message: "input is required" }];
    const upload = await submit(["ValidationError"], async () => { throw new ValidationError({ message: "1 line is bad", lines }); });
    expect(upload.shown[0]).toMatchObject({ field: "form", lines });
  });

  it("says a rate limit in the table's words", async () => {
    const { shown } = await submit(["RateLimited"], async () => { throw new RateLimited({ limit: 5, unit: "judge calls", remaining: 0, retryAfterMs: 30_000 }); });
    expect(shown[0]).toMatchObject({ kind: "RateLimited", status: 429, message: "the project's judge calls per minute (5, calls_per_minute) are used up; retry in 30 s" });
  });

  it("lets any other error go on to the error page", async () => {
    const conflict = new Conflict({ message: "exists" });
    await expect(submit(["ValidationError"], async () => { throw conflict; })).rejects.toBe(conflict);
    const crash = new Error("db down");
    await expect(submit(["ValidationError", "Conflict"], () => { throw crash; })).rejects.toBe(crash);
  });

  it("lets an error of the page itself go on too", async () => {
    const broken = new Error("template missing");
    await expect(formAction({
      refuses: ["ValidationError"],
      run: async () => { throw new ValidationError({ message: "bad" }); },
      refused: async () => { throw broken; },
    })).rejects.toBe(broken);
  });
});
