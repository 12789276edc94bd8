/**
 * The runs filter and order as query parameters (docs/EXPLORER.md): `q`, the filter's string form, and `sort` and
 * `order`. A malformed one is a 422 naming the field (`filter` and the token for `q`: core/runs-filter).
 */
import type { Context } from "koa";
import { parseRunsFilter, parseRunsSort, type RunsFilter, type RunsSort } from "../../core/runs-filter/index.js";
import { stringParam } from "../api/read-api.js";

export const filterParam = (ctx: Context): RunsFilter => parseRunsFilter(stringParam(ctx, "q") ?? "");
export const sortParam = (ctx: Context): RunsSort => parseRunsSort(stringParam(ctx, "sort"), stringParam(ctx, "order"));
