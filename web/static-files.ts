/** Serves web/static at /static (GET/HEAD), with Last-Modified revalidation; never outside that directory. */
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Middleware } from "koa";

export const STATIC_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "static");

export function serveStatic(root: string = STATIC_DIR, prefix = "/static/"): Middleware {
  return async (ctx, next) => {
    if (!ctx.path.startsWith(prefix) || (ctx.method !== "GET" && ctx.method !== "HEAD")) return next();
    let rel: string;
    try {
      rel = decodeURIComponent(ctx.path.slice(prefix.length));
    } catch {
      return next();
    }
    const file = path.resolve(root, rel);
    if (rel.includes("\0") || !file.startsWith(root + path.sep)) return next();
    const stat = await fs.promises.stat(file).catch(() => undefined);
    if (!stat?.isFile()) return next();
    ctx.type = path.extname(file);
    ctx.lastModified = stat.mtime;
    ctx.set("Cache-Control", "public, max-age=300");
    ctx.status = 200;
    if (ctx.fresh) {
      ctx.status = 304;
      return;
    }
    ctx.length = stat.size;
    ctx.body = ctx.method === "HEAD" ? null : fs.createReadStream(file);
  };
}
