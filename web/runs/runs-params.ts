/**
 * The runs filter and order as query parameters of the explorer's routes (chart, export), read as GET /api/runs
 * reads them (runs-list-params.ts): `q`, the filter's string form (a bad token is a 422 naming `q`), and `sort` and
 * `order`.
 */
import type { Context } from "koa";
import { parseRunsSort, type RunsFilter, type RunsSort } from "../../core/runs-filter/index.js";
import { stringParam } from "../api/read-api.js";
import { filterOfQ } from "./runs-list-params.js";

export const filterParam = (ctx: Context): RunsFilter => filterOfQ(ctx);
export const sortParam = (ctx: Context): RunsSort => parseRunsSort(stringParam(ctx, "sort"), stringParam(ctx, "order"));
