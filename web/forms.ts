/**
 * HTML forms: reading an application/x-www-form-urlencoded body once per request (≤ 64 KiB, no U+0000: 422), and
 * showing a refused form again with its message by the field (formAction).
 */
import type { Context } from "koa";
import getRawBody from "raw-body";
import { ValidationError, type AppError, type LineProblem } from "../core/errors.js";
import { appErrorTag, HttpProblem, toHttpError } from "./http-errors.js";

const FORM_LIMIT = 64 * 1024;
const FORM = Symbol("runwatch.form");

export const isFormContentType = (header: string | undefined): boolean =>
  (header ?? "").split(";")[0]!.trim().toLowerCase() === "application/x-www-form-urlencoded";

const ALL = Symbol("form values");

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
    const params = new URLSearchParams(text);
    form = Object.fromEntries(params);
    (ctx.state as { [ALL]?: URLSearchParams })[ALL] = params;
    // Postgres text cannot hold U+0000 (the query would fail: a 500). Bytes that are not UTF-8 were decoded as U+FFFD.
    for (const [field, value] of Object.entries(form)) {
      if (field.includes("\u0000") || value.includes("\u0000")) {
        const name = field.replaceAll("\u0000", "\ufffd");
        throw new ValidationError({ message: `${name} must not contain U+0000 (NUL)`, field: name });
      }
    }
  }
  state[FORM] = form;
  return form;
}

/** Every value of a repeated field of the form (checkboxes of one name), after readForm, in their order. */
export function formValues(ctx: Context, name: string): string[] {
  return (ctx.state as { [ALL]?: URLSearchParams })[ALL]?.getAll(name) ?? [];
}

/** The runs picked on the dashboard (its `sdk_run_id` checkboxes), each once; refused when none is. */
export function selectedRunIds(ctx: Context): string[] {
  const ids = [...new Set(formValues(ctx, "sdk_run_id").map((id) => id.trim()).filter(Boolean))];
  if (ids.length === 0) throw new ValidationError({ field: "sdk_run_id", message: "select at least one run to add" });
  return ids;
}

/** A refused form action, as its page shows it: what the error table (web/http-errors.ts) answers for the error. */
export interface Refusal {
  readonly kind: AppError["_tag"];
  readonly status: number;
  readonly code: string;
  /** The field the error names, else the form's `field`. */
  readonly field: string;
  readonly message: string;
  /** An uploaded file's bad lines (a dataset import); empty for any other refusal. */
  readonly lines: readonly LineProblem[];
}

/**
 * Runs a form's action. When it throws a core error of a kind in `refuses`, `refused` shows the page again (the
 * input as typed, the message by its field, the table's status); any other error goes on to the error page
 * (web/app.ts). Resolves true when the action ran to its end, false when it was refused.
 */
export async function formAction(action: {
  readonly refuses: readonly AppError["_tag"][];
  /** Where a refusal that names no field is shown; default "form". */
  readonly field?: string;
  readonly run: () => unknown;
  readonly refused: (refusal: Refusal) => unknown;
}): Promise<boolean> {
  try {
    await action.run();
    return true;
  } catch (err) {
    const kind = appErrorTag(err);
    if (kind === undefined || !action.refuses.includes(kind)) throw err;
    const { status, body } = toHttpError(err);
    const { code, message, field, lines } = body.error;
    await action.refused({ kind, status, code, message, field: field ?? action.field ?? "form", lines: lines ?? [] });
    return false;
  }
}

/**
 * A form post's answer when it is done: 303 See Other to the page to show (so reloading it does not post again),
 * with the one-line `flash` that page shows, when there is one.
 */
export function redirectAfterPost(ctx: Context, path: string, flash?: string): void {
  ctx.status = 303;
  ctx.redirect(flash === undefined ? path : `${path}?flash=${encodeURIComponent(flash)}`);
}
