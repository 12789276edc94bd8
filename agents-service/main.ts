/** Runs agents-service alone: `node --import tsx agents-service/main.ts` (port RUNWATCH_AGENTS_PORT, default 8081). */
import { loadConfig } from "../core/config.js";
import { startAgentsService } from "./server.js";

const service = await startAgentsService(loadConfig());
console.log(`agents-service listening on ${service.url}`);
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, () => void service.close().then(() => process.exit(0)));
}
