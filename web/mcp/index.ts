/**
 * The MCP server (docs/MCP.md): POST /mcp speaks the Model Context Protocol's Streamable HTTP transport to agents and
 * editors, with a project's API key.
 *
 *   mcp-api.ts     the route: the key (the read API's guard), the transport, the answer, its audit
 *   server.ts      one request's MCP server: every tool, each call guarded by the key owner's role and bounded
 *   tool.ts        what a tool is; tools/ holds one module per tool and their list (tools/index.ts)
 *   output.ts      bounded answers, errors as tool errors
 *   audit.ts       each tool call in the project's audit log
 *   run-feed.ts    the pipeline's run messages of a project, shared by the calls that wait on them
 *   run-wait.ts    waiting for the next run that matches a filter (wait_for_run)
 */
import type { WebFeature } from "../feature.js";
import { registerMcpApi } from "./mcp-api.js";

export const mcp: WebFeature = { name: "mcp", apis: [registerMcpApi] };
