/**
 * How a team tests a pipeline plugin: build events with plugins/testing.ts, run them through the plugin (alone
 * or with the built-ins it should cooperate with), and assert on the payload and the run.
 */
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../core/config.js";
import { createLogger } from "../../core/logger.js";
import { buildChain, loadPluginModule } from "../index.js";
import type { PluginContext } from "../plugin.js";
import { applyEvents, testEvent } from "../testing.js";
import { REDACTED, redactSecrets } from "./redact-secrets.js";

const openaiKey = "sk-proj-" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4";

describe("redact-secrets example plugin", () => {
  it("redacts secret-named fields and credential-looking strings anywhere in the payload", async () => {
    const e = testEvent({
      event_type: "tool_call",
      payload: {
        tool_name: "http_get",
        phase: "start",
        input_preview: `GET /v1/models with Authorization: Bearer ${openaiKey} and key AKIAABCDEFGHIJKLMNOP`,
        headers: { Authorization: "Bearer abc", Accept: "application/json" },
        config: [{ db_password: "hunter2", retries: 3, api_key: null }],
      },
    });
    await applyEvents([redactSecrets()], [e]);
    expect(e.payload.input_preview).toBe(`GET /v1/models with Authorization: Bearer ${REDACTED} and key ${REDACTED}`);
    expect(e.payload.headers).toEqual({ Authorization: REDACTED, Accept: "application/json" });
    expect(e.payload.config).toEqual([{ db_password: REDACTED, retries: 3, api_key: null }]);
    expect(e.payload.redacted).toBe(4);
    expect(JSON.stringify(e.payload)).not.toContain(openaiKey);
  });

  it("leaves clean payloads untouched", async () => {
    const clean = { node_name: "plan", phase: "end", output: { answer: "42", tokens: 12 } };
    const e = testEvent({ event_type: "step", payload: structuredClone(clean) });
    await applyEvents([redactSecrets()], [e]);
    expect(e.payload).toEqual(clean);
  });

  it("runs before preview truncation, so a key at the cut is redacted, not halved", async () => {
    const ctx = { config: loadConfig({}), logger: createLogger("error") } as PluginContext;
    const chain = await buildChain(ctx, { extra: [redactSecrets()] });
    expect(chain.map((p) => p.name).slice(0, 3)).toEqual(["redact-secrets", "status-machine", "preview-truncation"]);
    const e = testEvent({ event_type: "tool_call", payload: { tool_name: "t", phase: "end", output_preview: `${"x".repeat(485)} ${openaiKey}` } });
    const { run } = await applyEvents(chain.filter((p) => p.name !== "broadcast" && p.name !== "alert-evaluation"), [e]);
    const out = e.payload.output_preview as string;
    expect(out).toBe(`${"x".repeat(485)} ${REDACTED}`);
    expect(out).not.toContain("sk-proj");
    expect(run().event_count).toBe(1);
  });

  it("loads by module path, as RUNWATCH_PLUGINS does", async () => {
    const config = loadConfig({ RUNWATCH_PLUGINS: "./plugins/examples/redact-secrets.ts" });
    const ctx = { config, logger: createLogger("error") } as PluginContext;
    const plugin = await loadPluginModule(config.extraPlugins[0]!, ctx);
    expect(plugin.name).toBe("redact-secrets");
  });
});
