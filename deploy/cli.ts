/**
 * The `runwatch` command line (deploy/bin/runwatch.mjs loads this file through tsx).
 *
 *   runwatch start [--role web|pipeline|gateway|agents|all]   (comma-separated roles allowed)
 *   runwatch migrate
 *   runwatch user create --email <e> --name <n>   (password from RUNWATCH_PASSWORD, --password-stdin or a prompt)
 *   runwatch key create --email <e> --name <n> [--expires 30d|2027-01-31]
 *   runwatch demo [--email <e>] [--password <p>]
 *   runwatch retention apply [--project P | --email E] [--json]
 *   runwatch dead-letters list|replay|purge [--id N[,N…]] [--project P | --email E] [--all] [--limit N] [--json]
 */
import { parseArgs } from "node:util";
import { loadConfig, type Config } from "../core/config.js";
import { createLogger, type Logger } from "../core/logger.js";
import { openPorts, type Ports } from "../core/runtime.js";
import { appliedMigrations } from "../core/postgres/migrate.js";
import { lockDataDir } from "./data-dir-lock.js";
import { admin, reachServer, withLocalPorts } from "./admin-client.js";
import { resolveSessionSecret } from "../core/secrets.js";
import { AdminError, adminSocketPath, runAdmin, serveAdmin, type AdminResult, type DeadLetterSelection } from "./admin.js";
import { ROLES, parseRoles, portsFor, type RunningService } from "./roles.js";
import { demoRuns, ingestDemo } from "./demo.js";
import type { ReplayResult } from "../dead-letters/index.js";
import type { DeadLetter } from "../stores/dead-letters.js";
import type { RetentionOutcome } from "../stores/retention.js";
import { projectCommand } from "./cli-projects.js";
import { datasetsCommand } from "./cli-datasets.js";
import { PROMPT_USAGE, promptCommand } from "./cli-prompts.js";
import { out, required, UsageError } from "./cli-output.js";

const USAGE = `Runwatch: observability for AI agent runs.

Usage:
  runwatch start [--role web|pipeline|gateway|agents|all]  start services (default: all in one process)
  runwatch migrate                                         apply database migrations and exit
  runwatch user create --email E --name N                  create a login account; the password comes from
                                                           RUNWATCH_PASSWORD, --password-stdin, or a prompt
  runwatch key create --email E --name N [--project P] [--scope ingest|read+ingest] [--expires 30d]
                                                           create an API key (printed once) in project P (its
                                                           slug; default: E's personal project); E must be an
                                                           admin or owner of P
  runwatch project create --email E --name N               create a project owned by E; prints its slug
  runwatch project list [--email E] [--json]               every project, or E's with E's role
  runwatch project add-member --project P --email E [--role viewer|member|admin]
                                                           add E to P (default role member), or change E's role
  runwatch project remove-member --project P --email E     remove E from P
  runwatch datasets export --project P --name N [--version V] [--format jsonl|csv] [--file F]
                                                           a dataset version as JSON Lines or CSV (stdout or F)
  runwatch datasets import --project P --name N --file F [--format jsonl|csv] [--create]
                                                           a file as the dataset's next version (--create: make it)${PROMPT_USAGE}
  runwatch demo [--email E] [--password P]                 demo account, key and a few runs to look at
  runwatch retention apply [--project P | --email E] [--json]
                                                           delete now each project's runs older than its retention
                                                           (Settings → Data retention); the pipeline does it hourly
  runwatch dead-letters list [--project P | --email E] [--limit N] [--json]
                                                           events the pipeline could not store, with the error
  runwatch dead-letters replay --id N[,N…] | --project P | --email E | --all
                                                           put them back into the event log (after a fix)
  runwatch dead-letters purge --id N[,N…] | --project P | --email E | --all
                                                           delete them for good

Environment: RUNWATCH_DATA_DIR (default ./.data), RUNWATCH_WEB_PORT (8080), RUNWATCH_GATEWAY_PORT (8082),
RUNWATCH_AGENTS_PORT (8081), RUNWATCH_OTLP_GRPC_PORT (4317, or off), RUNWATCH_HOST (127.0.0.1), SESSION_SECRET, KAFKA_BROKERS, CLICKHOUSE_URL,
DATABASE_URL, REDIS_URL. See README.md.`;



/** The config every role shares, with the session secret resolved once (env, or the data dir's file). */
async function resolvedConfig(): Promise<Config> {
  const config = loadConfig();
  return { ...config, sessionSecret: await resolveSessionSecret(config) };
}


async function start(config: Config, roleArg: string | undefined, logger: Logger): Promise<void> {
  const roles = parseRoles(roleArg);
  const embeddedStores = !config.databaseUrl && portsFor(roles).some((p) => p === "sql" || p === "clickhouse" || p === "log");
  // One owner of an embedded data dir (data-dir-lock.ts): a CLI command working on it directly finishes first.
  const lock = embeddedStores ? await lockDataDir(config.dataDir, "server", 30_000) : undefined;
  const ports = await openPorts(config, portsFor(roles));
  const running: RunningService[] = [];
  let adminServer: { close(): Promise<void> } | undefined;
  let stopping = false;

  const shutdown = async (signal: string) => {
    if (stopping) {
      logger.warn("second signal: exiting now", { signal });
      process.exit(130);
    }
    stopping = true;
    logger.info("shutting down", { signal });
    // Web first (no new 202s), the pipeline last (it finishes and commits the batch in flight).
    for (const svc of [...running].reverse()) {
      await svc.close().catch((err) => logger.error("service did not stop cleanly", { role: svc.role, err }));
    }
    await adminServer?.close().catch(() => {});
    await ports.close().catch((err) => logger.error("closing ports failed", { err }));
    lock?.release();
    logger.info("stopped");
    process.exit(0);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
  // The last resort: an error escaping a background path (a socket's callback, a timer, a library's event) is
  // logged and the server serves on, since ingest, the pipeline and the pages share this process. The paths that
  // can fail answer their own errors (gateway/engines, core/pubsub, the pipeline's isolation); an entry here is a
  // defect to report, not a way of handling errors.
  process.on("uncaughtException", (err, origin) => logger.error("uncaught error in a background path; serving on", { origin, error: err }));
  process.on("unhandledRejection", (reason) => logger.error("unhandled rejection in a background path; serving on", { error: reason }));

  let webUrl: string | null = null;
  let started = () => {};
  const ready = new Promise<void>((resolve) => (started = resolve));
  try {
    // The admin socket opens before the web port, so a CLI command always reaches this server once it accepts
    // HTTP; its commands wait until every role has started.
    if (embeddedStores && roles.includes("web")) {
      adminServer = await serveAdmin(adminSocketPath(config.dataDir), { sql: ports.sql, log: ports.log, ch: ports.clickhouse, pubsub: ports.pubsub }, () => webUrl, ready);
    }
    for (const role of roles) {
      const svc = await ROLES[role].start(ports, config, logger, roles);
      if (svc) running.push(svc);
    }
    webUrl = running.find((s) => s.role === "web")?.url ?? null;
    started();
  } catch (err) {
    for (const svc of running.reverse()) await svc.close().catch(() => {});
    await adminServer?.close().catch(() => {});
    await ports.close().catch(() => {});
    lock?.release();
    throw err;
  }

  out("Runwatch is running");
  for (const svc of running) out(`  ${svc.role.padEnd(9)} ${svc.url ?? "consuming the event log"}`);
  out(`  data dir  ${config.dataDir}`);
  if (running.some((s) => s.role === "web")) {
    out("First steps: `runwatch demo`, or `runwatch user create ...` then `runwatch key create ...` (see README.md). Ctrl-C stops.");
  }
}

async function demo(config: Config, values: Record<string, unknown>, logger: Logger): Promise<void> {
  const email = (values.email as string | undefined) ?? "demo@runwatch.dev";
  const password = (values.password as string | undefined) ?? "runwatch-demo";
  const account = { cmd: "demo.account", email, name: "Demo User", password } as const;

  let baseUrl: string | null = null;
  let result: AdminResult | undefined;
  let local: { ports: Ports; services: RunningService[] } | undefined;
  result = await reachServer(config, account);
  if (result) baseUrl = ((await reachServer(config, { cmd: "info" })) as { web_url: string | null }).web_url;
  let lock: { release(): void } | undefined;
  try {
    if (!result) {
      // No server runs on this data dir: run web (on a free port) and the pipeline here, just for the demo.
      if (!config.databaseUrl) lock = await lockDataDir(config.dataDir, "cli", 30_000);
      const ports = await openPorts(config);
      local = { ports, services: [] };
      const pipeline = await ROLES.pipeline.start(ports, config, logger, ["pipeline"]);
      if (!pipeline) throw new Error("this build has no pipeline; the demo runs cannot be processed");
      local.services.push(pipeline);
      const { startWeb } = await import("../web/server.js");
      const web = await startWeb(ports, { port: 0, host: "127.0.0.1", otlpGrpcPort: null, logger: logger.child({ svc: "web" }) });
      local.services.push({ role: "web", url: web.url, close: () => web.close() });
      baseUrl = web.url;
      result = await runAdmin(ports, account);
    }
    if (!baseUrl) throw new Error("the running server has no web role; start it with --role all or web");
    const { user, key, created_user } = result as { user: { email: string }; key: string; created_user?: boolean };
    const outcomes = await ingestDemo(baseUrl, key, demoRuns());
    out(`Demo data is in. ${outcomes.length} runs:`);
    for (const o of outcomes) out(`  ${o.sdk_run_id.padEnd(34)} ${o.status.padEnd(18)} ${o.event_count} events`);
    out("");
    out(`Log in at ${config.publicWebUrl}/login`);
    out(`  email     ${user.email}`);
    out(`  password  ${created_user ? password : "(unchanged: the demo account already existed)"}`);
    out(`API key (shown once): ${key}`);
    if (local) out("Start the server with `npm start` to see them in the dashboard.");
    if (created_user && !values.password) out("The demo password is public: do not use this account on a server others can reach.");
  } finally {
    if (local) {
      for (const s of local.services.reverse()) await s.close().catch(() => {});
      await local.ports.close();
    }
    lock?.release();
  }
}

/**
 * A new account's password, never from the command line if it can be helped (argv is visible to every user
 * of the machine in `ps` and lands in shell history): --password-stdin (one line), RUNWATCH_PASSWORD, or a
 * prompt on a terminal. --password still works for old scripts, with a warning.
 */
async function readPassword(values: Record<string, unknown>): Promise<string> {
  if (values["password-stdin"]) {
    const chunks: Buffer[] = [];
    for await (const c of process.stdin) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString("utf8").replace(/\r?\n$/, "");
  }
  if (process.env.RUNWATCH_PASSWORD) return process.env.RUNWATCH_PASSWORD;
  if (typeof values.password === "string" && values.password) {
    process.stderr.write("runwatch: warning: --password is visible to other users (ps, shell history); use --password-stdin or RUNWATCH_PASSWORD\n");
    return values.password;
  }
  if (process.stdin.isTTY) return promptHidden("Password for the new account: ");
  throw new UsageError("give the password with --password-stdin, the RUNWATCH_PASSWORD variable, or type it at the prompt");
}

/** Reads a line from the terminal without echoing it. */
function promptHidden(question: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const stdin = process.stdin;
    process.stderr.write(question);
    stdin.setRawMode(true);
    stdin.resume();
    let typed = "";
    const onData = (buf: Buffer) => {
      for (const ch of buf.toString("utf8")) {
        if (ch === "\r" || ch === "\n") {
          done();
          process.stderr.write("\n");
          return resolve(typed);
        }
        if (ch === "\u0003") {
          done();
          return reject(new UsageError("cancelled"));
        }
        if (ch === "\u007f") typed = typed.slice(0, -1);
        else typed += ch;
      }
    };
    const done = () => {
      stdin.off("data", onData);
      stdin.setRawMode(false);
      stdin.pause();
    };
    stdin.on("data", onData);
  });
}

function deadLetterSelection(values: Record<string, unknown>): DeadLetterSelection {
  const ids = typeof values.id === "string" ? values.id.split(",").map((s) => Number(s.trim())) : undefined;
  if (ids?.some((n) => !Number.isSafeInteger(n) || n <= 0)) throw new UsageError("--id takes dead-letter ids, e.g. --id 3 or --id 3,4");
  return { ids, project: values.project as string | undefined, email: values.email as string | undefined, all: values.all === true };
}

async function deadLettersCommand(config: Config, verb: string, values: Record<string, unknown>): Promise<number> {
  const selection = deadLetterSelection(values);
  if (verb === "list") {
    const limit = values.limit === undefined ? 100 : Number(values.limit);
    if (!Number.isSafeInteger(limit) || limit < 1) throw new UsageError("--limit takes a positive whole number");
    const { dead_letters: letters } = (await admin(config, { cmd: "dead-letters.list", limit, ...selection })) as { dead_letters: DeadLetter[] };
    if (values.json) {
      out(JSON.stringify(letters, null, 2));
      return 0;
    }
    if (!letters.length) out("No dead letters: every acknowledged event was stored.");
    for (const d of letters) {
      out(`#${d.id}  ${d.last_failed_at}  project ${d.project_id ?? "-"}  run ${d.sdk_run_id ?? "-"}  ${d.event_type ?? "(not an event)"}  attempts ${d.attempts}`);
      out(`    error: ${d.error}`);
      if (d.error_at) out(`    at:    ${d.error_at.split("\n").join("\n           ")}`);
      out(`    event: ${d.raw.length > 500 ? `${d.raw.slice(0, 500)}… (${d.raw.length} chars; --json shows all)` : d.raw}`);
    }
    return 0;
  }
  if (verb === "replay") {
    const r = (await admin(config, { cmd: "dead-letters.replay", ...selection })) as ReplayResult;
    out(`Replayed ${r.replayed} dead letter${r.replayed === 1 ? "" : "s"} into the event log.`);
    for (const s of r.skipped) out(`  #${s.id} not replayed: ${s.reason}`);
    return 0;
  }
  const { purged } = (await admin(config, { cmd: "dead-letters.purge", ...selection })) as { purged: number };
  out(`Purged ${purged} dead letter${purged === 1 ? "" : "s"}.`);
  return 0;
}

export async function main(argv: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      role: { type: "string" },
      email: { type: "string" },
      name: { type: "string" },
      password: { type: "string" },
      "password-stdin": { type: "boolean" },
      expires: { type: "string" },
      project: { type: "string" },
      scope: { type: "string" },
      id: { type: "string" },
      all: { type: "boolean" },
      limit: { type: "string" },
      json: { type: "boolean" },
      file: { type: "string" },
      format: { type: "string" },
      version: { type: "string" },
      create: { type: "boolean" },
      message: { type: "string" }, label: { type: "string" },
      force: { type: "boolean" }, reason: { type: "string" },
      help: { type: "boolean", short: "h" },
    },
  });
  const [cmd, sub] = positionals;
  if (values.help || !cmd || cmd === "help") {
    out(USAGE);
    return cmd || values.help ? 0 : 1;
  }
  const config = await resolvedConfig();
  const logger = createLogger(config.logLevel);
  switch (`${cmd}${sub ? " " + sub : ""}`) {
    case "start":
      await start(config, values.role, logger);
      return -1; // keep running until a signal
    case "migrate": {
      const applied = await withLocalPorts(config, ["sql", "clickhouse"], (ports) => appliedMigrations(ports.sql));
      out(`Schemas are up to date (Postgres migrations: ${applied.map((m) => m.version).join(", ") || "none"}; ClickHouse migrated).`);
      return 0;
    }
    case "user create": {
      required(values, "email", "name");
      const password = await readPassword(values);
      const { user } = (await admin(config, { cmd: "user.create", email: values.email!, name: values.name!, password })) as { user: { id: number; email: string } };
      out(`Created user ${user.email} (id ${user.id}).`);
      return 0;
    }
    case "key create": {
      required(values, "email", "name");
      const r = (await admin(config, { cmd: "key.create", email: values.email!, name: values.name!, expires: values.expires, project: values.project, scope: values.scope })) as {
        key: string; info: { name: string; scope: string; expires_at: string | null }; project: { slug: string };
      };
      out(r.key);
      process.stderr.write(
        `API key "${r.info.name}" (${r.info.scope}) in project ${r.project.slug}, created by ${values.email}` +
          `${r.info.expires_at ? `, expires ${r.info.expires_at}` : ""}. It is shown only this once; store it now.\n`,
      );
      return 0;
    }
    case "datasets export":
    case "datasets import":
      return datasetsCommand(config, sub!, values);
    case "prompt push": case "prompt get": case "prompt label":
      return promptCommand(config, sub!, positionals.slice(2), values);
    case "project create":
    case "project list":
    case "project add-member":
    case "project remove-member":
      return projectCommand(config, sub!, values);
    case "demo":
      await demo(config, values, logger);
      return 0;
    case "retention apply": {
      const { retention } = (await admin(config, { cmd: "retention.apply", project: values.project, email: values.email })) as { retention: RetentionOutcome[] };
      if (values.json) out(JSON.stringify(retention));
      else if (retention.length === 0) {
        const which = values.project ? `Project ${values.project} has` : values.email ? `${values.email}'s personal project has` : "No project has";
        out(`${which} no retention period (Settings → Data retention); nothing deleted.`);
      }
      else for (const r of retention) out(`project ${r.project_id}: kept ${r.days} days (before ${r.cutoff}); deleted ${r.deleted_runs} run${r.deleted_runs === 1 ? "" : "s"} and ${r.deleted_dead_letters} dead letter${r.deleted_dead_letters === 1 ? "" : "s"}.`);
      return 0;
    }
    case "dead-letters list":
    case "dead-letters replay":
    case "dead-letters purge":
      return deadLettersCommand(config, sub!, values);
    default:
      throw new UsageError(`unknown command: ${positionals.join(" ")}`);
  }
}

/**
 * Exits once stdout and stderr have handed everything written to the OS: process.exit() alone drops what a full
 * pipe has not taken yet (`dead-letters list --json` into a pipe lost all but the first ~64-400 KiB).
 */
async function exitFlushed(code: number): Promise<never> {
  const flushed = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write("", () => resolve()));
  await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
  process.exit(code);
}

export async function runCli(argv: string[]): Promise<void> {
  try {
    const code = await main(argv);
    if (code >= 0) await exitFlushed(code);
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`runwatch: ${err.message}\n\n${USAGE}\n`);
      await exitFlushed(2);
    }
    const e = err as { _tag?: string; message?: string; field?: string; lines?: { line: number; message: string }[] };
    if (err instanceof AdminError || e._tag) {
      const lines = err instanceof AdminError ? err.failure.lines : e.lines;
      process.stderr.write(`runwatch: ${e.message}\n${(lines ?? []).map((l) => `  line ${l.line}: ${l.message}\n`).join("")}`);
      await exitFlushed(1);
    }
    process.stderr.write(`runwatch: ${(err as Error)?.stack ?? String(err)}\n`);
    await exitFlushed(1);
  }
}
