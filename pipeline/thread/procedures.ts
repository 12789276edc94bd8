/**
 * The SQL procedures the pipeline thread may ask its host to run (core/ports/sql.ts SqlProcedure): the
 * built-in plugins' and alerts', plus those a custom plugin module exports as `procedures`. The host looks them
 * up by name; a name it does not know is refused with a message saying where to list it.
 */
import { ALERT_PROCEDURES } from "../../alerts/index.js";
import { importConfigured } from "../../core/modules.js";
import type { SqlProcedure } from "../../core/ports/sql.js";
import { PLUGIN_PROCEDURES } from "../../plugins/index.js";

export async function hostProcedures(pluginModules: readonly string[]): Promise<Map<string, SqlProcedure<any, unknown>>> {
  const all: SqlProcedure<any, unknown>[] = [...PLUGIN_PROCEDURES, ...ALERT_PROCEDURES];
  for (const spec of pluginModules) {
    const exported = (await importConfigured(spec)).procedures;
    if (Array.isArray(exported)) all.push(...(exported as SqlProcedure<any, unknown>[]));
  }
  const byName = new Map<string, SqlProcedure<any, unknown>>();
  for (const p of all) {
    const known = byName.get(p.name);
    if (known && known !== p) throw new Error(`two SQL procedures are named ${p.name}`);
    byName.set(p.name, p);
  }
  return byName;
}
