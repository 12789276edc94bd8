// npm install @openai/agents @arizeai/openinference-instrumentation-openai-agents zod @opentelemetry/sdk-trace-node @opentelemetry/exporter-trace-otlp-proto @opentelemetry/resources
// Each run() is one run in Runwatch, named by the agent's name.
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto"; // reads OTEL_EXPORTER_OTLP_* (above)
import { resourceFromAttributes } from "@opentelemetry/resources";
import { OpenAIAgentsInstrumentation } from "@arizeai/openinference-instrumentation-openai-agents";
import * as agents from "@openai/agents";
import { z } from "zod";

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": "support-service" }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
new OpenAIAgentsInstrumentation({ tracerProvider: provider }).manuallyInstrument(agents);

const weather = agents.tool({
  name: "weather",
  description: "Today's weather in a city",
  parameters: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, forecast: "sunny" }),
});
const agent = new agents.Agent({ name: "support-bot", instructions: "Answer briefly.", model: "gpt-4o-mini", tools: [weather] }); // OPENAI_API_KEY, OPENAI_BASE_URL

try {
  const result = await agents.run(agent, process.argv[2] ?? "What is the weather in Paris?");
  console.log(result.finalOutput);
} finally {
  await provider.shutdown(); // exports what is left
}
