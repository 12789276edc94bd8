// npm install ai @ai-sdk/openai @ai-sdk/otel zod @opentelemetry/sdk-trace-node @opentelemetry/exporter-trace-otlp-proto @opentelemetry/resources
// AI SDK 7: each generateText / streamText call is one run, its agent the functionId.
import { BatchSpanProcessor, NodeTracerProvider } from "@opentelemetry/sdk-trace-node";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-proto"; // reads OTEL_EXPORTER_OTLP_* (above)
import { resourceFromAttributes } from "@opentelemetry/resources";
import { createOpenAI } from "@ai-sdk/openai";
import { OpenTelemetry } from "@ai-sdk/otel";
import { generateText, registerTelemetry, stepCountIs, streamText, tool } from "ai";
import { z } from "zod";

const provider = new NodeTracerProvider({
  resource: resourceFromAttributes({ "service.name": "support-service" }),
  spanProcessors: [new BatchSpanProcessor(new OTLPTraceExporter())],
});
provider.register();
registerTelemetry(new OpenTelemetry());

const openai = createOpenAI(); // OPENAI_API_KEY, OPENAI_BASE_URL
const weather = tool({
  description: "Today's weather in a city",
  inputSchema: z.object({ city: z.string() }),
  execute: async ({ city }) => ({ city, forecast: "sunny" }),
});
const call = {
  model: openai.chat("gpt-4o-mini"),
  prompt: process.argv[2] ?? "What is the weather in Paris?",
  tools: { weather },
  stopWhen: stepCountIs(3),
  telemetry: { functionId: "support-bot" },
};
try {
  const { text } = await generateText(call);
  console.log(text);
  const stream = streamText(call);
  for await (const chunk of stream.textStream) process.stdout.write(chunk);
} finally {
  await provider.shutdown(); // exports what is left
}
