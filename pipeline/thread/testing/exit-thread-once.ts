/**
 * Test plugin (RUNWATCH_PLUGINS) that ends the thread it runs on (process.exit in a worker thread ends just that
 * thread) the first time it sees a marker, as a plugin with a fatal bug would; later threads find the marker
 * file and carry on.
 * - payload.exit_thread_marker: exits while processing the event.
 * - payload.exit_in_transaction_marker: exits after the batch is stored, inside an open SQL transaction.
 */
import fs from "node:fs";
import type { PluginFactory } from "../../../plugins/plugin.js";

const firstTime = (marker: unknown): marker is string => {
  if (typeof marker !== "string" || fs.existsSync(marker)) return false;
  fs.writeFileSync(marker, "exited");
  return true;
};

const factory: PluginFactory = (ctx) => ({
  name: "exit-thread-once",
  onEvent(event) {
    if (firstTime(event.payload.exit_thread_marker)) process.exit(1);
  },
  async afterCommit(batch) {
    const e = batch.events.find((x) => typeof x.payload.exit_in_transaction_marker === "string");
    if (!e) return;
    await ctx.sql.transaction(async (tx) => {
      await tx.query("SELECT 1");
      if (firstTime(e.payload.exit_in_transaction_marker)) process.exit(1);
    });
  },
});

export default factory;
