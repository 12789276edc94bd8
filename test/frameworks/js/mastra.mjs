// npm install @mastra/core @mastra/observability @mastra/otel-exporter @opentelemetry/exporter-trace-otlp-proto @ai-sdk/openai zod
// Each agent.generate is one run in Runwatch, named by the agent's name (Node.js 22.13 or later).
import { createOpenAI } from "@ai-sdk/openai";
import { Agent } from "@mastra/core/agent";
import { Mastra } from "@mastra/core/mastra";
import { createTool } from "@mastra/core/tools";
import { Observability } from "@mastra/observability";
import { OtelExporter } from "@mastra/otel-exporter";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto"; // reads OTEL_EXPORTER_OTLP_*
import { z } from "zod";

const weather = createTool({
  id: "weather",
  description: "Today's weather in a city.",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, forecast: "sunny" }),
});

const openai = createOpenAI({ baseURL: process.env.OPENAI_BASE_URL }); // OPENAI_API_KEY
const agent = new Agent({ name: "support-bot", instructions: "Answer briefly.", model: openai.chat("gpt-4o-mini"), tools: { weather } });
const mastra = new Mastra({
  agents: { supportBot: agent },
  observability: new Observability({
    configs: {
      otel: {
        serviceName: "support-service",
        // The exporter to use, which reads OTEL_EXPORTER_OTLP_*; Mastra wants a provider named beside it all the same.
        exporters: [new OtelExporter({ exporter: new OTLPTraceExporter(), provider: { custom: { endpoint: process.env.OTEL_EXPORTER_OTLP_ENDPOINT } }, signals: { logs: false } })],
      },
    },
  }),
});

try {
  const result = await mastra.getAgent("supportBot").generate(process.argv[2] ?? "What is the weather in Paris?");
  console.log(result.text);
} finally {
  await mastra.shutdown(); // exports what is left
}
