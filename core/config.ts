/**
 * All configuration comes from the environment, read here and nowhere else.
 * Scale mode is chosen per port: each of KAFKA_BROKERS, CLICKHOUSE_URL, DATABASE_URL, REDIS_URL
 * switches its own port from the embedded adapter to the server adapter.
 */
import os from "node:os";
import path from "node:path";
import { envNumber } from "./env-number.js";
import type { LaneSettings } from "./log/lane-router.js";
import { parseTrustedProxies, type TrustedProxies } from "./network/client-address.js";
import { parseOperatorJudgeKey, type OperatorJudgeKey } from "./agents/operator-judge-key.js";

export interface Config {
  readonly env: "development" | "production" | "test";
  readonly dataDir: string;
  readonly webPort: number;
  readonly gatewayPort: number;
  /**
   * The gateway's WebSocket engine (RUNWATCH_GATEWAY_ENGINE): "auto" (default) uWebSockets.js where its native build
   * loads for this Node.js, else the `ws` library; "uws" or "ws" forces one (docs/REALTIME.md).
   */
  readonly gatewayEngine: "auto" | "uws" | "ws";
  readonly agentsPort: number;
  readonly host: string;
  /** Public base URLs, used in links and by the dashboard to reach the gateway. */
  readonly publicWebUrl: string;
  /** Whether RUNWATCH_PUBLIC_URL names publicWebUrl (else it is a guess from the port). */
  readonly publicWebUrlSet: boolean;
  readonly publicGatewayUrl: string;
  readonly agentsUrl: string;
  readonly kafkaBrokers: readonly string[] | undefined;
  readonly kafkaTopic: string;
  /**
   * When a tenant's appends go to the event log's bulk lane (core/log/lanes.ts): more than RUNWATCH_BULK_LANE_BYTES
   * (default 1 MiB; 0 = never) within RUNWATCH_BULK_LANE_WINDOW_SEC (10), for RUNWATCH_BULK_LANE_HOLD_SEC (30).
   */
  readonly bulkLane: LaneSettings;
  readonly clickhouseUrl: string | undefined;
  readonly clickhouseDatabase: string;
  readonly databaseUrl: string | undefined;
  readonly redisUrl: string | undefined;
  /**
   * What this deployment's Redis keys and pub/sub channels begin with (REDIS_PREFIX, default `runwatch`). Deployments
   * sharing one Redis need different prefixes: their user and project ids overlap, and pub/sub channels are not
   * separated by Redis's database numbers.
   */
  readonly redisPrefix: string;
  /** Secret for signing session cookies and gateway tokens. Generated per data dir when absent (embedded). */
  readonly sessionSecret: string | undefined;
  readonly agentSecret: string | undefined;
  /**
   * The reverse proxies whose X-Forwarded-For is believed (RUNWATCH_TRUSTED_PROXIES: a hop count, or addresses and
   * CIDRs); none by default, when the socket's peer is the client (core/network/client-address.ts).
   */
  readonly trustedProxies: TrustedProxies;
  readonly rateLimitPerMinute: number;
  /** Ingest requests per minute per user, over all of the user's keys (a user cannot multiply the budget with keys). */
  readonly userRateLimitPerMinute: number;
  /** Events and OTLP spans per user per minute, over all keys and receivers (RUNWATCH_EVENT_QUOTA_PER_MINUTE; 0 = none). */
  readonly eventQuotaPerMinute: number;
  /** The most bytes of records one tenant's pending dead letters keep (RUNWATCH_DEAD_LETTER_MAX_BYTES; stores/dead-letters.ts). */
  readonly deadLetterMaxBytes: number;
  /** `closed`: /register refuses new accounts (the CLI still creates them). */
  /** open: anyone registers; invite: only with an invitation's link, for its address; closed: only the CLI makes accounts. */
  readonly registration: "open" | "closed" | "invite";
  /** RUNWATCH_ADMIN_EMAILS: the instance admins; when empty, the first registered user is (docs/TEAMS.md). */
  readonly adminEmails: readonly string[];
  /**
   * Which projects' judges may use agents-service's own provider keys when they have none of their own
   * (RUNWATCH_OPERATOR_JUDGE_KEY: admins — the default —, all, off, or project slugs; core/agents/operator-judge-key.ts).
   */
  readonly operatorJudgeKey: OperatorJudgeKey;
  /**
   * Every project's judge caps by default, and their ceiling (stores/evaluation/spend.ts): USD a day
   * (RUNWATCH_EVALUATION_DAILY_BUDGET_USD, 10; 0 = no judge spending) and judge calls a minute
   * (RUNWATCH_EVALUATION_CALLS_PER_MINUTE, 600, at most 100,000).
   */
  readonly evaluationCaps: { readonly daily_budget_usd: number; readonly calls_per_minute: number };
  /** OpenID Connect sign-in (docs/TEAMS.md, Single sign-on); undefined when RUNWATCH_OIDC_ISSUER is unset. */
  readonly oidc?: OidcConfig;
  /** RUNWATCH_PASSWORD_LOGIN=off: only single sign-on logs in (registration with a password is off too). */
  readonly passwordLogin: boolean;
  /** Test notifications ("Send test" on /alerts) per user per hour. */
  readonly testSendsPerHour: number;
  /** /improve requests per user per hour, and the operator's daily LLM spend cap for /improve in USD (0 = none). */
  readonly improvePerHour: number;
  readonly improveDailyBudgetUsd: number;
  readonly maxBodyBytes: number;
  readonly maxBatchEvents: number;
  /** OTLP/HTTP and gRPC: the most bytes of one export, as received and once decompressed (RUNWATCH_OTLP_MAX_BODY_BYTES). */
  readonly otlpMaxBodyBytes: number;
  /** OTLP: the most spans of one export (RUNWATCH_OTLP_MAX_SPANS): a bigger one is refused (413 / RESOURCE_EXHAUSTED). */
  readonly otlpMaxSpans: number;
  /** OTLP/gRPC port (RUNWATCH_OTLP_GRPC_PORT, default 4317); null when set to "off". */
  readonly otlpGrpcPort: number | null;
  /** OTLP/gRPC: concurrent calls per connection (RUNWATCH_OTLP_GRPC_MAX_STREAMS, 32) and the idle time after which a connection without calls is closed (RUNWATCH_OTLP_GRPC_IDLE_MS, 20 s). */
  readonly otlpGrpcLimits: { readonly maxStreams: number; readonly idleMs: number };
  /** Where an OTLP export is mapped into events (RUNWATCH_OTLP_MAPPING, docs/OTEL.md): pipeline or receiver. */
  readonly otlpMapping: OtlpMapping;
  readonly previewMaxChars: number;
  /** Extra pipeline plugins: comma-separated module paths, appended to the built-in chain. */
  readonly extraPlugins: readonly string[];
  /** Extra alert triggers: comma-separated module paths (RUNWATCH_ALERT_TRIGGERS), after the built-ins. */
  readonly alertTriggers: readonly string[];
  /**
   * Where `runwatch start` runs the pipeline: "auto" (default) on a worker thread of its own when the same
   * process also serves web (ingest), on the main thread otherwise; "thread" or "main" to force either.
   */
  readonly pipelineThread: "auto" | "thread" | "main";
  /**
   * CPU priority (a Unix nice value, 0-19) of background work beside ingest: the pipeline thread and chDB's query
   * threads. Higher yields more readily to the threads that answer ingest requests. 0 turns it off.
   */
  readonly backgroundNice: number;
  /** How often the pipeline role applies users' data retention (RUNWATCH_RETENTION_SWEEP_MS; default 1 h; 0 = never). */
  readonly retentionSweepMs: number;
  /** Threads that decode ingest batch bodies off the request thread (RUNWATCH_INGEST_THREADS; default 2, or 1 on one core; 0 = none). */
  readonly ingestThreads: number;
  /**
   * Batch and OTLP bodies up to this many bytes decode on the request's thread while it has decoding time to spare
   * (RUNWATCH_INGEST_INLINE_BYTES; default 64 KiB; 0 = every body on the decode threads). web/ingest/small-bodies-inline.ts.
   */
  readonly ingestInlineBytes: number;
  readonly logLevel: "debug" | "info" | "warn" | "error";
}

/** REDIS_PREFIX: letters, digits and `_.:-`, at most 64. */
function redisPrefix(v: string | undefined): string {
  if (v === undefined || v === "") return "runwatch";
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(v)) throw new Error(`REDIS_PREFIX must be 1-64 letters, digits or _.:- characters, got ${JSON.stringify(v)}`);
  return v;
}

/**
 * Where OTLP exports are mapped into events (docs/OTEL.md): `pipeline` (the default) logs an export whole and the
 * pipeline maps it, which acknowledges 3.5 times as many spans a second; `receiver` maps it on the ingest decode
 * threads, off the pipeline's single thread, which shows spans about a second sooner at a steady load below what the
 * pipeline keeps up with.
 */
export type OtlpMapping = "receiver" | "pipeline";

export interface OidcConfig {
  readonly issuer: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The e-mail domains whose users may sign in (lower case); empty: any. */
  readonly allowedDomains: readonly string[];
  /** A project (slug) new users join, with `defaultRole`. */
  readonly defaultProject?: string;
  readonly defaultRole: "viewer" | "member" | "admin";
  /** The sign-in button's words. */
  readonly label: string;
}

function oidcConfig(env: NodeJS.ProcessEnv): OidcConfig | undefined {
  const issuer = env.RUNWATCH_OIDC_ISSUER?.trim();
  if (!issuer) return undefined;
  const clientId = env.RUNWATCH_OIDC_CLIENT_ID?.trim();
  if (!clientId) throw new Error("RUNWATCH_OIDC_ISSUER is set: set RUNWATCH_OIDC_CLIENT_ID (and RUNWATCH_OIDC_CLIENT_SECRET) too");
  return {
    issuer,
    clientId,
    clientSecret: env.RUNWATCH_OIDC_CLIENT_SECRET ?? "",
    allowedDomains: (env.RUNWATCH_OIDC_ALLOWED_DOMAINS ?? "").split(",").map((d) => d.trim().toLowerCase().replace(/^@/, "")).filter(Boolean),
    defaultProject: env.RUNWATCH_OIDC_DEFAULT_PROJECT?.trim() || undefined,
    defaultRole: oneOf(env.RUNWATCH_OIDC_DEFAULT_ROLE, ["viewer", "member", "admin"], "viewer", "RUNWATCH_OIDC_DEFAULT_ROLE"),
    label: env.RUNWATCH_OIDC_LABEL?.trim() || "Single sign-on",
  };
}

const oneOf = <T extends string>(v: string | undefined, allowed: readonly T[], dflt: T, name: string): T => {
  if (v === undefined || v === "") return dflt;
  if (!allowed.includes(v as T)) throw new Error(`${name} must be one of ${allowed.join(", ")}, got ${JSON.stringify(v)}`);
  return v as T;
};

function evaluationCaps(env: NodeJS.ProcessEnv): Config["evaluationCaps"] {
  return {
    daily_budget_usd: envNumber(env, "RUNWATCH_EVALUATION_DAILY_BUDGET_USD", 10, { min: 0 }),
    calls_per_minute: envNumber(env, "RUNWATCH_EVALUATION_CALLS_PER_MINUTE", 600, { min: 1, max: 100_000, whole: true }),
  };
}

const list = (v: string | undefined): string[] =>
  (v ?? "").split(",").map((s) => s.trim()).filter(Boolean);

export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const mode = env.NODE_ENV === "production" ? "production" : env.NODE_ENV === "test" ? "test" : "development";
  const host = env.RUNWATCH_HOST ?? "127.0.0.1";
  const webPort = envNumber(env, env.RUNWATCH_WEB_PORT === undefined ? "PORT" : "RUNWATCH_WEB_PORT", 8080);
  const gatewayPort = envNumber(env, "RUNWATCH_GATEWAY_PORT", 8082);
  const agentsPort = envNumber(env, "RUNWATCH_AGENTS_PORT", 8081);
  const brokers = list(env.KAFKA_BROKERS);
  return {
    env: mode,
    dataDir: path.resolve(env.RUNWATCH_DATA_DIR ?? ".data"),
    webPort,
    gatewayPort,
    gatewayEngine: oneOf(env.RUNWATCH_GATEWAY_ENGINE, ["auto", "uws", "ws"], "auto", "RUNWATCH_GATEWAY_ENGINE"),
    agentsPort,
    host,
    publicWebUrl: env.RUNWATCH_PUBLIC_URL || `http://localhost:${webPort}`,
    publicWebUrlSet: Boolean(env.RUNWATCH_PUBLIC_URL),
    publicGatewayUrl: env.RUNWATCH_PUBLIC_GATEWAY_URL ?? `ws://localhost:${gatewayPort}`,
    agentsUrl: env.RUNWATCH_AGENTS_URL ?? `http://127.0.0.1:${agentsPort}`,
    kafkaBrokers: brokers.length ? brokers : undefined,
    kafkaTopic: env.KAFKA_TOPIC ?? "runwatch.events",
    bulkLane: {
      bulkAfterBytes: Math.max(0, envNumber(env, "RUNWATCH_BULK_LANE_BYTES", 1024 * 1024)),
      windowSec: Math.max(1, envNumber(env, "RUNWATCH_BULK_LANE_WINDOW_SEC", 10)),
      holdSec: Math.max(0, envNumber(env, "RUNWATCH_BULK_LANE_HOLD_SEC", 30)),
    },
    clickhouseUrl: env.CLICKHOUSE_URL || undefined,
    clickhouseDatabase: env.CLICKHOUSE_DATABASE ?? "runwatch",
    databaseUrl: env.DATABASE_URL || undefined,
    redisUrl: env.REDIS_URL || undefined,
    redisPrefix: redisPrefix(env.REDIS_PREFIX),
    sessionSecret: env.SESSION_SECRET || undefined,
    agentSecret: env.AGENT_SECRET || undefined,
    trustedProxies: parseTrustedProxies(env.RUNWATCH_TRUSTED_PROXIES),
    rateLimitPerMinute: envNumber(env, "RUNWATCH_RATE_LIMIT_PER_MINUTE", 200),
    userRateLimitPerMinute: envNumber(env, "RUNWATCH_USER_RATE_LIMIT_PER_MINUTE", 5 * envNumber(env, "RUNWATCH_RATE_LIMIT_PER_MINUTE", 200)),
    registration: oneOf(env.RUNWATCH_REGISTRATION, ["open", "closed", "invite"], "open", "RUNWATCH_REGISTRATION"),
    oidc: oidcConfig(env),
    passwordLogin: oneOf(env.RUNWATCH_PASSWORD_LOGIN, ["on", "off"], "on", "RUNWATCH_PASSWORD_LOGIN") === "on",
    adminEmails: (env.RUNWATCH_ADMIN_EMAILS ?? "").split(",").map((e) => e.trim().toLowerCase()).filter(Boolean),
    operatorJudgeKey: parseOperatorJudgeKey(env.RUNWATCH_OPERATOR_JUDGE_KEY),
    evaluationCaps: evaluationCaps(env),
    eventQuotaPerMinute: Math.max(0, Math.floor(envNumber(env, "RUNWATCH_EVENT_QUOTA_PER_MINUTE", 300_000))),
    deadLetterMaxBytes: Math.max(0, Math.floor(envNumber(env, "RUNWATCH_DEAD_LETTER_MAX_BYTES", 64 * 1024 * 1024))),
    testSendsPerHour: envNumber(env, "RUNWATCH_TEST_SENDS_PER_HOUR", 10),
    improvePerHour: envNumber(env, "RUNWATCH_IMPROVE_PER_HOUR", 20),
    improveDailyBudgetUsd: envNumber(env, "RUNWATCH_IMPROVE_DAILY_BUDGET_USD", 5, { min: 0 }),
    maxBodyBytes: envNumber(env, "RUNWATCH_MAX_BODY_BYTES", 1024 * 1024),
    maxBatchEvents: envNumber(env, "RUNWATCH_MAX_BATCH_EVENTS", 1000),
    otlpMaxBodyBytes: envNumber(env, "RUNWATCH_OTLP_MAX_BODY_BYTES", 16 * 1024 * 1024),
    otlpMaxSpans: envNumber(env, "RUNWATCH_OTLP_MAX_SPANS", 20_000),
    otlpGrpcPort: env.RUNWATCH_OTLP_GRPC_PORT === "off" ? null : envNumber(env, "RUNWATCH_OTLP_GRPC_PORT", 4317),
    otlpGrpcLimits: {
      maxStreams: Math.max(1, Math.floor(envNumber(env, "RUNWATCH_OTLP_GRPC_MAX_STREAMS", 32))),
      idleMs: Math.max(1_000, envNumber(env, "RUNWATCH_OTLP_GRPC_IDLE_MS", 20_000)),
    },
    otlpMapping: oneOf(env.RUNWATCH_OTLP_MAPPING, ["pipeline", "receiver"], "pipeline", "RUNWATCH_OTLP_MAPPING"),
    previewMaxChars: envNumber(env, "RUNWATCH_PREVIEW_MAX_CHARS", 500),
    extraPlugins: list(env.RUNWATCH_PLUGINS),
    alertTriggers: list(env.RUNWATCH_ALERT_TRIGGERS),
    backgroundNice: Math.min(19, Math.max(0, Math.floor(envNumber(env, "RUNWATCH_BACKGROUND_NICE", 10)))),
    ingestThreads: Math.max(0, Math.floor(envNumber(env, "RUNWATCH_INGEST_THREADS", Math.min(2, os.availableParallelism())))),
    ingestInlineBytes: Math.max(0, Math.floor(envNumber(env, "RUNWATCH_INGEST_INLINE_BYTES", 64 * 1024))),
    retentionSweepMs: Math.max(0, envNumber(env, "RUNWATCH_RETENTION_SWEEP_MS", 3_600_000)),
    pipelineThread: oneOf(env.RUNWATCH_PIPELINE_THREAD, ["auto", "thread", "main"], "auto", "RUNWATCH_PIPELINE_THREAD"),
    logLevel: (env.LOG_LEVEL as Config["logLevel"]) ?? "info",
  };
}
