/**
 * Account administration shared by the CLI and a running server.
 *
 * PGlite is single-process, so while `runwatch start` owns a data dir, `runwatch user create` must not open it
 * too. The server therefore listens on a Unix socket in the data dir (mode 0600: only its owner may talk to it)
 * and the CLI sends its command there; when no server runs, the CLI opens the database itself.
 * Protocol: one JSON request line, one JSON response line.
 */
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import type { EventLog } from "../core/ports/event-log.js";
import type { ClickHouse } from "../core/ports/clickhouse.js";
import type { PubSub } from "../core/ports/pubsub.js";
import type { Sql } from "../core/ports/sql.js";
import { applyRetention, type RetentionOutcome } from "../stores/retention.js";
import { replayDeadLetters, type ReplayResult } from "../dead-letters/index.js";
import { listDeadLetters, purgeDeadLetters, type DeadLetter, type DeadLetterFilter } from "../stores/dead-letters.js";
import type { SessionUser } from "../web/deps.js";
import { createUser, findUserByEmail } from "../stores/accounts/users.js";
import { createApiKey, type ApiKeyInfo } from "../stores/accounts/api-keys.js";
import { markDemoAccount } from "../stores/accounts/instance-admin.js";
import { runProjectAdmin, type ProjectAdminRequest, type ProjectAdminResult } from "./admin-projects.js";
import { runDatasetAdmin, type DatasetAdminRequest, type DatasetAdminResult } from "./admin-datasets.js";
import { runPromptAdmin, type PromptAdminRequest, type PromptAdminResult } from "./admin-prompts.js";
import { AdminError, type AdminFailure } from "./admin-error.js";
import { selectedProject, type ProjectSelection } from "./project-selection.js";

export { AdminError, type AdminFailure, type ProjectSelection };

export type AdminRequest =
  | { cmd: "user.create"; email: string; name: string; password: string }
  | ProjectAdminRequest
  | DatasetAdminRequest
  | PromptAdminRequest
  | { cmd: "demo.account"; email: string; name: string; password: string }
  | { cmd: "info" }
  | ({ cmd: "dead-letters.list"; limit?: number } & DeadLetterSelection)
  | ({ cmd: "dead-letters.replay" } & DeadLetterSelection)
  | ({ cmd: "dead-letters.purge" } & DeadLetterSelection)
  | ({ cmd: "retention.apply" } & ProjectSelection);

/** Which dead letters a command acts on: some ids, one project's, or (`all`) every pending one. */
export interface DeadLetterSelection extends ProjectSelection {
  ids?: number[];
  all?: boolean;
}

export type AdminResult =
  | ProjectAdminResult
  | DatasetAdminResult
  | PromptAdminResult
  | { user: SessionUser }
  | { user: SessionUser; key: string; info: ApiKeyInfo; created_user?: boolean }
  | { web_url: string | null }
  | { dead_letters: DeadLetter[] }
  | ReplayResult
  | { purged: number }
  | { retention: RetentionOutcome[] };

/**
 * What admin commands use: the metadata store always, the event log for replays, ClickHouse for retention,
 * pub/sub to tell gateways of a removed member.
 */
export interface AdminPorts {
  readonly sql: Sql;
  readonly log?: Pick<EventLog, "append">;
  readonly ch?: ClickHouse;
  readonly pubsub?: Pick<PubSub, "publish">;
}


async function deadLetterFilter(sql: Sql, sel: DeadLetterSelection, verb: string): Promise<DeadLetterFilter> {
  const ids = sel.ids?.filter((n) => Number.isSafeInteger(n) && n > 0);
  const projectId = await selectedProject(sql, sel);
  if (verb !== "list" && !ids?.length && projectId === undefined && !sel.all) {
    throw new AdminError({ tag: "ValidationError", message: `say which dead letters to ${verb}: --id N[,N…], --project P, --email E, or --all`, field: "id" });
  }
  return { ids: ids?.length ? ids : undefined, projectId };
}

/** Executes one command against the metadata store (and, for replays, the event log). */
export async function runAdmin(ports: AdminPorts, req: AdminRequest, webUrl: string | null = null): Promise<AdminResult> {
  const { sql } = ports;
  switch (req.cmd) {
    case "dead-letters.list":
      return { dead_letters: await listDeadLetters(sql, { ...(await deadLetterFilter(sql, req, "list")), limit: req.limit ?? 100 }) };
    case "dead-letters.replay": {
      if (!ports.log) throw new AdminError({ tag: "Unavailable", message: "replaying needs the event log, which this process has not opened" });
      return replayDeadLetters(sql, ports.log, await deadLetterFilter(sql, req, "replay"));
    }
    case "dead-letters.purge":
      return { purged: await purgeDeadLetters(sql, await deadLetterFilter(sql, req, "purge")) };
    case "user.create":
      return { user: await createUser(sql, req) };
    case "key.create":
    case "project.create":
    case "project.list":
    case "project.add-member":
    case "project.remove-member":
      return runProjectAdmin(sql, ports.pubsub, req);
    case "demo.account": {
      let user = await findUserByEmail(sql, req.email);
      const created = !user;
      user ??= await createUser(sql, req);
      if (created) await markDemoAccount(sql, user.id);
      const { key, info } = await createApiKey(sql, user.id, `demo ${new Date().toISOString().slice(0, 16)}`, null);
      return { user, key, info, created_user: created };
    }
    case "retention.apply": {
      if (!ports.ch) throw new AdminError({ tag: "Unavailable", message: "applying retention needs ClickHouse, which this process has not opened" });
      return { retention: await applyRetention({ sql, ch: ports.ch }, { projectId: await selectedProject(sql, req) }) };
    }
    case "datasets.export":
    case "datasets.import":
      return runDatasetAdmin(sql, req);
    case "prompt.push":
    case "prompt.get":
    case "prompt.label":
      return runPromptAdmin(sql, ports.ch, req);
    case "info":
      return { web_url: webUrl };
  }
}

const toFailure = (err: unknown): AdminFailure => {
  if (err instanceof AdminError) return err.failure;
  const e = err as { _tag?: string; message?: string; field?: string; lines?: AdminFailure["lines"] };
  if (e._tag) return { tag: e._tag, message: e.message ?? e._tag, field: e.field, ...(e.lines ? { lines: e.lines } : {}) };
  return { tag: "Internal", message: (err as Error)?.message ?? String(err) };
};

/** The longest request line a running server reads on its admin socket (a dataset import carries its file). */
const MAX_REQUEST_CHARS = 64 * 1024 * 1024;

/** Where the admin socket of a data dir lives (Unix socket paths are limited to ~107 bytes). */
export function adminSocketPath(dataDir: string): string {
  const p = path.join(dataDir, "runwatch.sock");
  if (Buffer.byteLength(p) < 100) return p;
  return path.join(os.tmpdir(), `runwatch-${createHash("sha256").update(dataDir).digest("hex").slice(0, 16)}.sock`);
}

/** Sends one request to a running server; undefined when no server listens on the socket. */
export function callAdmin(socketPath: string, req: AdminRequest, timeoutMs = 30_000): Promise<AdminResult | undefined> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(socketPath);
    let buf = "";
    const timer = setTimeout(() => { sock.destroy(); reject(new Error("the running server did not answer on its admin socket")); }, timeoutMs);
    sock.setEncoding("utf8");
    sock.on("connect", () => sock.write(JSON.stringify(req) + "\n"));
    sock.on("data", (d) => {
      buf += d;
      const nl = buf.indexOf("\n");
      if (nl === -1) return;
      clearTimeout(timer);
      sock.end();
      const res = JSON.parse(buf.slice(0, nl)) as { ok: true; result: AdminResult } | { ok: false; error: AdminFailure };
      if (res.ok) resolve(res.result);
      else reject(new AdminError(res.error));
    });
    sock.on("error", (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      if (err.code === "ENOENT" || err.code === "ECONNREFUSED") resolve(undefined);
      else reject(err);
    });
  });
}

/**
 * Serves admin commands for a running server. Refuses to start when another live server already owns the
 * socket; a socket file left by a killed server is removed. It listens as soon as the stores are open, before the
 * server accepts HTTP, so a CLI command never finds the server up but unreachable; commands wait for `ready` (every
 * role started) and `webUrl` is read then.
 */
export async function serveAdmin(
  socketPath: string, ports: AdminPorts, webUrl: () => string | null, ready: Promise<unknown> = Promise.resolve(),
): Promise<{ close(): Promise<void> }> {
  if (await callAdmin(socketPath, { cmd: "info" }, 2_000).catch(() => undefined)) {
    throw new Error(`another Runwatch server is already running on this data dir (admin socket ${socketPath})`);
  }
  await fs.rm(socketPath, { force: true });
  const server = net.createServer((sock) => {
    const chunks: string[] = [];
    let length = 0;
    let handled = false;
    sock.setEncoding("utf8");
    sock.on("error", () => sock.destroy());
    sock.on("data", (d: string) => {
      if (handled) return;
      // The socket is its owner's alone (0600); a dataset import carries the file, so only the new chunk is searched.
      length += d.length;
      if (length > MAX_REQUEST_CHARS) return sock.destroy();
      const nl = d.indexOf("\n");
      if (nl === -1) {
        chunks.push(d);
        return;
      }
      handled = true;
      chunks.push(d.slice(0, nl));
      let req: AdminRequest;
      try {
        req = JSON.parse(chunks.join("")) as AdminRequest;
      } catch {
        return sock.end(JSON.stringify({ ok: false, error: { tag: "BadRequest", message: "invalid JSON" } }) + "\n");
      }
      ready.then(() => runAdmin(ports, req, webUrl())).then(
        (result) => sock.end(JSON.stringify({ ok: true, result }) + "\n"),
        (err) => sock.end(JSON.stringify({ ok: false, error: toFailure(err) }) + "\n"),
      );
    });
  });
  const oldUmask = process.umask(0o177);
  try {
    await new Promise<void>((resolve, reject) => server.once("error", reject).listen(socketPath, () => resolve()));
  } finally {
    process.umask(oldUmask);
  }
  await fs.chmod(socketPath, 0o600);
  return {
    close: () => new Promise<void>((resolve) => server.close(() => { fs.rm(socketPath, { force: true }).finally(resolve); })),
  };
}

export { toFailure as adminFailureOf };
