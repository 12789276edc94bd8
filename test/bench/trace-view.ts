/**
 * The run page's trace view in Chromium, on runs of 1,000, 20,000 and 100,000 spans (test/bench/trace-run.ts: nodes
 * holding LLM and tool calls, every span a start and an end event): time to the first screen (from the navigation
 * to the first span row drawn), the first response's bytes and the bytes transferred until the whole tree is read,
 * the JS heap then (after a collection), and frame times while the tree scrolls (requestAnimationFrame deltas over
 * 240 frames of 150 px each). Each size is opened BENCH_SAMPLES times (default 3): the first open reads the run cold,
 * the others find its tree in the server's cache; both are printed.
 *
 * The servers run as `runwatch start` child processes, each on a data dir of its own, with a user and key made by
 * the CLI. BENCH_OLD=<commit>: the same run of 20,000 spans (BENCH_OLD_SPANS) is also opened on that commit's page,
 * served from a git worktree of it (made under the system's temp dir, node_modules linked, removed at the end), pairs
 * alternating old and new. BENCH_DATA_DIR keeps the new server's data (and its runs) between invocations.
 *
 * Run: npm run bench:trace-view   (env: BENCH_SPANS=1000,20000,100000, BENCH_SAMPLES=3, BENCH_OLD=5067247)
 * Chromium: /usr/bin/chromium, --headless --no-sandbox --disable-gpu --disable-background-networking.
 */
import { execFileSync, spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { childServerEnv, NPM_START_ENV } from "../e2e/harness.js";
import { sendBatches, traceRunEvents } from "./trace-run.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SIZES = (process.env.BENCH_SPANS ?? "1000,20000,100000").split(",").map(Number);
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 3);
const OLD = process.env.BENCH_OLD;
const OLD_SPANS = Number(process.env.BENCH_OLD_SPANS ?? 20_000);
const PASSWORD = "correct horse battery";
const children = new Set<ChildProcess>();

interface Server { url: string; email: string; key: string; root: string; dataDir: string }

/** `runwatch start` from the checkout at `root` on `dataDir`, with a user and key made by its CLI (kept in the data dir). */
async function startServer(root: string, dataDir: string): Promise<Server> {
  await fs.mkdir(dataDir, { recursive: true });
  const { env, url } = await childServerEnv(dataDir, {
    LOG_LEVEL: "error", RUNWATCH_RATE_LIMIT_PER_MINUTE: "1000000", RUNWATCH_EVENT_QUOTA_PER_MINUTE: "0",
  });
  const bin = path.join(root, "deploy/bin/runwatch.mjs");
  const cli = (...args: string[]) => execFileSync(process.execPath, [bin, ...args], { cwd: root, env: { ...env, RUNWATCH_PASSWORD: PASSWORD }, encoding: "utf8" }).trim();
  const account = path.join(dataDir, "bench-account.json");
  let acct: { email: string; key: string };
  if (existsSync(account)) acct = JSON.parse(await fs.readFile(account, "utf8"));
  else {
    const email = `bench-${Date.now()}@example.com`;
    cli("user", "create", "--email", email, "--name", "Bench");
    acct = { email, key: cli("key", "create", "--email", email, "--name", "bench") };
    await fs.writeFile(account, JSON.stringify(acct));
  }
  const child = spawn(process.execPath, [bin, "start"], { cwd: root, env: { ...env, ...NPM_START_ENV }, stdio: ["ignore", "ignore", "inherit"] });
  children.add(child);
  for (const deadline = Date.now() + 180_000; !(await fetch(`${url}/healthz`).then((r) => r.ok, () => false));) {
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the server at ${root} did not come up`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { url, root, dataDir, ...acct };
}

/** The run of `spans` spans on `srv`, ingested unless it is there whole already; its id. */
async function ensureRun(srv: Server, spans: number): Promise<string> {
  const id = `trace-bench-${spans}`;
  const events = traceRunEvents(id, { spans, t0: Date.UTC(2026, 10, 20, 9), needle: "zebra-crossing-42" });
  const count = async () => {
    const r = await fetch(`${srv.url}/api/runs/${id}?limit=1`, { headers: { authorization: `Bearer ${srv.key}` } });
    return r.ok ? ((await r.json()) as { run: { event_count: number } }).run.event_count : -1;
  };
  if ((await count()) === events.length) return id;
  const t = performance.now();
  await sendBatches(srv.url, srv.key, events);
  while ((await count()) !== events.length) await new Promise((r) => setTimeout(r, 500));
  console.log(`${srv.root === ROOT ? "new" : "old"}: ${spans} spans (${events.length} events) stored in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  return id;
}

async function login(browser: Browser, srv: Server): Promise<Page> {
  const ctx = await browser.newContext({ viewport: { width: 1400, height: 900 } });
  const page = await ctx.newPage();
  // The first screen: the frame after the first span row is in the document (either page's), timed in the page.
  await page.addInitScript(`new MutationObserver((_, obs) => {
    if (!document.querySelector('.tv-row[data-span-id]:not([data-span-id=""]), #span-tree li[data-span-id], #timeline li')) return;
    obs.disconnect();
    requestAnimationFrame(() => { window.__firstScreen = performance.now(); });
  }).observe(document, { subtree: true, childList: true, attributes: true });`);
  await page.goto(`${srv.url}/login`);
  await page.fill("#email", srv.email);
  await page.fill("#password", PASSWORD);
  await Promise.all([page.waitForURL((u) => !u.pathname.endsWith("/login")), page.click("button[type=submit]")]);
  return page;
}

interface Sample { firstScreenMs: number; htmlBytes: number; transferredBytes: number; heapMb: number; frames: number[] }

/** Opens the run's page and measures it; `old`: the page before the trace view (its tree is rendered by the server). */
async function sample(page: Page, srv: Server, id: string, spans: number, old: boolean): Promise<Sample> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.setCacheDisabled", { cacheDisabled: true });
  let transferred = 0;
  let htmlBytes = 0;
  const onFinished = (e: { requestId: string; encodedDataLength: number }) => { transferred += e.encodedDataLength; };
  const docs = new Set<string>();
  cdp.on("Network.responseReceived", (e: { requestId: string; type: string; response: { status: number } }) => { if (e.type === "Document" && e.response.status === 200) docs.add(e.requestId); });
  cdp.on("Network.loadingFinished", (e: { requestId: string; encodedDataLength: number }) => {
    onFinished(e);
    if (docs.has(e.requestId)) htmlBytes = e.encodedDataLength;
  });
  await page.goto("about:blank");
  transferred = 0;
  await page.goto(`${srv.url}/dashboard/${id}`, { waitUntil: "commit", timeout: 120_000 });
  const row = old ? "#span-tree li[data-span-id], #timeline li" : '.tv-row[data-span-id]:not([data-span-id=""])';
  await page.waitForSelector(row, { timeout: 120_000 });
  await page.waitForFunction("window.__firstScreen !== undefined");
  const firstScreenMs = (await page.evaluate("window.__firstScreen")) as number;
  if (!old) await page.waitForFunction((n) => document.getElementById("trace-count")?.textContent === `${n.toLocaleString("en-US")} spans`, spans, { timeout: 300_000 });
  else await page.waitForLoadState("load");
  await page.waitForTimeout(300);
  await cdp.send("HeapProfiler.collectGarbage");
  const heap = (await cdp.send("Runtime.getHeapUsage")) as { usedSize: number };
  // As text: tsx would wrap the functions given to evaluate in a helper the page does not have.
  const frames = (await page.evaluate(`new Promise((resolve) => {
    const el = ${old ? "document.scrollingElement" : 'document.getElementById("tv-scroll")'};
    el.scrollTop = 0;
    const deltas = [];
    let last = 0;
    let n = 0;
    const step = (t) => {
      if (last) deltas.push(t - last);
      last = t;
      el.scrollTop += 150;
      if (++n < 240) requestAnimationFrame(step);
      else resolve(deltas);
    };
    requestAnimationFrame(step);
  })`)) as number[];
  await cdp.detach();
  return { firstScreenMs, htmlBytes, transferredBytes: transferred, heapMb: heap.usedSize / 1024 / 1024, frames };
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(xs.length * p))]!;
const median = (xs: number[]) => pct(xs, 0.5);

function report(label: string, samples: Sample[]): void {
  const [cold, ...warm] = samples;
  const w = warm.length ? warm : samples;
  const frames = samples.flatMap((s) => s.frames);
  console.log(`${label}: first screen ${cold!.firstScreenMs.toFixed(0)} ms cold, ${median(w.map((s) => s.firstScreenMs)).toFixed(0)} ms warm (median of ${w.length});`
    + ` first response ${(cold!.htmlBytes / 1024).toFixed(0)} KiB, transferred ${(median(samples.map((s) => s.transferredBytes)) / 1024).toFixed(0)} KiB;`
    + ` JS heap ${median(samples.map((s) => s.heapMb)).toFixed(1)} MB; scrolling frames p50 ${pct(frames, 0.5).toFixed(1)} ms, p95 ${pct(frames, 0.95).toFixed(1)} ms, max ${Math.max(...frames).toFixed(1)} ms`);
}

/** A worktree of `commit` under the system's temp dir, node_modules linked; removed when the bench ends. */
function worktreeOf(commit: string): string {
  const dir = path.join(os.tmpdir(), `runwatch-bench-${commit}`);
  if (!existsSync(path.join(dir, "package.json"))) {
    execFileSync("git", ["worktree", "add", "--detach", dir, commit], { cwd: ROOT, stdio: "inherit" });
    execFileSync("ln", ["-s", path.join(ROOT, "node_modules"), path.join(dir, "node_modules")]);
  }
  return dir;
}

const keep = process.env.BENCH_DATA_DIR;
const dataDir = keep ?? (await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-bench-trace-")));
const browser = await chromium.launch({ executablePath: "/usr/bin/chromium", args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"] });
try {
  const srv = await startServer(ROOT, dataDir);
  const oldSrv = OLD ? await startServer(worktreeOf(OLD), `${dataDir}-old-${OLD}`) : undefined;
  const ids = new Map<number, string>();
  for (const n of SIZES) ids.set(n, await ensureRun(srv, n));
  const oldId = oldSrv ? await ensureRun(oldSrv, OLD_SPANS) : undefined;
  const page = await login(browser, srv);
  const oldPage = oldSrv ? await login(browser, oldSrv) : undefined;
  for (const n of SIZES) {
    const samples: Sample[] = [];
    for (let i = 0; i < SAMPLES; i++) samples.push(await sample(page, srv, ids.get(n)!, n, false));
    report(`new, ${n.toLocaleString("en-US")} spans`, samples);
  }
  if (oldSrv && oldPage && oldId) {
    // Pairs, old then new, on the same run: the ratio of their first screens.
    const old: Sample[] = [];
    const now: Sample[] = [];
    const newId = await ensureRun(srv, OLD_SPANS);
    for (let i = 0; i < SAMPLES; i++) {
      old.push(await sample(oldPage, oldSrv, oldId, OLD_SPANS, true));
      now.push(await sample(page, srv, newId, OLD_SPANS, false));
    }
    report(`old (${OLD}), ${OLD_SPANS.toLocaleString("en-US")} spans`, old);
    report(`new, ${OLD_SPANS.toLocaleString("en-US")} spans`, now);
    const ratios = old.map((o, i) => o.firstScreenMs / now[i]!.firstScreenMs);
    console.log(`first screen, old / new per pair: ${ratios.map((r) => r.toFixed(1)).join(", ")} (median ${median(ratios).toFixed(1)}×)`);
  }
} finally {
  await browser.close();
  for (const c of children) c.kill("SIGTERM");
  await new Promise((r) => setTimeout(r, 2000));
  if (!keep) await fs.rm(dataDir, { recursive: true, force: true });
  if (OLD && !keep) await fs.rm(`${dataDir}-old-${OLD}`, { recursive: true, force: true });
  if (OLD) execFileSync("git", ["worktree", "remove", "--force", path.join(os.tmpdir(), `runwatch-bench-${OLD}`)], { cwd: ROOT, stdio: "inherit" });
}
process.exit(0);
