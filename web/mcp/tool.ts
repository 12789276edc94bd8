/**
 * What an MCP tool is: its name, a description written for the model that calls it, its arguments as a zod shape
 * (the SDK turns it into the JSON Schema a client lists, and checks every call against it), the action its key's owner
 * must be allowed in the project (core/access/roles.ts: the same action the HTTP API's route for the same thing
 * names), and its body. A tool is one module in tools/ and one line in tools/index.ts.
 */
import type { z } from "zod";
import type { Action } from "../../core/access/roles.js";
import type { WebDeps } from "../deps.js";
import type { KeyPrincipal } from "../middleware/api-key-auth.js";

export interface ToolContext {
  readonly deps: WebDeps;
  /** The key the request came with: its project is the only one a tool reads or writes. */
  readonly key: KeyPrincipal;
  /** Aborted when the client goes away or cancels the call. */
  readonly signal: AbortSignal;
}

export interface McpTool<S extends z.ZodRawShape = z.ZodRawShape> {
  readonly name: string;
  readonly title: string;
  /** For the model: what the tool answers, when to use it, how its lists page. */
  readonly description: string;
  readonly input: S;
  /** What the key owner's role must allow: `read` for a read; a write names its HTTP route's action. */
  readonly action: Action;
  /** Its answer's strings are left whole: the tool bounds them itself (a window of a long text). */
  readonly uncut?: true;
  /** The answer (sent as JSON text, its long strings cut: output.ts); a core error becomes a tool error. */
  run(args: z.infer<z.ZodObject<S>>, ctx: ToolContext): Promise<unknown>;
}

/** A tool, its argument types inferred from its shape. */
export const defineTool = <S extends z.ZodRawShape>(tool: McpTool<S>): McpTool<S> => tool;
