/**
 * agents-service (docs/AGENTS-SERVICE.md): plain node:http, five routes.
 *   GET  /health     status, version, uptime, which providers are configured, detector state
 *   GET  /providers  the three providers, their models (with prices) and whether each is configured
 *   POST /improve    X-Agent-Secret required; detect language, ask the LLM, return suggestions + diff + usage
 *   POST /judge      X-Agent-Secret required; one structured completion for an LLM-as-judge evaluator (judge.ts)
 *   POST /complete   X-Agent-Secret required; a plain chat completion, the prompts playground's run (complete.ts)
 * Errors are always `{error:{code,message,field?}}`; nothing a client sends can produce a 500.
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { createRequire } from "node:module";
import { randomUUID } from "node:crypto";
import { Either } from "effect";
import getRawBody from "raw-body";
import type { Config } from "../core/config.js";
import { createLogger, type Logger } from "../core/logger.js";
import { ServiceError, errorBody } from "./errors.js";
import { improve } from "./improve.js";
import { complete, MAX_COMPLETE_CHARS, parseCompleteRequest } from "./complete.js";
import { judge, MAX_JUDGE_PROMPT_CHARS, parseJudgeRequest } from "./judge.js";
import { detectorState } from "./language/detect.js";
import { modelPrice } from "./pricing.js";
import { PROVIDERS } from "./providers/index.js";
import { makeRequestParser } from "./request.js";
import { noopTracer, type RunTracer } from "./report.js";
import { resolveAgentSecret, secretMatches } from "../core/agents/secret.js";
import { answerClientError } from "../core/network/client-error.js";
import { isConfigured, loadAgentsSettings, PROVIDER_IDS, resolveDefaultProvider, type AgentsSettings } from "./settings.js";

const VERSION: string = createRequire(import.meta.url)("../package.json").version;

export interface AgentsServiceOptions {
  readonly port?: number;
  readonly host?: string;
  /** fetch used for provider calls (tests point it at loopback fakes; default: global fetch). */
  readonly fetch?: typeof fetch;
  /** Provider keys, limits, self-reporting; default: loadAgentsSettings(process.env). */
  readonly settings?: AgentsSettings;
  /** Self-reporting; default: a Runwatch client when settings.runwatch is set, else none. */
  readonly tracer?: RunTracer;
  readonly logger?: Logger;
}

export interface AgentsService {
  readonly url: string;
  close(): Promise<void>;
}

const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
    "cache-control": "no-store",
    ...headers,
  });
  res.end(text);
};

const sendError = (res: http.ServerResponse, e: ServiceError) => {
  const headers: Record<string, string> = {};
  if (e.retryAfterSec !== undefined) headers["retry-after"] = String(e.retryAfterSec);
  if (e.status === 401) headers["www-authenticate"] = 'X-Agent-Secret realm="runwatch-agents"';
  if (e.status === 413) headers.connection = "close";
  send(res, e.status, errorBody(e), headers);
};

const isJson = (ct: string | undefined) => {
  const type = (ct ?? "").split(";")[0].trim().toLowerCase();
  return type === "application/json" || (type.startsWith("application/") && type.endsWith("+json"));
};

async function readJson(req: http.IncomingMessage, limit: number): Promise<unknown> {
  if (!isJson(req.headers["content-type"])) {
    throw new ServiceError({ status: 415, code: "unsupported_media_type", message: "the body must be JSON (Content-Type: application/json)" });
  }
  const tooLarge = new ServiceError({ status: 413, code: "payload_too_large", message: `the request body exceeds ${limit} bytes` });
  const declared = req.headers["content-length"];
  if (declared !== undefined && Number(declared) > limit) throw tooLarge;
  let text: string;
  try {
    text = await getRawBody(req, { length: declared, limit, encoding: "utf-8" });
  } catch (err) {
    const type = (err as { type?: string }).type;
    if (type === "entity.too.large") throw tooLarge;
    throw new ServiceError({ status: 400, code: "malformed_body", message: `the request body could not be read (${type ?? (err as Error).message})` });
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new ServiceError({ status: 400, code: "malformed_json", message: `the request body is not valid JSON: ${(err as Error).message}` });
  }
}

export function providersBody(settings: AgentsSettings) {
  const dflt = resolveDefaultProvider(settings);
  return {
    default_provider: dflt ?? null,
    providers: PROVIDER_IDS.map((id) => {
      const p = PROVIDERS[id];
      const s = settings.providers[id];
      // A custom OpenAI-compatible server (Ollama, vLLM) serves its own models: offer the configured one first.
      const models = [...new Set([s.defaultModel, ...p.models])];
      return {
        id,
        name: p.name,
        configured: isConfigured(id, s),
        default_model: s.defaultModel,
        max_temperature: p.maxTemperature,
        ...(id === "openai" ? { openai_compatible_server: s.customBaseUrl } : {}),
        models: models.map((m) => ({ id: m, price_usd: modelPrice(p.priceProvider, m) })),
      };
    }),
  };
}

export async function startAgentsService(config: Config, opts: AgentsServiceOptions = {}): Promise<AgentsService> {
  const logger = (opts.logger ?? createLogger(config.logLevel)).child({ service: "agents" });
  const secret = await resolveAgentSecret(config);
  const settings = opts.settings ?? loadAgentsSettings();
  const fetchImpl = opts.fetch ?? globalThis.fetch;
  const tracer = opts.tracer ?? (settings.runwatch ? await (await import("./runwatch-tracer.js")).runwatchTracer(settings.runwatch, logger) : noopTracer);
  const parseRequest = makeRequestParser(settings);
  // Code is counted in characters; a UTF-8 character is at most 4 bytes, plus room for the other fields.
  const bodyLimit = settings.maxCodeChars * 4 + settings.maxInstructionsChars * 4 + 16 * 1024;
  const startedAt = Date.now();
  let inFlight = 0;
  let judging = 0;

  const requireSecret = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const given = req.headers["x-agent-secret"];
    if (!secretMatches(Array.isArray(given) ? given[0] : given, secret)) {
      // Drain nothing: close the connection so an unread body cannot confuse keep-alive.
      res.setHeader("connection", "close");
      throw new ServiceError({
        status: 401,
        code: given ? "invalid_agent_secret" : "missing_agent_secret",
        message: given ? "the X-Agent-Secret header is wrong" : "the X-Agent-Secret header is required",
      });
    }
  };

  const abortOnClose = (res: http.ServerResponse) => {
    const aborted = new AbortController();
    res.on("close", () => {
      if (!res.writableFinished) aborted.abort(new Error("client disconnected"));
    });
    return aborted.signal;
  };

  const handleJudge = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    requireSecret(req, res);
    if (judging >= settings.maxConcurrent) {
      throw new ServiceError({ status: 503, code: "busy", message: `too many judge calls in progress (${settings.maxConcurrent}); retry shortly`, retryAfterSec: 2 });
    }
    judging++;
    try {
      const body = parseJudgeRequest(await readJson(req, MAX_JUDGE_PROMPT_CHARS * 4 + 64 * 1024));
      const result = await judge({ settings, fetch: fetchImpl, signal: abortOnClose(res) }, body);
      logger.info("judge", { provider: result.provider, model: result.model, ms: result.duration_ms, attempts: result.attempts, ...result.usage });
      send(res, 200, result);
    } finally {
      judging--;
    }
  };

  // The playground's completions share the judges' slots: both are one provider call made for the dashboard.
  const handleComplete = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    requireSecret(req, res);
    if (judging >= settings.maxConcurrent) {
      throw new ServiceError({ status: 503, code: "busy", message: `too many completions in progress (${settings.maxConcurrent}); retry shortly`, retryAfterSec: 2 });
    }
    judging++;
    try {
      const body = parseCompleteRequest(await readJson(req, MAX_COMPLETE_CHARS * 4 + 64 * 1024));
      const result = await complete({ settings, fetch: fetchImpl, signal: abortOnClose(res) }, body);
      logger.info("complete", { provider: result.provider, model: result.model, ms: result.duration_ms, attempts: result.attempts, ...result.usage });
      send(res, 200, result);
    } finally {
      judging--;
    }
  };

  const handleImprove = async (req: http.IncomingMessage, res: http.ServerResponse) => {
    // One id per request: logged, returned as X-Request-Id, and the sdk_run_id of the self-reported run.
    const incoming = req.headers["x-request-id"];
    const requestId = typeof incoming === "string" && /^[\w.:-]{1,128}$/.test(incoming) ? incoming : randomUUID();
    res.setHeader("x-request-id", requestId);
    requireSecret(req, res);
    if (inFlight >= settings.maxConcurrent) {
      throw new ServiceError({ status: 503, code: "busy", message: `too many improvements in progress (${settings.maxConcurrent}); retry shortly`, retryAfterSec: 5 });
    }
    inFlight++;
    const signal = abortOnClose(res);
    try {
      const parsed = parseRequest(await readJson(req, bodyLimit));
      if (Either.isLeft(parsed)) throw parsed.left;
      const body = parsed.right;
      const run = tracer.begin({
        language: body.language ?? null,
        provider: body.provider ?? null,
        model: body.model ?? null,
        code_chars: body.code.length,
        has_instructions: Boolean(body.instructions),
      }, requestId);
      try {
        const result = await improve({ settings, fetch: fetchImpl, trace: run, signal }, body);
        await run.end(
          { language: result.language, provider: result.provider, suggestions: result.suggestions.length, diff_lines: result.diff ? result.diff.split("\n").length : 0 },
          { model: result.model, ...result.usage },
        );
        logger.info("improve", { request_id: requestId, provider: result.provider, model: result.model, language: result.language, ms: result.duration_ms, ...result.usage });
        send(res, 200, result);
      } catch (err) {
        await run.fail(err);
        throw err;
      }
    } finally {
      inFlight--;
    }
  };

  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://agents");
    const route = `${req.method} ${url.pathname}`;
    const handle = async () => {
      switch (route) {
        case "GET /health":
        case "HEAD /health":
          return send(res, 200, {
            status: "ok",
            service: "agents",
            version: VERSION,
            uptime_s: Math.round((Date.now() - startedAt) / 1000),
            language_detector: detectorState(),
            in_flight: inFlight,
            providers: Object.fromEntries(PROVIDER_IDS.map((id) => [id, isConfigured(id, settings.providers[id])])),
          });
        case "GET /providers":
          return send(res, 200, providersBody(settings));
        case "POST /improve":
          return handleImprove(req, res);
        case "POST /judge":
          return handleJudge(req, res);
        case "POST /complete":
          return handleComplete(req, res);
      }
      const allowed = { "/health": "GET, HEAD", "/providers": "GET", "/improve": "POST", "/judge": "POST", "/complete": "POST" }[url.pathname];
      if (allowed) {
        throw new ServiceError({ status: 405, code: "method_not_allowed", message: `${req.method} is not allowed on ${url.pathname} (allowed: ${allowed})` });
      }
      throw new ServiceError({ status: 404, code: "not_found", message: `no route ${url.pathname}; try GET /health, GET /providers, POST /improve, POST /judge, POST /complete` });
    };
    handle().catch((err) => {
      if (res.headersSent) return res.destroy();
      if (err instanceof ServiceError) return sendError(res, err);
      logger.error("unhandled error", { route, err });
      sendError(res, new ServiceError({ status: 500, code: "internal_error", message: "internal error; see the agents-service log" }));
    });
  });
  server.on("clientError", answerClientError);
  server.requestTimeout = 0; // LLM calls can be long; the per-call provider timeout bounds them instead.
  server.headersTimeout = 30_000;

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? config.agentsPort, opts.host ?? config.host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const addr = server.address() as AddressInfo;
  const host = addr.family === "IPv6" ? `[${addr.address}]` : addr.address;
  const url = `http://${host}:${addr.port}`;
  logger.info("agents-service listening", { url, providers: PROVIDER_IDS.filter((id) => isConfigured(id, settings.providers[id])) });

  return {
    url,
    async close() {
      // Let requests in progress finish (LLM calls), but not forever.
      const force = setTimeout(() => server.closeAllConnections(), 10_000);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      });
      clearTimeout(force);
      await tracer.close?.();
    },
  };
}
