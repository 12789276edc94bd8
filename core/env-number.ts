/**
 * A number setting read from the environment, the one way every process reads one (core/config.ts, the alert and
 * agents-service settings, the evaluation and prompt-experiment workers). Unset or blank is the default; anything
 * else must be a number within the bounds given, or the process stops at start with an error naming the variable:
 * a typo never runs quietly on the default, and 0 is a value like any other (a worker that reads 0 as "off" says so
 * with `min: 0`; one that cannot work with 0 says `min: 1` and refuses it).
 */
export interface EnvNumberBounds {
  /** The smallest value taken (inclusive). */
  readonly min?: number;
  /** The largest value taken (inclusive). */
  readonly max?: number;
  /** Only whole numbers: "1.5" is refused. */
  readonly whole?: boolean;
}

export type Env = Readonly<Record<string, string | undefined>>;

/** `env[name]` as a number, `dflt` when unset or blank; an Error naming `name` when it is not a number within `bounds`. */
export function envNumber(env: Env, name: string, dflt: number, bounds: EnvNumberBounds = {}): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === "") return dflt;
  const n = Number(raw.trim());
  const { min, max, whole = false } = bounds;
  const ok = Number.isFinite(n) && (!whole || Number.isInteger(n)) && (min === undefined || n >= min) && (max === undefined || n <= max);
  if (!ok) throw new Error(`${name} must be ${describe(bounds)}, got ${JSON.stringify(raw)}`);
  return n;
}

/** "a whole number from 1 to 100", "a number of at least 0", "a number". */
function describe({ min, max, whole = false }: EnvNumberBounds): string {
  const kind = whole ? "a whole number" : "a number";
  if (min !== undefined && max !== undefined) return `${kind} from ${min} to ${max}`;
  if (min !== undefined) return `${kind} of at least ${min}`;
  if (max !== undefined) return `${kind} of at most ${max}`;
  return kind;
}
