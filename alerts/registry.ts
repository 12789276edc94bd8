/**
 * The alert triggers a process knows, by trigger_type: the built-ins (alerts/triggers/) plus a team's own,
 * registered the way plugins are — passed in code (`triggers` of startPipeline / startWeb) or named by module
 * path in RUNWATCH_ALERT_TRIGGERS. Web (the /alerts form and its validation) and the pipeline (evaluation, cooldown
 * defaults) each build one from the same configuration, so both know the same triggers.
 */
import { importConfigured } from "../core/modules.js";
import { defineTrigger, type TriggerDefinition } from "./triggers/define.js";
import { BUILTIN_TRIGGERS } from "./triggers/index.js";

export class TriggerRegistry {
  private readonly byType = new Map<string, TriggerDefinition>();

  constructor(triggers: readonly TriggerDefinition[] = BUILTIN_TRIGGERS) {
    for (const t of triggers) this.register(t);
  }

  /** Adds a trigger; a second trigger of the same type is a configuration mistake and throws. */
  register(def: TriggerDefinition): this {
    if (this.byType.has(def.type)) throw new Error(`two alert triggers are of type ${def.type}`);
    this.byType.set(def.type, defineTrigger(def));
    return this;
  }

  get(type: string): TriggerDefinition | undefined {
    return this.byType.get(type);
  }

  /** Every trigger, built-ins first, in registration order (the order /alerts offers them). */
  all(): TriggerDefinition[] {
    return [...this.byType.values()];
  }

  types(): string[] {
    return [...this.byType.keys()];
  }

  /** Trigger types evaluated on a timer. */
  sweepTypes(): string[] {
    return this.all().filter((t) => t.sweep).map((t) => t.type);
  }
}

/**
 * Imports one trigger module: it must export a TriggerDefinition (defineTrigger(...)) as default or `trigger`,
 * or a list of them as `triggers`.
 */
export async function loadTriggerModule(spec: string): Promise<TriggerDefinition[]> {
  const mod = await importConfigured(spec);
  const found = mod.triggers ?? mod.trigger ?? mod.default;
  const list = Array.isArray(found) ? found : [found];
  if (list.length === 0 || list.some((t) => typeof t !== "object" || t === null || typeof (t as TriggerDefinition).type !== "string")) {
    throw new Error(`alert trigger module ${spec} must export a trigger (defineTrigger({ type, ... })) as default or \`trigger\`, or a list as \`triggers\``);
  }
  return list as TriggerDefinition[];
}

/** The built-ins, then `extra` (from code), then the modules named in RUNWATCH_ALERT_TRIGGERS. */
export async function loadTriggers(config: { readonly alertTriggers: readonly string[] }, extra: readonly TriggerDefinition[] = []): Promise<TriggerRegistry> {
  const registry = new TriggerRegistry();
  for (const t of extra) registry.register(t);
  for (const spec of config.alertTriggers) for (const t of await loadTriggerModule(spec)) registry.register(t);
  return registry;
}
