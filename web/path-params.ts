/** Numbers named in a route's path, refused with a 422 naming them before they reach a Postgres integer column. */
import type { Context } from "koa";
import { ValidationError } from "../core/errors.js";
import { MAX_POSTGRES_INTEGER } from "../core/ports/sql.js";

/** The `:version` of an agent's config routes: a whole number from 1 within Postgres's `integer`. */
export function configVersionParam(ctx: Context): number {
  const version = Number(ctx.params.version);
  if (!Number.isInteger(version) || version < 1 || version > MAX_POSTGRES_INTEGER) {
    throw new ValidationError({ field: "version", message: "version must be a whole number from 1" });
  }
  return version;
}
