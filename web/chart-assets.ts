/**
 * The chart library the runs charts draw with (uPlot, from its npm package), served by the app itself under
 * /static/vendor/uplot/ (uPlot.esm.js, uPlot.min.css): no CDN, and the pages' Content-Security-Policy (scripts and
 * styles from this origin only: web/middleware/security-headers.ts) allows it as it is.
 */
import { createRequire } from "node:module";
import path from "node:path";
import type { Middleware } from "koa";
import { serveStatic } from "./static-files.js";

const require = createRequire(import.meta.url);
const UPLOT_DIR = path.join(path.dirname(require.resolve("uplot/package.json")), "dist");
export const UPLOT_ASSETS = "/static/vendor/uplot/";

export const serveChartAssets = (): Middleware => serveStatic(UPLOT_DIR, UPLOT_ASSETS);
