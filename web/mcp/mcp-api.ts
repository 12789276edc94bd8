/**
 * The MCP endpoint (docs/MCP.md), Streamable HTTP without sessions: every POST /mcp builds a server and a transport
 * for its own messages and closes them once answered, so any web process answers any request and nothing is kept
 * between requests. Answers are JSON (the transport's JSON mode), not an event stream: no tool streams.
 *
 *   POST   /mcp   JSON-RPC messages → their answers; the key is checked first, as for the read API (401 without a
 *                 valid key, 403 for a key that may only send), before the body is read
 *   GET    /mcp   405: a server without sessions offers no stream of its own messages
 *   DELETE /mcp   405: there is no session to end
 */
import type Router from "@koa/router";
import type { Context } from "koa";
import { keyPrincipalOf, readAuthorizer } from "../api/read-api.js";
import type { WebDeps } from "../deps.js";
import { HttpProblem } from "../http-errors.js";
import { readJsonBody } from "../json-body.js";
import type { ApiKeyAuth } from "../middleware/api-key-auth.js";
import { mountApi } from "../route-table.js";
import { auditToolCalls, toolCallsOf } from "./audit.js";

/** Tool arguments are small; an expected output given to add_to_dataset is the largest. */
const BODY_LIMIT = 1024 * 1024;
/** JSON-RPC messages one request may carry (a batch, from a client of an older protocol version). */
const MAX_MESSAGES = 10;

/**
 * The SDK, zod and the tools, loaded by the first request: a web process that serves no MCP client does not carry
 * them (about 25 MiB, and a second of its start on a busy machine).
 */
type Loaded = [typeof import("./server.js"), typeof import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js")];
let loaded: Promise<Loaded> | undefined;
function load(): Promise<Loaded> {
  loaded ??= Promise.all([import("./server.js"), import("@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js")]);
  loaded.catch(() => {
    loaded = undefined;
  });
  return loaded;
}

export function registerMcpApi(router: Router, deps: WebDeps, auth: ApiKeyAuth): void {
  mountApi(router, deps, readAuthorizer(deps, auth), {
    read: { "POST /mcp": postMcp, "GET /mcp": notAllowed, "DELETE /mcp": notAllowed },
  });
}

function notAllowed(ctx: Context): void {
  ctx.set("Allow", "POST");
  throw new HttpProblem(405, "method_not_allowed", `${ctx.method} is not allowed on /mcp: this MCP server keeps no sessions, so it has no stream to open or end; POST JSON-RPC messages`);
}

async function postMcp(ctx: Context, deps: WebDeps): Promise<void> {
  const key = keyPrincipalOf(ctx);
  const body = await readJsonBody(ctx, BODY_LIMIT, { unstorable: "repair" });
  if (Array.isArray(body) && body.length > MAX_MESSAGES) {
    throw new HttpProblem(400, "too_many_messages", `a request may carry at most ${MAX_MESSAGES} JSON-RPC messages`);
  }
  const calls = toolCallsOf(body);
  const [{ mcpServer }, { WebStandardStreamableHTTPServerTransport }] = await load();
  const server = mcpServer(deps, key);
  const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  // The client gone before the answer: closing the server aborts its calls (a wait_for_run ends at once).
  const gone = new Promise<undefined>((resolve) => ctx.res.once("close", () => resolve(undefined)));
  try {
    await server.connect(transport);
    const response = await Promise.race([transport.handleRequest(webRequest(ctx), { parsedBody: body }), gone]);
    if (!response) {
      auditToolCalls(deps, key, calls, undefined);
      return;
    }
    const text = await response.text();
    auditToolCalls(deps, key, calls, text);
    ctx.status = response.status;
    response.headers.forEach((value, name) => {
      if (name !== "content-length") ctx.set(name, value);
    });
    ctx.set("Cache-Control", "no-store");
    ctx.body = text;
  } finally {
    await server.close().catch(() => {});
  }
}

/** The request as the transport reads it (a Fetch API Request): its headers, the body given apart as already read. */
function webRequest(ctx: Context): Request {
  const headers = new Headers();
  for (const [name, value] of Object.entries(ctx.req.headers)) {
    if (value === undefined) continue;
    for (const v of Array.isArray(value) ? value : [value]) headers.append(name, v);
  }
  return new Request(new URL(ctx.originalUrl, "http://mcp.invalid"), { method: "POST", headers });
}
