/**
 * Kafka and Redis instances of a test's own (deploy/kafka.sh, deploy/redis.sh on free ports and temp dirs),
 * so fault tests can stop and restart them without disturbing other suites using the shared servers.
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { ROOT, freePort } from "./cluster.js";

export interface PrivateServer {
  readonly url: string;
  stop(): void;
  start(): void;
  destroy(): void;
}

function script(name: string, cmd: string, env: NodeJS.ProcessEnv): void {
  const r = spawnSync("bash", [path.join(ROOT, "deploy", `${name}.sh`), cmd], { env: { ...process.env, ...env }, encoding: "utf8", timeout: 120_000 });
  if (r.status !== 0) throw new Error(`deploy/${name}.sh ${cmd} failed (${r.status}):\n${r.stderr}\n${r.stdout}`);
}

export async function privateKafka(): Promise<PrivateServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rw-kafka-"));
  const env = { KAFKA_PORT: String(await freePort()), KAFKA_CONTROLLER_PORT: String(await freePort()), KAFKA_DIR: dir, KAFKA_HEAP_OPTS: "-Xms128m -Xmx512m" };
  script("kafka", "start", env);
  return {
    url: `127.0.0.1:${env.KAFKA_PORT}`,
    stop: () => script("kafka", "stop", env),
    start: () => script("kafka", "start", env),
    destroy: () => { try { script("kafka", "stop", env); } finally { rmSync(dir, { recursive: true, force: true }); } },
  };
}

export async function privateRedis(): Promise<PrivateServer> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "rw-redis-"));
  const env = { REDIS_PORT: String(await freePort()), REDIS_DIR: dir };
  script("redis", "start", env);
  return {
    url: `redis://127.0.0.1:${env.REDIS_PORT}`,
    stop: () => script("redis", "stop", env),
    start: () => script("redis", "start", env),
    destroy: () => { try { script("redis", "stop", env); } finally { rmSync(dir, { recursive: true, force: true }); } },
  };
}
