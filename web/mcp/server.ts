/**
 * The MCP server of one request: every tool of tools/index.ts, each call guarded the same way — the key owner's role
 * must allow the tool's action (web/middleware/key-role.ts, as the HTTP API checks it), or the call is refused with a
 * tool error naming the role it takes; tools are listed to every key that may read, refused when called. A tool's
 * answer is bounded (output.ts); whatever it throws becomes a tool error with the message the HTTP API would give.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { AuthError } from "../../core/errors.js";
import type { WebDeps } from "../deps.js";
import type { KeyPrincipal } from "../middleware/api-key-auth.js";
import { refuseUnlessRoleMay } from "../middleware/key-role.js";
import { answer, clipStrings, toolError } from "./output.js";
import { TOOLS } from "./tools/index.js";

const INSTRUCTIONS =
  "Runwatch records AI agent runs (traces of LLM calls, tool calls and steps, with cost, tokens, errors and scores). These " +
  "tools read one project: the one the API key belongs to. Start with search_runs (the explorer's filter string), open a " +
  "run with get_run and a span's payloads with get_span; wait_for_run watches for the next run matching a filter. Lists " +
  "page with limit and cursor; long strings are cut with a marker saying how much was left out.";

export function mcpServer(deps: WebDeps, key: KeyPrincipal): McpServer {
  const server = new McpServer({ name: "runwatch", title: "Runwatch", version: "0.1.0" }, { capabilities: { tools: {} }, instructions: INSTRUCTIONS });
  for (const tool of TOOLS) {
    const reads = tool.action === "read";
    server.registerTool(tool.name, {
      title: tool.title,
      description: tool.description,
      inputSchema: tool.input,
      annotations: { title: tool.title, readOnlyHint: reads, destructiveHint: false, idempotentHint: reads, openWorldHint: false },
    }, async (args: unknown, extra: { signal: AbortSignal }) => {
      try {
        try {
          refuseUnlessRoleMay(key, tool.action);
        } catch (err) {
          throw new AuthError({ code: "forbidden", message: `${tool.name} is refused: ${(err as AuthError).message}` });
        }
        const out = await tool.run(args as Record<string, unknown>, { deps, key, signal: extra.signal });
        return answer(tool.uncut ? out : clipStrings(out));
      } catch (err) {
        return toolError(err, tool.name, deps.logger);
      }
    });
  }
  return server;
}
