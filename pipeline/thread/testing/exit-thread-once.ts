/**
 * Test plugin (RUNWATCH_PLUGINS) that ends the thread it runs on (process.exit in a worker thread ends just that
 * thread) the first time it sees a marker, as a plugin with a fatal bug would; later threads find the marker
 * file and carry on.
 * - payload.exit_thread_marker: exits while processing the event.
 * - payload.exit_in_procedure_marker: exits after the batch is stored, while its SQL procedure (a transaction,
 *   exported below as `procedures` so the host knows it) runs on the host.
 */
import fs from "node:fs";
import { defineProcedure } from "../../../core/ports/sql.js";
import type { PluginFactory } from "../../../plugins/plugin.js";

const firstTime = (marker: unknown): marker is string => {
  if (typeof marker !== "string" || fs.existsSync(marker)) return false;
  fs.writeFileSync(marker, "exited");
  return true;
};

/** Holds a transaction open on the host for a while. */
const slowTransaction = defineProcedure("test.slow-transaction", async (sql, ms: number) => {
  await sql.transaction(async (tx) => {
    await tx.query("SELECT 1");
    await new Promise((r) => setTimeout(r, ms));
  });
});

export const procedures = [slowTransaction];

const factory: PluginFactory = (ctx) => ({
  name: "exit-thread-once",
  onEvent(event) {
    if (firstTime(event.payload.exit_thread_marker)) process.exit(1);
  },
  async afterCommit(batch) {
    const e = batch.events.find((x) => typeof x.payload.exit_in_procedure_marker === "string");
    if (!e) return;
    const running = ctx.sql.run(slowTransaction, 200);
    if (firstTime(e.payload.exit_in_procedure_marker)) {
      await new Promise((r) => setTimeout(r, 50));
      process.exit(1);
    }
    await running;
  },
});

export default factory;
