/** Reads an application/x-www-form-urlencoded body (HTML forms) once per request; ≤ 64 KiB. */
import type { Context } from "koa";
import getRawBody from "raw-body";
import { HttpProblem } from "./http-errors.js";

const FORM_LIMIT = 64 * 1024;
const FORM = Symbol("runwatch.form");

export const isFormContentType = (header: string | undefined): boolean =>
  (header ?? "").split(";")[0]!.trim().toLowerCase() === "application/x-www-form-urlencoded";

export async function readForm(ctx: Context): Promise<Record<string, string>> {
  const state = ctx.state as { [FORM]?: Record<string, string> };
  if (state[FORM]) return state[FORM];
  let form: Record<string, string> = {};
  if (isFormContentType(ctx.req.headers["content-type"])) {
    let text: string;
    try {
      text = await getRawBody(ctx.req, { length: ctx.req.headers["content-length"], limit: FORM_LIMIT, encoding: "utf-8" });
    } catch (err) {
      if ((err as { type?: string }).type === "entity.too.large") throw new HttpProblem(413, "payload_too_large", "the form is too large");
      throw new HttpProblem(400, "malformed_body", "the form body could not be read");
    }
    form = Object.fromEntries(new URLSearchParams(text));
  }
  state[FORM] = form;
  return form;
}
