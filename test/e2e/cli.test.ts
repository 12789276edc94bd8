/** The `runwatch` command as a user runs it: a child process per command on a temporary data dir. */
import { spawnSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { openPorts, type Ports } from "../../core/runtime.js";
import { hashApiKey } from "../../core/ids.js";
import { createEventStore } from "../../stores/runs/event-store.js";
import { buildSpans } from "../../core/events/spans.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
let dataDir = "";
let env: NodeJS.ProcessEnv;

const run = (...args: string[]) => spawnSync(process.execPath, [path.join(ROOT, "deploy/bin/runwatch.mjs"), ...args], { cwd: ROOT, env, encoding: "utf8", timeout: 90_000 });
/** The CLI with extra environment and standard input (the ways a password may arrive). */
const runWith = (extra: { env?: Record<string, string>; input?: string }, ...args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, "deploy/bin/runwatch.mjs"), ...args], { cwd: ROOT, env: { ...env, ...extra.env }, input: extra.input, encoding: "utf8", timeout: 90_000 });

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "runwatch-cli-"));
  env = { ...process.env, RUNWATCH_DATA_DIR: dataDir, LOG_LEVEL: "warn", NODE_ENV: "test" };
});
afterAll(() => fs.rm(dataDir, { recursive: true, force: true }));

describe("runwatch CLI", () => {
  it("prints usage for no command and exits 2 on an unknown one or missing flags", () => {
    expect(run().stdout).toContain("runwatch start");
    const bad = run("frobnicate");
    expect(bad.status).toBe(2);
    expect(bad.stderr).toContain("unknown command: frobnicate");
    const missing = run("user", "create", "--email", "x@example.com");
    expect(missing.status).toBe(2);
    expect(missing.stderr).toContain("missing --name");
    const noPassword = run("user", "create", "--email", "x@example.com", "--name", "X");
    expect(noPassword.status).toBe(2);
    expect(noPassword.stderr).toContain("--password-stdin, the RUNWATCH_PASSWORD variable, or type it at the prompt");
  }, 60_000);

  it("migrate, user create, key create (printed once, stored hashed, with expiry), and clear failures", async () => {
    const m = run("migrate");
    expect(m.status, m.stderr).toBe(0);
    expect(m.stdout).toMatch(/Schemas are up to date \(Postgres migrations: 1/);

    // The password never needs to be on the command line (security row m): standard input or the environment.
    const u = runWith({ input: "cli-password\n" }, "user", "create", "--email", "Cli@Example.com", "--name", "Cli User", "--password-stdin");
    expect(u.status, u.stderr).toBe(0);
    expect(u.stdout).toMatch(/Created user cli@example.com \(id \d+\)/);
    const viaEnv = runWith({ env: { RUNWATCH_PASSWORD: "env-password" } }, "user", "create", "--email", "env@example.com", "--name", "Env User");
    expect(viaEnv.status, viaEnv.stderr).toBe(0);
    const legacy = run("user", "create", "--email", "legacy@example.com", "--name", "Legacy", "--password", "legacy-password");
    expect(legacy.status, legacy.stderr).toBe(0);
    expect(legacy.stderr).toContain("--password is visible to other users");
    const dup = run("user", "create", "--email", "cli@example.com", "--name", "Again", "--password", "cli-password");
    expect(dup.status).toBe(1);
    expect(dup.stderr).toContain("already exists");
    const weak = run("user", "create", "--email", "w@example.com", "--name", "W", "--password", "short");
    expect(weak.status).toBe(1);
    expect(weak.stderr).toContain("at least 8 characters");

    const k = run("key", "create", "--email", "cli@example.com", "--name", "ci", "--expires", "30d");
    expect(k.status, k.stderr).toBe(0);
    const key = k.stdout.trim();
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(k.stderr).toContain("shown only this once");
    expect(run("key", "create", "--email", "nobody@example.com", "--name", "x").stderr).toContain("no user with email nobody@example.com");
    const badExpiry = run("key", "create", "--email", "cli@example.com", "--name", "x", "--expires", "soonish");
    expect(badExpiry.status).toBe(1);
    expect(badExpiry.stderr).toContain("expiry must be a duration like 30d");

    // Read back with the CLI's own environment: in scale mode (DATABASE_URL set) the key is on the Postgres server.
    const ports = await openPorts(loadConfig(env), ["sql"]);
    try {
      const rows = await ports.sql.query<{ key_hash: string; last4: string; expires_at: string }>("SELECT key_hash, last4, expires_at FROM api_keys WHERE name = 'ci'");
      expect(rows).toHaveLength(1);
      expect(rows[0]!.key_hash).toBe(hashApiKey(key));
      expect(rows[0]!.last4).toBe(key.slice(-4));
      const days = (new Date(rows[0]!.expires_at).getTime() - Date.now()) / 86_400_000;
      expect(Math.round(days)).toBe(30);
    } finally {
      await ports.close();
    }
  }, 180_000);

  it("project create, list, add-member, remove-member, and key create in a project with a scope", () => {
    const tag = Math.random().toString(36).slice(2, 8);
    const [owner, bob] = [`owner-${tag}@example.com`, `bob-${tag}@example.com`];
    for (const email of [owner, bob]) expect(runWith({ env: { RUNWATCH_PASSWORD: "project-password" } }, "user", "create", "--email", email, "--name", email).status).toBe(0);
    const created = run("project", "create", "--email", owner, "--name", `Support Bots ${tag}`);
    expect(created.status, created.stderr).toBe(0);
    const slug = created.stdout.trim();
    expect(slug).toBe(`support-bots-${tag}`);
    const added = run("project", "add-member", "--project", slug, "--email", bob, "--role", "viewer");
    expect(added.status, added.stderr).toBe(0);
    expect(added.stdout).toContain(`${bob} is now viewer of ${slug}`);
    const mine = run("project", "list", "--email", bob, "--json");
    expect(JSON.parse(mine.stdout).map((p: { slug: string; role: string }) => [p.slug, p.role])).toEqual([[`bob-${tag}`, "owner"], [slug, "viewer"]]);
    expect(run("project", "list").stdout).toContain(`${slug}\tSupport Bots ${tag}\t2 members`);

    const denied = run("key", "create", "--email", bob, "--name", "k", "--project", slug);
    expect(denied.status).toBe(1);
    expect(denied.stderr).toContain(`${bob} may not create keys in ${slug}: their role is viewer`);
    const k = run("key", "create", "--email", owner, "--name", "agent", "--project", slug, "--scope", "ingest");
    expect(k.status, k.stderr).toBe(0);
    expect(k.stdout.trim()).toMatch(/^[0-9a-f]{64}$/);
    expect(k.stderr).toContain(`(ingest) in project ${slug}, created by ${owner}`);
    for (const [args, message] of [
      [["key", "create", "--email", owner, "--name", "k", "--project", slug, "--scope", "everything"], "--scope takes ingest or read+ingest"],
      [["project", "add-member", "--project", "no-such", "--email", bob], "no project with the slug no-such"],
      [["project", "add-member", "--project", slug, "--email", "nobody@example.com"], "no account with the e-mail nobody@example.com"],
      [["project", "add-member", "--project", slug, "--email", bob, "--role", "root"], "--role takes viewer, member or admin"],
      [["project", "remove-member", "--project", slug, "--email", owner], "the owner cannot be removed"],
    ] as const) {
      const r = run(...args);
      expect([args.join(" "), r.status]).toEqual([args.join(" "), 1]);
      expect(r.stderr).toContain(message);
    }
    const removed = run("project", "remove-member", "--project", slug, "--email", bob);
    expect(removed.status, removed.stderr).toBe(0);
    const again = run("project", "remove-member", "--project", slug, "--email", bob);
    expect(again.status).toBe(1);
    expect(again.stderr).toContain(`${bob} is not a member of this project`);
  }, 240_000);

  it("demo ingests runs through the real API and waits until the pipeline stored them", async () => {
    const d = run("demo");
    expect(d.status, d.stderr).toBe(0);
    expect(d.stdout).toMatch(/demo-research-\S+\s+success\s+18 events/);
    expect(d.stdout).toMatch(/demo-support-\S+\s+error\s+4 events/);
    expect(d.stdout).toMatch(/demo-review-\S+\s+waiting_for_input\s+3 events/);
    expect(d.stdout).toMatch(/demo-etl-\S+\s+running\s+2 events/);
    expect(d.stdout).toContain("demo@runwatch.dev");
    expect(d.stdout).toMatch(/API key \(shown once\): [0-9a-f]{64}/);
    // The research run's trace: two LLM calls of two models under their nodes; the run's tokens are their sum.
    const research = /(demo-research-\S+)/.exec(d.stdout)![1]!;
    const ports = await openPorts(loadConfig(env), ["clickhouse"]);
    try {
      const [row] = await ports.clickhouse.query<{ uid: string | number }>("SELECT user_id AS uid FROM agent_runs WHERE external_id = {id:String} LIMIT 1", { id: research });
      const store = createEventStore(ports.clickhouse);
      const runRow = await store.getRun(Number(row!.uid), research);
      expect(runRow).toMatchObject({ llm_calls: 2, prompt_tokens: 5230, completion_tokens: 1410, status: "success" });
      const spans = buildSpans(await store.listEvents(Number(row!.uid), runRow!.run_id));
      expect(spans.filter((x) => x.kind === "llm").map((x) => [x.parent_span_id, x.model])).toEqual([["plan", "gpt-4o-mini"], ["write", "claude-sonnet-4-5"]]);
      expect(spans.filter((x) => x.kind === "tool").map((x) => x.parent_span_id)).toEqual(["search", "search"]);
    } finally {
      await ports.close();
    }
  }, 120_000);

  const demoRunCount = async (ch: Ports["clickhouse"], userId: number): Promise<number> =>
    (await ch.query<{ id: string }>("SELECT DISTINCT external_id AS id FROM agent_runs WHERE user_id = {uid:UInt64}", { uid: userId }))
      .filter((x) => x.id.startsWith("demo-")).length;

  it("retention apply deletes now the runs older than a user's retention, and only those", async () => {
    const ports = await openPorts(loadConfig(env), ["sql", "clickhouse"]);
    let userId: number;
    let demoRuns = 0;
    try {
      const [u] = await ports.sql.query<{ id: string | number }>("SELECT id FROM users WHERE email = 'demo@runwatch.dev'");
      userId = Number(u!.id);
      await ports.sql.query(
        `INSERT INTO project_settings (project_id, retention_days) VALUES ($1, 7) ON CONFLICT (project_id) DO UPDATE SET retention_days = 7`,
        [userId],
      );
      demoRuns = await demoRunCount(ports.clickhouse, userId);
      // A run last active in 2020 beside the demo's fresh runs.
      const runId = "0190a000-0000-7000-8000-00000000c0de";
      await ports.clickhouse.insert("agent_runs", [{ project_id: userId, user_id: userId, external_id: "cli-ancient", run_id: runId, agent_name: "old", status: "success", status_at: "2020-01-01 00:00:00.000", last_event_at: "2020-01-01 00:00:00.000", version: 1 }]);
      await ports.clickhouse.insert("agent_events", [{ event_id: "0190a000-0000-7000-8000-00000000e001", user_id: userId, run_id: runId, sdk_run_id: "cli-ancient", event_type: "run_start", agent_name: "old", payload: "{}", occurred_at: "2020-01-01 00:00:00.000", received_at: "2020-01-01 00:00:00.000" }]);
    } finally {
      await ports.close();
    }
    const r = run("retention", "apply");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`project ${userId}: kept 7 days \\(before \\S+\\); deleted 1 run and 0 dead letters\\.`));
    const again = run("retention", "apply", "--email", "demo@runwatch.dev", "--json");
    expect(JSON.parse(again.stdout)).toEqual([{ project_id: userId, days: 7, cutoff: expect.any(String), deleted_runs: 0, deleted_dead_letters: 0 }]);
    expect(run("retention", "apply", "--email", "nobody@example.com").stderr).toContain("no user with email nobody@example.com");
    // --project names the same personal project by its slug; another project's retention is its own.
    const personal = (JSON.parse(run("project", "list", "--email", "demo@runwatch.dev", "--json").stdout) as { slug: string; personal: boolean }[]).find((p) => p.personal)!;
    expect(JSON.parse(run("retention", "apply", "--project", personal.slug, "--json").stdout)).toEqual([{ project_id: userId, days: 7, cutoff: expect.any(String), deleted_runs: 0, deleted_dead_letters: 0 }]);
    const other = run("project", "create", "--email", "demo@runwatch.dev", "--name", "No retention");
    expect(other.status, other.stderr).toBe(0);
    const otherSlug = other.stdout.trim();
    expect(run("retention", "apply", "--project", otherSlug).stdout.trim()).toBe(`Project ${otherSlug} has no retention period (Settings → Data retention); nothing deleted.`);
    const missing = run("retention", "apply", "--project", "no-such-project");
    expect([missing.status, missing.stderr]).toEqual([1, expect.stringContaining("no project with the slug no-such-project")]);
    expect(run("retention", "apply", "--project", otherSlug, "--email", "demo@runwatch.dev").stderr).toContain("name one project");
    const after = await openPorts(loadConfig(env), ["clickhouse"]);
    try {
      const left = await after.clickhouse.query<{ id: string }>("SELECT DISTINCT external_id AS id FROM agent_runs WHERE user_id = {uid:UInt64}", { uid: userId });
      expect(left.map((x) => x.id)).not.toContain("cli-ancient");
      // The demo's fresh runs stay (4 of them; in scale mode a shared ClickHouse may hold more under this user id).
      expect(demoRuns).toBeGreaterThanOrEqual(4);
      expect(left.filter((x) => x.id.startsWith("demo-")).length).toBe(demoRuns);
    } finally {
      await after.close();
    }
  }, 120_000);
});
