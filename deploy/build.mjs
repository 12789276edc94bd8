// Compiles the server's TypeScript to plain JavaScript in dist/ (esbuild, one output file per source file, the same
// tree), and copies the files the code reads at run time (views, static files, migrations, protos). The server
// runs from dist/, so no TypeScript is compiled at run time (docs/ARCHITECTURE.md, "Memory and start").
//
//   node deploy/build.mjs          build now (npm install runs it; `npm run build` too)
//   ensureBuilt()                  build only when a source is newer than the last build (deploy/bin/runwatch.mjs)
//
// Tests and benches keep running the TypeScript sources through vitest or tsx; the processes they start with
// deploy/bin/runwatch.mjs run dist/, which is rebuilt first when stale.
//
// A rebuild never touches files a running process may still load (a server loads its thread modules lazily): each
// build goes to a directory of its own under .dist-builds/, and dist is a symlink swapped to it in one rename.
// Node resolves a module to its real path, so a running process keeps loading from the build it started with.
// runwatch.mjs records its pid in the build it runs (useBuild); a later build deletes only the builds that no
// live process recorded.
import { copyFile, lstat, mkdir, readdir, readFile, realpath, rename, rm, stat, symlink, writeFile } from "node:fs/promises";
import { rmSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const DIST = path.join(ROOT, "dist");
const BUILDS = path.join(ROOT, ".dist-builds");
const STAMP = path.join(DIST, ".build-stamp.json");
/** A build younger than this is never pruned: a process may be about to record itself in it. */
const PRUNE_AFTER_MS = 60_000;
const LOCK = path.join(ROOT, ".dist.lock");
const SOURCE_DIRS = ["core", "stores", "alerts", "evaluation", "human-input", "accounts", "dead-letters", "query", "prompts", "otlp", "plugins", "pipeline", "web", "gateway", "agents-service", "deploy"];
/** Not part of what runs: tests, their fixtures, downloaded tools, examples compiled on demand. */
const SKIPPED_DIRS = new Set(["test", "fixtures", ".cache", "node_modules", "dist"]);
const isTest = (name) => name.endsWith(".test.ts");

async function listSources() {
  const files = [];
  const walk = async (dir) => {
    for (const entry of await readdir(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (!SKIPPED_DIRS.has(entry.name)) await walk(rel);
      } else if (!isTest(entry.name) && !entry.name.endsWith(".d.ts")) {
        files.push(rel);
      }
    }
  };
  for (const dir of SOURCE_DIRS) await walk(dir);
  files.push("package.json", "tsconfig.json");
  return files;
}

/** What the last build was made from: the newest source time and the number of files (a deletion counts too). */
async function fingerprint(files) {
  let newest = 0;
  for (const f of files) newest = Math.max(newest, (await stat(path.join(ROOT, f))).mtimeMs);
  return { newest, files: files.length, node: process.versions.node };
}

async function isFresh(files) {
  try {
    const stamp = JSON.parse(await readFile(STAMP, "utf8"));
    const now = await fingerprint(files);
    return stamp.newest === now.newest && stamp.files === now.files && stamp.node === now.node;
  } catch {
    return false;
  }
}

export async function build() {
  const { build: esbuild, stop } = await import("esbuild");
  const files = await listSources();
  const id = `${Date.now().toString(36)}-${process.pid}`;
  const out = path.join(BUILDS, id);
  await mkdir(out, { recursive: true });
  const ts = files.filter((f) => f.endsWith(".ts"));
  await esbuild({
    entryPoints: ts.map((f) => path.join(ROOT, f)),
    outdir: out,
    outbase: ROOT,
    format: "esm",
    platform: "node",
    target: "node20",
    sourcemap: "linked",
    logLevel: "warning",
  });
  await stop(); // esbuild's service process would otherwise live as long as the server
  // package.json too: code reads its version next to the tree it runs in.
  for (const f of files.filter((f) => !f.endsWith(".ts") && f !== "tsconfig.json")) {
    await mkdir(path.dirname(path.join(out, f)), { recursive: true });
    await copyFile(path.join(ROOT, f), path.join(out, f));
  }
  await writeFile(path.join(out, ".build-stamp.json"), JSON.stringify(await fingerprint(files)));
  await swapIn(out, id);
  await pruneBuilds(out);
}

/** Points dist at `out` in one rename (a symlink made beside it, renamed over it). */
async function swapIn(out, id) {
  const link = path.join(ROOT, `.dist-${id}`);
  await symlink(path.relative(ROOT, out), link);
  // A dist left as a real directory by an older release: moved aside once, as a build of its own.
  const current = await lstat(DIST).catch(() => undefined);
  if (current?.isDirectory()) await rename(DIST, path.join(BUILDS, `moved-${id}`));
  await rename(link, DIST);
}

const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === "EPERM";
  }
};

/** Deletes the builds other than `keep` that no live process recorded and that are old enough. */
async function pruneBuilds(keep) {
  for (const entry of await readdir(BUILDS, { withFileTypes: true }).catch(() => [])) {
    const dir = path.join(BUILDS, entry.name);
    if (!entry.isDirectory() || dir === keep) continue;
    if (Date.now() - (await stat(dir)).mtimeMs < PRUNE_AFTER_MS) continue;
    const pids = await readdir(path.join(dir, ".pids")).catch(() => []);
    if (pids.some((p) => alive(Number(p)))) continue;
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * The build dist points at now, recorded as used by this process (so no later build deletes it while it runs);
 * the caller imports from the returned directory, not through dist, to stay on it.
 */
export async function useBuild() {
  const dir = await realpath(DIST);
  const pids = path.join(dir, ".pids");
  await mkdir(pids, { recursive: true });
  await writeFile(path.join(pids, String(process.pid)), "");
  process.once("exit", () => {
    try { rmSync(path.join(pids, String(process.pid)), { force: true }); } catch { /* gone with the build */ }
  });
  return dir;
}

/** Builds dist/ when it is missing or older than the sources; concurrent callers (parallel tests) build once. */
export async function ensureBuilt() {
  const files = await listSources();
  if (await isFresh(files)) return;
  await withLock(async () => {
    if (!(await isFresh(files))) await build();
  });
}

async function withLock(fn) {
  const deadline = Date.now() + 120_000;
  for (;;) {
    try {
      await mkdir(LOCK);
      break;
    } catch (err) {
      if (err.code !== "EEXIST") throw err;
      // A lock left by a process that died mid-build is stale after a minute (a build takes about a second).
      const age = Date.now() - (await stat(LOCK).then((s) => s.mtimeMs, () => Date.now()));
      if (age > 60_000 || Date.now() > deadline) await rm(LOCK, { recursive: true, force: true });
      else await new Promise((r) => setTimeout(r, 50));
    }
  }
  try {
    await fn();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const started = performance.now();
  await build();
  console.log(`built dist/ in ${Math.round(performance.now() - started)} ms`);
}
