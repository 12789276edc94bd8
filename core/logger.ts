/** Structured one-line JSON logs on stderr; level from LOG_LEVEL. */
const LEVELS = { debug: 10, info: 20, warn: 30, error: 40 } as const;
type Level = keyof typeof LEVELS;

export interface Logger {
  debug(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  error(msg: string, fields?: Record<string, unknown>): void;
  child(fields: Record<string, unknown>): Logger;
}

const serializeError = (v: unknown) =>
  v instanceof Error ? { name: v.name, message: v.message, stack: v.stack } : v;

export function createLogger(level: Level = (process.env.LOG_LEVEL as Level) ?? "info", base: Record<string, unknown> = {}): Logger {
  const min = LEVELS[level] ?? LEVELS.info;
  const write = (lvl: Level, msg: string, fields?: Record<string, unknown>) => {
    if (LEVELS[lvl] < min) return;
    const rec: Record<string, unknown> = { t: new Date().toISOString(), level: lvl, msg, ...base };
    if (fields) for (const [k, v] of Object.entries(fields)) rec[k] = serializeError(v);
    process.stderr.write(JSON.stringify(rec) + "\n");
  };
  return {
    debug: (m, f) => write("debug", m, f),
    info: (m, f) => write("info", m, f),
    warn: (m, f) => write("warn", m, f),
    error: (m, f) => write("error", m, f),
    child: (fields) => createLogger(level, { ...base, ...fields }),
  };
}
